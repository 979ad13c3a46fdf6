package config

// Broker is a broker's configuration: one field per key of BrokerKeys
// (the comment names the key). Keys whose Kafka default is null are pointer
// fields (nil = unset) or empty strings; the Raw... fields hold such keys,
// and an accessor method resolves the effective value the way Kafka does
// (LogRetentionMs, LogRollMs, Listeners, ...).
//
// A Broker is built by NewBroker or Defaults and is not modified afterwards
// by this package; it is safe for concurrent reads.
type Broker struct {
	BrokerID                                 int32    // broker.id
	BrokerIDGenerationEnable                 bool     // broker.id.generation.enable
	ReservedBrokerMaxID                      int32    // reserved.broker.max.id
	BrokerRack                               string   // broker.rack
	RawListeners                             string   // listeners
	RawAdvertisedListeners                   string   // advertised.listeners
	ListenerSecurityProtocolMap              string   // listener.security.protocol.map
	InterBrokerListenerName                  string   // inter.broker.listener.name
	ControlPlaneListenerName                 string   // control.plane.listener.name
	SecurityInterBrokerProtocol              string   // security.inter.broker.protocol
	HostName                                 string   // host.name
	Port                                     int32    // port
	RawZookeeperConnect                      string   // zookeeper.connect
	ZookeeperSessionTimeoutMs                int32    // zookeeper.session.timeout.ms
	RawZookeeperConnectionTimeoutMs          *int32   // zookeeper.connection.timeout.ms
	ZookeeperMaxInFlightRequests             int32    // zookeeper.max.in.flight.requests
	ZookeeperSetACL                          bool     // zookeeper.set.acl
	ZookeeperSyncTimeMs                      int32    // zookeeper.sync.time.ms
	AuthorizerClassName                      string   // authorizer.class.name
	SuperUsers                               string   // super.users
	AllowEveryoneIfNoACLFound                bool     // allow.everyone.if.no.acl.found
	InterBrokerProtocolVersion               string   // inter.broker.protocol.version
	ControllerSocketTimeoutMs                int32    // controller.socket.timeout.ms
	SocketRequestMaxBytes                    int32    // socket.request.max.bytes
	SocketSendBufferBytes                    int32    // socket.send.buffer.bytes
	SocketReceiveBufferBytes                 int32    // socket.receive.buffer.bytes
	ConnectionsMaxIdleMs                     int64    // connections.max.idle.ms
	MaxConnectionsPerIP                      int32    // max.connections.per.ip
	RequestTimeoutMs                         int32    // request.timeout.ms
	NumNetworkThreads                        int32    // num.network.threads
	NumIOThreads                             int32    // num.io.threads
	BackgroundThreads                        int32    // background.threads
	QueuedMaxRequests                        int32    // queued.max.requests
	RawLogDirs                               string   // log.dirs
	LogDir                                   string   // log.dir
	NumPartitions                            int32    // num.partitions
	DefaultReplicationFactor                 int32    // default.replication.factor
	AutoCreateTopicsEnable                   bool     // auto.create.topics.enable
	DeleteTopicEnable                        bool     // delete.topic.enable
	MessageMaxBytes                          int32    // message.max.bytes
	CompressionType                          string   // compression.type
	LogSegmentBytes                          int32    // log.segment.bytes
	RawLogRollMs                             *int64   // log.roll.ms
	LogRollHours                             int32    // log.roll.hours
	RawLogRollJitterMs                       *int64   // log.roll.jitter.ms
	LogRollJitterHours                       int32    // log.roll.jitter.hours
	RawLogRetentionMs                        *int64   // log.retention.ms
	RawLogRetentionMinutes                   *int32   // log.retention.minutes
	LogRetentionHours                        int32    // log.retention.hours
	LogRetentionBytes                        int64    // log.retention.bytes
	LogRetentionCheckIntervalMs              int64    // log.retention.check.interval.ms
	LogIndexSizeMaxBytes                     int32    // log.index.size.max.bytes
	LogIndexIntervalBytes                    int32    // log.index.interval.bytes
	LogFlushIntervalMessages                 int64    // log.flush.interval.messages
	RawLogFlushIntervalMs                    *int64   // log.flush.interval.ms
	LogFlushSchedulerIntervalMs              int64    // log.flush.scheduler.interval.ms
	LogFlushOffsetCheckpointIntervalMs       int32    // log.flush.offset.checkpoint.interval.ms
	LogFlushStartOffsetCheckpointIntervalMs  int32    // log.flush.start.offset.checkpoint.interval.ms
	LogSegmentDeleteDelayMs                  int64    // log.segment.delete.delay.ms
	LogPreallocate                           bool     // log.preallocate
	LogMessageFormatVersion                  string   // log.message.format.version
	LogMessageTimestampType                  string   // log.message.timestamp.type
	LogMessageTimestampDifferenceMaxMs       int64    // log.message.timestamp.difference.max.ms
	LogMessageDownconversionEnable           bool     // log.message.downconversion.enable
	NumRecoveryThreadsPerDataDir             int32    // num.recovery.threads.per.data.dir
	LogCleanupPolicy                         []string // log.cleanup.policy
	LogCleanerEnable                         bool     // log.cleaner.enable
	LogCleanerThreads                        int32    // log.cleaner.threads
	LogCleanerDedupeBufferSize               int64    // log.cleaner.dedupe.buffer.size
	LogCleanerIOBufferSize                   int32    // log.cleaner.io.buffer.size
	LogCleanerIOBufferLoadFactor             float64  // log.cleaner.io.buffer.load.factor
	LogCleanerIOMaxBytesPerSecond            float64  // log.cleaner.io.max.bytes.per.second
	LogCleanerBackoffMs                      int64    // log.cleaner.backoff.ms
	LogCleanerMinCleanableRatio              float64  // log.cleaner.min.cleanable.ratio
	LogCleanerDeleteRetentionMs              int64    // log.cleaner.delete.retention.ms
	LogCleanerMinCompactionLagMs             int64    // log.cleaner.min.compaction.lag.ms
	LogCleanerMaxCompactionLagMs             int64    // log.cleaner.max.compaction.lag.ms
	MinInsyncReplicas                        int32    // min.insync.replicas
	UncleanLeaderElectionEnable              bool     // unclean.leader.election.enable
	ReplicaLagTimeMaxMs                      int64    // replica.lag.time.max.ms
	ReplicaFetchMaxBytes                     int32    // replica.fetch.max.bytes
	ReplicaFetchResponseMaxBytes             int32    // replica.fetch.response.max.bytes
	ReplicaFetchWaitMaxMs                    int32    // replica.fetch.wait.max.ms
	ReplicaFetchMinBytes                     int32    // replica.fetch.min.bytes
	ReplicaFetchBackoffMs                    int32    // replica.fetch.backoff.ms
	ReplicaSocketTimeoutMs                   int32    // replica.socket.timeout.ms
	ReplicaSocketReceiveBufferBytes          int32    // replica.socket.receive.buffer.bytes
	NumReplicaFetchers                       int32    // num.replica.fetchers
	MaxIncrementalFetchSessionCacheSlots     int32    // max.incremental.fetch.session.cache.slots
	ReplicaHighWatermarkCheckpointIntervalMs int64    // replica.high.watermark.checkpoint.interval.ms
	AutoLeaderRebalanceEnable                bool     // auto.leader.rebalance.enable
	LeaderImbalanceCheckIntervalSeconds      int64    // leader.imbalance.check.interval.seconds
	LeaderImbalancePerBrokerPercentage       int32    // leader.imbalance.per.broker.percentage
	ControlledShutdownEnable                 bool     // controlled.shutdown.enable
	ControlledShutdownMaxRetries             int32    // controlled.shutdown.max.retries
	ControlledShutdownRetryBackoffMs         int64    // controlled.shutdown.retry.backoff.ms
	OffsetsTopicNumPartitions                int32    // offsets.topic.num.partitions
	OffsetsTopicReplicationFactor            int16    // offsets.topic.replication.factor
	OffsetsTopicSegmentBytes                 int32    // offsets.topic.segment.bytes
	OffsetsTopicCompressionCodec             int32    // offsets.topic.compression.codec
	OffsetsRetentionMinutes                  int32    // offsets.retention.minutes
	OffsetsRetentionCheckIntervalMs          int64    // offsets.retention.check.interval.ms
	OffsetsCommitTimeoutMs                   int32    // offsets.commit.timeout.ms
	OffsetsCommitRequiredAcks                int16    // offsets.commit.required.acks
	OffsetsLoadBufferSize                    int32    // offsets.load.buffer.size
	OffsetMetadataMaxBytes                   int32    // offset.metadata.max.bytes
	GroupInitialRebalanceDelayMs             int32    // group.initial.rebalance.delay.ms
	GroupMinSessionTimeoutMs                 int32    // group.min.session.timeout.ms
	GroupMaxSessionTimeoutMs                 int32    // group.max.session.timeout.ms
	GroupMaxSize                             int32    // group.max.size
	QuotaWindowNum                           int32    // quota.window.num
	QuotaWindowSizeSeconds                   int32    // quota.window.size.seconds
	QuotaProducerDefault                     int64    // quota.producer.default
	QuotaConsumerDefault                     int64    // quota.consumer.default
	ControllerQuotaWindowNum                 int32    // controller.quota.window.num
	ControllerQuotaWindowSizeSeconds         int32    // controller.quota.window.size.seconds
	TransactionStateLogNumPartitions         int32    // transaction.state.log.num.partitions
	TransactionStateLogReplicationFactor     int16    // transaction.state.log.replication.factor
	TransactionStateLogMinISR                int32    // transaction.state.log.min.isr
	TransactionStateLogSegmentBytes          int32    // transaction.state.log.segment.bytes
	TransactionStateLogLoadBufferSize        int32    // transaction.state.log.load.buffer.size
	TransactionMaxTimeoutMs                  int32    // transaction.max.timeout.ms
	TransactionalIDExpirationMs              int32    // transactional.id.expiration.ms
	TransactionPartitionVerificationEnable   bool     // transaction.partition.verification.enable
	// TransactionAbortTimedOutTransactionCleanupIntervalMs is transaction.abort.timed.out.transaction.cleanup.interval.ms.
	TransactionAbortTimedOutTransactionCleanupIntervalMs int32
	// TransactionRemoveExpiredTransactionCleanupIntervalMs is transaction.remove.expired.transaction.cleanup.interval.ms.
	TransactionRemoveExpiredTransactionCleanupIntervalMs int32
	MetricsListener                                      string   // metrics.listener (Samsa)
	LogFormat                                            string   // log.format (Samsa)
	LogLevel                                             string   // log.level (Samsa)
	GroupRebalanceStormCount                             int32    // samsa.group.rebalance.storm.count (Samsa)
	GroupRebalanceStormWindowMs                          int64    // samsa.group.rebalance.storm.window.ms (Samsa)
	GroupRebalanceHistorySize                            int32    // samsa.group.rebalance.history.size (Samsa)
	MaxConnectionsPerIPOverrides                         string   // max.connections.per.ip.overrides
	MaxConnections                                       int32    // max.connections
	MaxConnectionCreationRate                            int32    // max.connection.creation.rate
	JavaSecurityAuthLoginConfig                          string   // java.security.auth.login.config (Samsa)
	SSLKeystoreType                                      string   // ssl.keystore.type
	SSLKeystoreLocation                                  string   // ssl.keystore.location
	SSLKeystorePassword                                  string   // ssl.keystore.password
	SSLKeyPassword                                       string   // ssl.key.password
	SSLKeystoreKey                                       string   // ssl.keystore.key
	SSLKeystoreCertificateChain                          string   // ssl.keystore.certificate.chain
	SSLTruststoreType                                    string   // ssl.truststore.type
	SSLTruststoreLocation                                string   // ssl.truststore.location
	SSLTruststorePassword                                string   // ssl.truststore.password
	SSLTruststoreCertificates                            string   // ssl.truststore.certificates
	SSLClientAuth                                        string   // ssl.client.auth
	SSLEnabledProtocols                                  []string // ssl.enabled.protocols
	SSLProtocol                                          string   // ssl.protocol
	SSLCipherSuites                                      []string // ssl.cipher.suites
	SSLEndpointIdentificationAlgorithm                   string   // ssl.endpoint.identification.algorithm
	SSLPrincipalMappingRules                             string   // ssl.principal.mapping.rules
	SASLEnabledMechanisms                                []string // sasl.enabled.mechanisms
	SASLMechanismInterBrokerProtocol                     string   // sasl.mechanism.inter.broker.protocol
	SASLJaasConfig                                       string   // sasl.jaas.config
	PasswordEncoderSecret                                string   // password.encoder.secret
	PasswordEncoderOldSecret                             string   // password.encoder.old.secret
	PasswordEncoderKeyFactoryAlgorithm                   string   // password.encoder.keyfactory.algorithm
	PasswordEncoderCipherAlgorithm                       string   // password.encoder.cipher.algorithm
	PasswordEncoderKeyLength                             int32    // password.encoder.key.length
	PasswordEncoderIterations                            int32    // password.encoder.iterations
	SASLServerMaxReceiveSize                             int32    // sasl.server.max.receive.size
	ConnectionFailedAuthenticationDelayMs                int32    // connection.failed.authentication.delay.ms
	ConnectionsMaxReauthMs                               int64    // connections.max.reauth.ms
	ZookeeperSSLClientEnable                             bool     // zookeeper.ssl.client.enable
	ZookeeperClientCnxnSocket                            string   // zookeeper.clientCnxnSocket
	ZookeeperSSLKeystoreLocation                         string   // zookeeper.ssl.keystore.location
	ZookeeperSSLKeystorePassword                         string   // zookeeper.ssl.keystore.password
	ZookeeperSSLKeystoreType                             string   // zookeeper.ssl.keystore.type
	ZookeeperSSLTruststoreLocation                       string   // zookeeper.ssl.truststore.location
	ZookeeperSSLTruststorePassword                       string   // zookeeper.ssl.truststore.password
	ZookeeperSSLTruststoreType                           string   // zookeeper.ssl.truststore.type
	ZookeeperSSLProtocol                                 string   // zookeeper.ssl.protocol
	ZookeeperSSLEnabledProtocols                         []string // zookeeper.ssl.enabled.protocols
	ZookeeperSSLCipherSuites                             []string // zookeeper.ssl.cipher.suites
	ZookeeperSSLEndpointIdentificationAlgorithm          string   // zookeeper.ssl.endpoint.identification.algorithm
	ZookeeperSSLCrlEnable                                bool     // zookeeper.ssl.crl.enable
	ZookeeperSSLOcspEnable                               bool     // zookeeper.ssl.ocsp.enable

	// supplied holds the raw key=value pairs given (properties file plus
	// overrides), including unknown keys; immutable after NewBroker.
	supplied map[string]string
}
