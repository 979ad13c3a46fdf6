package config

// Kafka's Long.MAX_VALUE and Double.MAX_VALUE defaults, in properties syntax.
const (
	longMax   = "9223372036854775807"
	intMax    = "2147483647"
	doubleMax = "1.7976931348623157E308"
)

// noEffect is appended to the doc of keys Samsa accepts for compatibility
// but does not use: its concurrency model has no thread pools to size.
const noEffect = " Accepted for compatibility; has no effect in Samsa."

// samsaOnly opens the doc of keys Kafka does not have.
const samsaOnly = "Samsa-specific (not a Kafka key). "

// BrokerKeys is the table of broker keys (Kafka 2.8 KafkaConfig) in the
// order of docs/configuration.md. Defaults, parsing, validation and the
// generated documentation all come from it. Callers must not modify it.
var BrokerKeys = []Key{
	// Identity, listeners, ZooKeeper.
	{Name: "broker.id", Field: "BrokerID", Type: TypeInt, Default: "-1", Valid: atLeast(-1), Doc: "The broker's id; -1 generates one from ZooKeeper (/brokers/seqid) above reserved.broker.max.id. A configured id must match meta.properties."},
	{Name: "broker.id.generation.enable", Field: "BrokerIDGenerationEnable", Type: TypeBool, Default: "true", Doc: "Allow broker.id=-1 to generate an id from ZooKeeper."},
	{Name: "reserved.broker.max.id", Field: "ReservedBrokerMaxID", Type: TypeInt, Default: "1000", Valid: atLeast(0), Doc: "Largest id that may be configured; generated ids start above it."},
	{Name: "broker.rack", Field: "BrokerRack", Type: TypeString, Null: true, Doc: "Rack of the broker, written to its registration and used by rack-aware assignment."},
	{Name: "listeners", Field: "RawListeners", Type: TypeString, Null: true, Dynamic: true, Doc: "Comma list of NAME://host:port to listen on; unset means PLAINTEXT://host.name:port. Host 0.0.0.0 binds all interfaces, an empty host the default one."},
	{Name: "advertised.listeners", Field: "RawAdvertisedListeners", Type: TypeString, Null: true, Dynamic: true, Doc: "Listeners published in the broker's ZooKeeper registration for clients; unset means listeners, with an empty or 0.0.0.0 host replaced by the machine's address (Kafka 2.8 refuses 0.0.0.0 there). 0.0.0.0 is not allowed here."},
	{Name: "listener.security.protocol.map", Field: "ListenerSecurityProtocolMap", Type: TypeString, Default: "PLAINTEXT:PLAINTEXT,SSL:SSL,SASL_PLAINTEXT:SASL_PLAINTEXT,SASL_SSL:SASL_SSL", Dynamic: true, Doc: "NAME:PROTOCOL pairs giving each listener's security protocol. SSL, SASL_PLAINTEXT and SASL_SSL listeners need the ssl.* and sasl.* keys (docs/security.md)."},
	{Name: "inter.broker.listener.name", Field: "InterBrokerListenerName", Type: TypeString, Null: true, Doc: "Listener brokers use to talk to each other; unset means the listener named after security.inter.broker.protocol."},
	{Name: "control.plane.listener.name", Field: "ControlPlaneListenerName", Type: TypeString, Null: true, Doc: "Listener dedicated to the controller's requests (LeaderAndIsr, UpdateMetadata, StopReplica; KIP-291): the controller connects to it when set. Must be in advertised.listeners and differ from the inter-broker listener; unset means the inter-broker listener."},
	{Name: "security.inter.broker.protocol", Field: "SecurityInterBrokerProtocol", Type: TypeString, Default: "PLAINTEXT", Valid: oneOf("PLAINTEXT", "SSL", "SASL_PLAINTEXT", "SASL_SSL"), Doc: "Security protocol between brokers; may not be set together with inter.broker.listener.name."},
	{Name: "host.name", Field: "HostName", Type: TypeString, Default: "", Doc: "Deprecated: host of the default listener when listeners is unset."},
	{Name: "port", Field: "Port", Type: TypeInt, Default: "9092", Valid: between(0, 65535), Doc: "Deprecated: port of the default listener when listeners is unset."},
	{Name: "zookeeper.connect", Field: "RawZookeeperConnect", Type: TypeString, Null: true, Required: true, Doc: "ZooKeeper connection string host:port[,host:port...][/chroot]; the chroot is created if missing."},
	{Name: "zookeeper.session.timeout.ms", Field: "ZookeeperSessionTimeoutMs", Type: TypeInt, Default: "18000", Valid: atLeast(1), Doc: "ZooKeeper session timeout."},
	{Name: "zookeeper.connection.timeout.ms", Field: "RawZookeeperConnectionTimeoutMs", Type: TypeInt, Null: true, Valid: atLeast(1), Doc: "Time to wait for the ZooKeeper connection; unset means zookeeper.session.timeout.ms."},
	{Name: "zookeeper.max.in.flight.requests", Field: "ZookeeperMaxInFlightRequests", Type: TypeInt, Default: "10", Valid: atLeast(1), Doc: "Unacknowledged ZooKeeper requests a broker pipelines."},
	{Name: "zookeeper.set.acl", Field: "ZookeeperSetACL", Type: TypeBool, Default: "false", Doc: "Create znodes with Kafka's secure ACLs: only the broker's authenticated ZooKeeper identity may change them, world may read all but /config/users, /config/brokers and /delegation_token/tokens; /consumers stays open. Needs an authenticated ZooKeeper session, else the broker refuses to start."},
	{Name: "zookeeper.sync.time.ms", Field: "ZookeeperSyncTimeMs", Type: TypeInt, Default: "2000", Doc: "Legacy ZooKeeper follower lag." + noEffect},
	{Name: "inter.broker.protocol.version", Field: "InterBrokerProtocolVersion", Type: TypeString, Default: "2.8-IV1", Doc: "Inter-broker protocol version; Samsa always speaks 2.8."},
	{Name: "controller.socket.timeout.ms", Field: "ControllerSocketTimeoutMs", Type: TypeInt, Default: "30000", Doc: "Socket timeout of the controller's channels to brokers."},

	// Network and threads.
	{Name: "socket.request.max.bytes", Field: "SocketRequestMaxBytes", Type: TypeInt, Default: "104857600", Valid: atLeast(1), Doc: "Largest request frame a broker reads; larger frames close the connection."},
	{Name: "socket.send.buffer.bytes", Field: "SocketSendBufferBytes", Type: TypeInt, Default: "102400", Doc: "SO_SNDBUF of client sockets; -1 keeps the OS default."},
	{Name: "socket.receive.buffer.bytes", Field: "SocketReceiveBufferBytes", Type: TypeInt, Default: "102400", Doc: "SO_RCVBUF of client sockets; -1 keeps the OS default."},
	{Name: "connections.max.idle.ms", Field: "ConnectionsMaxIdleMs", Type: TypeLong, Default: "600000", Doc: "Idle connections are closed after this long."},
	{Name: "max.connections.per.ip", Field: "MaxConnectionsPerIP", Type: TypeInt, Default: intMax, Valid: atLeast(0), Dynamic: true, Doc: "Connections allowed from one IP address; more are closed at once. 0 is allowed only with max.connections.per.ip.overrides. Applied without restart to new connections."},
	{Name: "max.connections.per.ip.overrides", Field: "MaxConnectionsPerIPOverrides", Type: TypeString, Default: "", Dynamic: true, Doc: "Per-address exceptions to max.connections.per.ip: comma list of host-or-ip:count. Applied without restart to new connections."},
	{Name: "max.connections", Field: "MaxConnections", Type: TypeInt, Default: intMax, Valid: atLeast(0), Dynamic: true, Doc: "Connections the broker accepts in total (listener.name.<l>.max.connections per listener); above it the listeners other than the inter-broker one (when there are others) stop accepting until a connection closes. An inter-broker connection above it, or lowering it below the open count, closes the least recently active other connections. Applied without restart."},
	{Name: "max.connection.creation.rate", Field: "MaxConnectionCreationRate", Type: TypeInt, Default: intMax, Valid: atLeast(0), Dynamic: true, Doc: "New connections accepted per second by the broker (KIP-612; listener.name.<l>.max.connection.creation.rate per listener); the inter-broker listener is held only to its own value. Excess connections wait to be accepted. Applied without restart from the next accept."},
	{Name: "request.timeout.ms", Field: "RequestTimeoutMs", Type: TypeInt, Default: "30000", Valid: atLeast(0), Doc: "Timeout of the broker's own client requests."},
	{Name: "num.network.threads", Field: "NumNetworkThreads", Type: TypeInt, Default: "3", Valid: atLeast(1), Dynamic: true, Doc: "Network threads in Kafka; Samsa runs a goroutine per connection." + noEffect},
	{Name: "num.io.threads", Field: "NumIOThreads", Type: TypeInt, Default: "8", Valid: atLeast(1), Dynamic: true, Doc: "Request handler threads in Kafka; Samsa handles requests on the connection's goroutine." + noEffect},
	{Name: "background.threads", Field: "BackgroundThreads", Type: TypeInt, Default: "10", Valid: atLeast(1), Dynamic: true, Doc: "Background task threads in Kafka." + noEffect},
	{Name: "queued.max.requests", Field: "QueuedMaxRequests", Type: TypeInt, Default: "500", Valid: atLeast(1), Doc: "Request queue length in Kafka; Samsa has no request queue." + noEffect},

	// Log, retention, flush.
	{Name: "log.dirs", Field: "RawLogDirs", Type: TypeString, Null: true, Doc: "Comma list of data directories; takes precedence over log.dir."},
	{Name: "log.dir", Field: "LogDir", Type: TypeString, Default: "/tmp/kafka-logs", Doc: "Data directory used when log.dirs is unset."},
	{Name: "num.partitions", Field: "NumPartitions", Type: TypeInt, Default: "1", Valid: atLeast(1), Doc: "Partitions of auto-created topics and of CreateTopics without a count."},
	{Name: "default.replication.factor", Field: "DefaultReplicationFactor", Type: TypeInt, Default: "1", Valid: atLeast(1), Doc: "Replication factor of auto-created topics and of CreateTopics without one."},
	{Name: "auto.create.topics.enable", Field: "AutoCreateTopicsEnable", Type: TypeBool, Default: "true", Doc: "Create a topic when a client asks for metadata of an unknown one."},
	{Name: "delete.topic.enable", Field: "DeleteTopicEnable", Type: TypeBool, Default: "true", Doc: "Allow topic deletion; when false deletion markers are removed and ignored."},
	{Name: "message.max.bytes", Field: "MessageMaxBytes", Type: TypeInt, Default: "1048588", Valid: atLeast(0), Dynamic: true, Doc: "Largest record batch (after compression) the broker accepts."},
	{Name: "compression.type", Field: "CompressionType", Type: TypeString, Default: "producer", Valid: oneOf("uncompressed", "zstd", "lz4", "snappy", "gzip", "producer"), Dynamic: true, Doc: "Compression of stored batches; producer keeps the producer's codec."},
	{Name: "log.segment.bytes", Field: "LogSegmentBytes", Type: TypeInt, Default: "1073741824", Valid: atLeast(14), Dynamic: true, Doc: "Size at which a segment rolls."},
	{Name: "log.roll.ms", Field: "RawLogRollMs", Type: TypeLong, Null: true, Valid: atLeast(1), Dynamic: true, Doc: "Age at which a segment rolls; takes precedence over log.roll.hours."},
	{Name: "log.roll.hours", Field: "LogRollHours", Type: TypeInt, Default: "168", Valid: atLeast(1), Doc: "Age in hours at which a segment rolls."},
	{Name: "log.roll.jitter.ms", Field: "RawLogRollJitterMs", Type: TypeLong, Null: true, Valid: atLeast(0), Dynamic: true, Doc: "Random jitter subtracted from the roll age; takes precedence over log.roll.jitter.hours."},
	{Name: "log.roll.jitter.hours", Field: "LogRollJitterHours", Type: TypeInt, Default: "0", Valid: atLeast(0), Doc: "Roll jitter in hours."},
	{Name: "log.retention.ms", Field: "RawLogRetentionMs", Type: TypeLong, Null: true, Dynamic: true, Doc: "Age after which segments are deleted; -1 keeps them forever. Precedence: ms, minutes, hours."},
	{Name: "log.retention.minutes", Field: "RawLogRetentionMinutes", Type: TypeInt, Null: true, Doc: "Retention in minutes, used when log.retention.ms is unset."},
	{Name: "log.retention.hours", Field: "LogRetentionHours", Type: TypeInt, Default: "168", Doc: "Retention in hours, used when log.retention.ms and log.retention.minutes are unset."},
	{Name: "log.retention.bytes", Field: "LogRetentionBytes", Type: TypeLong, Default: "-1", Dynamic: true, Doc: "Largest size of a partition before old segments are deleted; -1 is unlimited."},
	{Name: "log.retention.check.interval.ms", Field: "LogRetentionCheckIntervalMs", Type: TypeLong, Default: "300000", Valid: atLeast(1), Doc: "How often retention runs."},
	{Name: "log.index.size.max.bytes", Field: "LogIndexSizeMaxBytes", Type: TypeInt, Default: "10485760", Valid: atLeast(4), Dynamic: true, Doc: "Size of the offset and time index files; a full index rolls the segment."},
	{Name: "log.index.interval.bytes", Field: "LogIndexIntervalBytes", Type: TypeInt, Default: "4096", Valid: atLeast(0), Dynamic: true, Doc: "Bytes appended between two index entries."},
	{Name: "log.flush.interval.messages", Field: "LogFlushIntervalMessages", Type: TypeLong, Default: longMax, Valid: atLeast(1), Dynamic: true, Doc: "Messages appended to a partition before it is fsynced."},
	{Name: "log.flush.interval.ms", Field: "RawLogFlushIntervalMs", Type: TypeLong, Null: true, Dynamic: true, Doc: "Longest time data stays unflushed; unset means log.flush.scheduler.interval.ms."},
	{Name: "log.flush.scheduler.interval.ms", Field: "LogFlushSchedulerIntervalMs", Type: TypeLong, Default: longMax, Doc: "How often the flusher checks whether a log needs flushing."},
	{Name: "log.flush.offset.checkpoint.interval.ms", Field: "LogFlushOffsetCheckpointIntervalMs", Type: TypeInt, Default: "60000", Valid: atLeast(0), Doc: "How often recovery-point-offset-checkpoint is written."},
	{Name: "log.flush.start.offset.checkpoint.interval.ms", Field: "LogFlushStartOffsetCheckpointIntervalMs", Type: TypeInt, Default: "60000", Valid: atLeast(0), Doc: "How often log-start-offset-checkpoint is written."},
	{Name: "log.segment.delete.delay.ms", Field: "LogSegmentDeleteDelayMs", Type: TypeLong, Default: "60000", Valid: atLeast(0), Dynamic: true, Doc: "Delay between marking a segment .deleted and removing its files."},
	{Name: "log.preallocate", Field: "LogPreallocate", Type: TypeBool, Default: "false", Dynamic: true, Doc: "Preallocate segment files."},
	{Name: "log.message.format.version", Field: "LogMessageFormatVersion", Type: TypeString, Default: "2.8-IV1", Doc: "Message format of stored data; Samsa always stores record batch v2."},
	{Name: "log.message.timestamp.type", Field: "LogMessageTimestampType", Type: TypeString, Default: "CreateTime", Valid: oneOf("CreateTime", "LogAppendTime"), Dynamic: true, Doc: "Whether stored timestamps come from the producer or the broker's clock."},
	{Name: "log.message.timestamp.difference.max.ms", Field: "LogMessageTimestampDifferenceMaxMs", Type: TypeLong, Default: longMax, Valid: atLeast(0), Dynamic: true, Doc: "Largest difference between a CreateTime timestamp and the broker's clock."},
	{Name: "log.message.downconversion.enable", Field: "LogMessageDownconversionEnable", Type: TypeBool, Default: "true", Dynamic: true, Doc: "Down-convert batches for old fetch versions; when false such fetches get UNSUPPORTED_VERSION."},
	{Name: "num.recovery.threads.per.data.dir", Field: "NumRecoveryThreadsPerDataDir", Type: TypeInt, Default: "1", Valid: atLeast(1), Dynamic: true, Doc: "Parallel log loads per data directory at start and flushes at shutdown."},

	// Cleaner.
	{Name: "log.cleanup.policy", Field: "LogCleanupPolicy", Type: TypeList, Default: "delete", Valid: oneOf("compact", "delete"), Dynamic: true, Doc: "Default cleanup policy: delete, compact or both."},
	{Name: "log.cleaner.enable", Field: "LogCleanerEnable", Type: TypeBool, Default: "true", Doc: "Run the log cleaner; compacted topics are not compacted without it."},
	{Name: "log.cleaner.threads", Field: "LogCleanerThreads", Type: TypeInt, Default: "1", Valid: atLeast(0), Dynamic: true, Doc: "Cleaner goroutines."},
	{Name: "log.cleaner.dedupe.buffer.size", Field: "LogCleanerDedupeBufferSize", Type: TypeLong, Default: "134217728", Dynamic: true, Doc: "Memory for the cleaner's key map, across all cleaner threads."},
	{Name: "log.cleaner.io.buffer.size", Field: "LogCleanerIOBufferSize", Type: TypeInt, Default: "524288", Valid: atLeast(0), Dynamic: true, Doc: "Cleaner read and write buffer size."},
	{Name: "log.cleaner.io.buffer.load.factor", Field: "LogCleanerIOBufferLoadFactor", Type: TypeDouble, Default: "0.9", Dynamic: true, Doc: "Load factor of the cleaner's key map."},
	{Name: "log.cleaner.io.max.bytes.per.second", Field: "LogCleanerIOMaxBytesPerSecond", Type: TypeDouble, Default: doubleMax, Dynamic: true, Doc: "Cleaner I/O throttle."},
	{Name: "log.cleaner.backoff.ms", Field: "LogCleanerBackoffMs", Type: TypeLong, Default: "15000", Valid: atLeast(0), Dynamic: true, Doc: "Sleep when there is nothing to clean."},
	{Name: "log.cleaner.min.cleanable.ratio", Field: "LogCleanerMinCleanableRatio", Type: TypeDouble, Default: "0.5", Valid: between(0, 1), Dynamic: true, Doc: "Dirty ratio above which a log is cleaned."},
	{Name: "log.cleaner.delete.retention.ms", Field: "LogCleanerDeleteRetentionMs", Type: TypeLong, Default: "86400000", Valid: atLeast(0), Dynamic: true, Doc: "How long tombstones stay in a compacted log."},
	{Name: "log.cleaner.min.compaction.lag.ms", Field: "LogCleanerMinCompactionLagMs", Type: TypeLong, Default: "0", Valid: atLeast(0), Dynamic: true, Doc: "Least age of a message before it may be compacted."},
	{Name: "log.cleaner.max.compaction.lag.ms", Field: "LogCleanerMaxCompactionLagMs", Type: TypeLong, Default: longMax, Valid: atLeast(1), Dynamic: true, Doc: "Largest age of a message before it must be compacted."},

	// Replication and leadership.
	{Name: "min.insync.replicas", Field: "MinInsyncReplicas", Type: TypeInt, Default: "1", Valid: atLeast(1), Dynamic: true, Doc: "With acks=all, fewer in-sync replicas fail produce with NOT_ENOUGH_REPLICAS."},
	{Name: "unclean.leader.election.enable", Field: "UncleanLeaderElectionEnable", Type: TypeBool, Default: "false", Dynamic: true, Doc: "Elect an out-of-sync replica when no in-sync replica is alive, losing data."},
	{Name: "replica.lag.time.max.ms", Field: "ReplicaLagTimeMaxMs", Type: TypeLong, Default: "30000", Doc: "A follower that has not caught up for this long leaves the ISR."},
	{Name: "replica.fetch.max.bytes", Field: "ReplicaFetchMaxBytes", Type: TypeInt, Default: "1048576", Valid: atLeast(0), Doc: "Bytes per partition a follower fetches; the first batch is returned even if larger."},
	{Name: "replica.fetch.response.max.bytes", Field: "ReplicaFetchResponseMaxBytes", Type: TypeInt, Default: "10485760", Valid: atLeast(0), Doc: "Bytes a follower's fetch response may hold in all."},
	{Name: "replica.fetch.wait.max.ms", Field: "ReplicaFetchWaitMaxMs", Type: TypeInt, Default: "500", Doc: "Longest a follower's fetch waits on the leader; must be below replica.lag.time.max.ms."},
	{Name: "replica.fetch.min.bytes", Field: "ReplicaFetchMinBytes", Type: TypeInt, Default: "1", Doc: "Bytes a follower's fetch waits for."},
	{Name: "replica.fetch.backoff.ms", Field: "ReplicaFetchBackoffMs", Type: TypeInt, Default: "1000", Valid: atLeast(0), Doc: "Sleep after a fetch error."},
	{Name: "replica.socket.timeout.ms", Field: "ReplicaSocketTimeoutMs", Type: TypeInt, Default: "30000", Doc: "Socket timeout of follower fetches; at least replica.fetch.wait.max.ms."},
	{Name: "replica.socket.receive.buffer.bytes", Field: "ReplicaSocketReceiveBufferBytes", Type: TypeInt, Default: "65536", Doc: "SO_RCVBUF of follower connections."},
	{Name: "max.incremental.fetch.session.cache.slots", Field: "MaxIncrementalFetchSessionCacheSlots", Type: TypeInt, Default: "1000", Valid: atLeast(0), Doc: "Incremental fetch sessions (KIP-227) the broker keeps; 0 disables them (every fetch is full)."},
	{Name: "num.replica.fetchers", Field: "NumReplicaFetchers", Type: TypeInt, Default: "1", Dynamic: true, Doc: "Fetcher goroutines per source broker."},
	{Name: "replica.high.watermark.checkpoint.interval.ms", Field: "ReplicaHighWatermarkCheckpointIntervalMs", Type: TypeLong, Default: "5000", Doc: "How often replication-offset-checkpoint is written."},
	{Name: "auto.leader.rebalance.enable", Field: "AutoLeaderRebalanceEnable", Type: TypeBool, Default: "true", Doc: "Controller moves leadership back to preferred replicas."},
	{Name: "leader.imbalance.check.interval.seconds", Field: "LeaderImbalanceCheckIntervalSeconds", Type: TypeLong, Default: "300", Valid: atLeast(1), Doc: "How often the controller checks leader imbalance."},
	{Name: "leader.imbalance.per.broker.percentage", Field: "LeaderImbalancePerBrokerPercentage", Type: TypeInt, Default: "10", Doc: "Imbalance per broker above which a preferred election runs."},
	{Name: "controlled.shutdown.enable", Field: "ControlledShutdownEnable", Type: TypeBool, Default: "true", Doc: "Move leadership away through the controller before shutting down."},
	{Name: "controlled.shutdown.max.retries", Field: "ControlledShutdownMaxRetries", Type: TypeInt, Default: "3", Doc: "ControlledShutdown attempts before shutting down anyway."},
	{Name: "controlled.shutdown.retry.backoff.ms", Field: "ControlledShutdownRetryBackoffMs", Type: TypeLong, Default: "5000", Doc: "Wait between ControlledShutdown attempts."},

	// Group coordinator and offsets.
	{Name: "offsets.topic.num.partitions", Field: "OffsetsTopicNumPartitions", Type: TypeInt, Default: "50", Valid: atLeast(1), Doc: "Partitions of __consumer_offsets; do not change after deployment."},
	{Name: "offsets.topic.replication.factor", Field: "OffsetsTopicReplicationFactor", Type: TypeShort, Default: "3", Valid: atLeast(1), Doc: "Replication factor of __consumer_offsets; creation fails until this many brokers are alive."},
	{Name: "offsets.topic.segment.bytes", Field: "OffsetsTopicSegmentBytes", Type: TypeInt, Default: "104857600", Valid: atLeast(1), Doc: "segment.bytes of __consumer_offsets."},
	{Name: "offsets.topic.compression.codec", Field: "OffsetsTopicCompressionCodec", Type: TypeInt, Default: "0", Valid: between(0, 4), Doc: "Codec of offset commit batches (0 none, 1 gzip, 2 snappy, 3 lz4, 4 zstd)."},
	{Name: "offsets.retention.minutes", Field: "OffsetsRetentionMinutes", Type: TypeInt, Default: "10080", Valid: atLeast(1), Doc: "Committed offsets of empty groups expire after this long."},
	{Name: "offsets.retention.check.interval.ms", Field: "OffsetsRetentionCheckIntervalMs", Type: TypeLong, Default: "600000", Valid: atLeast(1), Doc: "How often expired offsets are removed."},
	{Name: "offsets.commit.timeout.ms", Field: "OffsetsCommitTimeoutMs", Type: TypeInt, Default: "5000", Valid: atLeast(1), Doc: "Longest an offset commit waits for replication."},
	{Name: "offsets.commit.required.acks", Field: "OffsetsCommitRequiredAcks", Type: TypeShort, Default: "-1", Doc: "Acks of offset commits; -1 is all in-sync replicas."},
	{Name: "offsets.load.buffer.size", Field: "OffsetsLoadBufferSize", Type: TypeInt, Default: "5242880", Valid: atLeast(1), Doc: "Read size when loading __consumer_offsets."},
	{Name: "offset.metadata.max.bytes", Field: "OffsetMetadataMaxBytes", Type: TypeInt, Default: "4096", Doc: "Largest metadata string of an offset commit."},
	{Name: "group.initial.rebalance.delay.ms", Field: "GroupInitialRebalanceDelayMs", Type: TypeInt, Default: "3000", Doc: "Wait for more members before the first rebalance of an empty group."},
	{Name: "group.min.session.timeout.ms", Field: "GroupMinSessionTimeoutMs", Type: TypeInt, Default: "6000", Doc: "Smallest session timeout a member may ask for."},
	{Name: "group.max.session.timeout.ms", Field: "GroupMaxSessionTimeoutMs", Type: TypeInt, Default: "1800000", Doc: "Largest session timeout a member may ask for."},
	{Name: "group.max.size", Field: "GroupMaxSize", Type: TypeInt, Default: intMax, Valid: atLeast(1), Doc: "Most members a group may have."},

	// Client quotas (Kafka 2.8 ClientQuotaManagerConfig); the quotas themselves are dynamic
	// (/config/users, /config/clients).
	{Name: "quota.window.num", Field: "QuotaWindowNum", Type: TypeInt, Default: "11", Valid: atLeast(1), Doc: "Samples over which client byte rates and request time are measured (producer_byte_rate, consumer_byte_rate, request_percentage)."},
	{Name: "quota.window.size.seconds", Field: "QuotaWindowSizeSeconds", Type: TypeInt, Default: "1", Valid: atLeast(1), Doc: "Length of each client quota sample."},
	{Name: "quota.producer.default", Field: "QuotaProducerDefault", Type: TypeLong, Default: longMax, Valid: atLeast(1), Doc: "Deprecated: producer_byte_rate of every client-id no dynamic quota matches; the default means none."},
	{Name: "quota.consumer.default", Field: "QuotaConsumerDefault", Type: TypeLong, Default: longMax, Valid: atLeast(1), Doc: "Deprecated: consumer_byte_rate of every client-id no dynamic quota matches; the default means none."},
	{Name: "controller.quota.window.num", Field: "ControllerQuotaWindowNum", Type: TypeInt, Default: "11", Valid: atLeast(1), Doc: "Samples of the controller_mutation_rate token bucket: its burst is samples x window x rate (KIP-599)."},
	{Name: "controller.quota.window.size.seconds", Field: "ControllerQuotaWindowSizeSeconds", Type: TypeInt, Default: "1", Valid: atLeast(1), Doc: "Length of each controller_mutation_rate sample."},

	// Transactions (the transaction coordinator, broker/txn).
	{Name: "transaction.state.log.num.partitions", Field: "TransactionStateLogNumPartitions", Type: TypeInt, Default: "50", Valid: atLeast(1), Doc: "Partitions of __transaction_state; do not change after deployment."},
	{Name: "transaction.state.log.replication.factor", Field: "TransactionStateLogReplicationFactor", Type: TypeShort, Default: "3", Valid: atLeast(1), Doc: "Replication factor of __transaction_state; its creation waits until this many brokers are alive."},
	{Name: "transaction.state.log.min.isr", Field: "TransactionStateLogMinISR", Type: TypeInt, Default: "2", Valid: atLeast(1), Doc: "min.insync.replicas of __transaction_state."},
	{Name: "transaction.state.log.segment.bytes", Field: "TransactionStateLogSegmentBytes", Type: TypeInt, Default: "104857600", Valid: atLeast(1), Doc: "segment.bytes of __transaction_state."},
	{Name: "transaction.state.log.load.buffer.size", Field: "TransactionStateLogLoadBufferSize", Type: TypeInt, Default: "5242880", Valid: atLeast(1), Doc: "Bytes read at a time while loading a __transaction_state partition (soft: a larger batch is still read whole)."},
	{Name: "transaction.max.timeout.ms", Field: "TransactionMaxTimeoutMs", Type: TypeInt, Default: "900000", Valid: atLeast(1), Doc: "Largest transaction.timeout.ms a producer may ask for; InitProducerId with a larger one answers INVALID_TRANSACTION_TIMEOUT."},
	{Name: "transaction.partition.verification.enable", Field: "TransactionPartitionVerificationEnable", Type: TypeBool, Default: "true", Doc: "KIP-890 part 1 (Kafka 3.6's key; Kafka 2.8 has no such check): a partition leader asks the transaction coordinator (AddPartitionsToTxn v4, verify only) before accepting the first transactional batch of a producer epoch, and refuses it with INVALID_TXN_STATE if the partition is not in the ongoing transaction. On by default: Samsa is safer than Kafka 2.8 here (docs/transactions.md)."},
	{Name: "transactional.id.expiration.ms", Field: "TransactionalIDExpirationMs", Type: TypeInt, Default: "604800000", Valid: atLeast(1), Doc: "A transactional id idle this long (no transaction open) is removed from __transaction_state; an idempotent producer whose last batch in a partition is older than this (by the batch's timestamp) loses its state there, as in Kafka 2.8."},
	{Name: "transaction.abort.timed.out.transaction.cleanup.interval.ms", Field: "TransactionAbortTimedOutTransactionCleanupIntervalMs", Type: TypeInt, Default: "10000", Valid: atLeast(1), Doc: "How often the coordinator aborts transactions open longer than their timeout."},
	{Name: "transaction.remove.expired.transaction.cleanup.interval.ms", Field: "TransactionRemoveExpiredTransactionCleanupIntervalMs", Type: TypeInt, Default: "3600000", Valid: atLeast(1), Doc: "How often the coordinator removes transactional ids idle past transactional.id.expiration.ms."},

	// Authorization (Kafka 2.8 AclAuthorizer; docs/security.md "Authorization").
	{Name: "authorizer.class.name", Field: "AuthorizerClassName", Type: TypeString, Default: "", Valid: oneOf("", "kafka.security.authorizer.AclAuthorizer", "kafka.security.auth.SimpleAclAuthorizer"), Doc: "Authorizer of every request: kafka.security.authorizer.AclAuthorizer (or its deprecated alias kafka.security.auth.SimpleAclAuthorizer) checks the ACLs stored in ZooKeeper under /kafka-acl and /kafka-acl-extended; empty means no authorization (the ACL APIs answer SECURITY_DISABLED)."},
	{Name: "super.users", Field: "SuperUsers", Type: TypeString, Default: "", Doc: "Principals allowed everything, separated by ';' (User:admin;User:broker); read by the AclAuthorizer."},
	{Name: "allow.everyone.if.no.acl.found", Field: "AllowEveryoneIfNoACLFound", Type: TypeBool, Default: "false", Doc: "With the AclAuthorizer, let every principal use a resource that no ACL applies to; false denies it."},

	// Samsa-specific keys (no Kafka equivalent; Kafka configures these
	// through JMX exporters and log4j.properties).
	{Name: "metrics.listener", Field: "MetricsListener", Type: TypeString, Null: true, Valid: httpListener(), Doc: samsaOnly + "http://host:port on which the broker serves its metrics in Prometheus text format at /metrics; unset serves none. Port 0 picks a free port."},
	{Name: "log.format", Field: "LogFormat", Type: TypeString, Default: "text", Valid: oneOf("text", "json"), Doc: samsaOnly + "Format of the broker's log lines (logrus text or JSON), applied by kafka-server-start."},
	{Name: "log.level", Field: "LogLevel", Type: TypeString, Null: true, Valid: oneOf("TRACE", "DEBUG", "INFO", "WARN", "ERROR", "trace", "debug", "info", "warn", "error"), Doc: samsaOnly + "Level of the broker's log, applied by kafka-server-start; unset means SAMSA_LOG_LEVEL, else INFO."},
	// Security: TLS and SASL (docs/security.md).
	{Name: "java.security.auth.login.config", Field: "JavaSecurityAuthLoginConfig", Type: TypeString, Null: true, Doc: samsaOnly + "JAAS file (Kafka's syntax: KafkaServer, <listener>.KafkaServer and Client sections). Kafka takes it as the JVM property -Djava.security.auth.login.config, which Samsa also reads from KAFKA_OPTS."},
	{Name: "ssl.keystore.type", Field: "SSLKeystoreType", Type: TypeString, Default: "JKS", Valid: oneOf("JKS", "PKCS12", "PEM", "jks", "pkcs12", "pem"), Dynamic: true, Doc: "File format of the key store: JKS (read with keystore-go), PKCS12 (go-pkcs12) or PEM (KIP-651). Per listener: listener.name.<l>.ssl.keystore.type."},
	{Name: "ssl.keystore.location", Field: "SSLKeystoreLocation", Type: TypeString, Null: true, Dynamic: true, Doc: "Key store file of SSL and SASL_SSL listeners; changed at run time (kafka-configs --entity-type brokers, listener-prefixed) it is re-read and new connections get the new certificate."},
	{Name: "ssl.keystore.password", Field: "SSLKeystorePassword", Type: TypeString, Null: true, Dynamic: true, Password: true, Doc: "Password of the key store (JKS, PKCS12)."},
	{Name: "ssl.key.password", Field: "SSLKeyPassword", Type: TypeString, Null: true, Dynamic: true, Password: true, Doc: "Password of the private key in a JKS key store (defaults to the store password)."},
	{Name: "ssl.keystore.key", Field: "SSLKeystoreKey", Type: TypeString, Null: true, Dynamic: true, Password: true, Doc: "Inline PEM PKCS#8 private key (ssl.keystore.type=PEM, KIP-651)."},
	{Name: "ssl.keystore.certificate.chain", Field: "SSLKeystoreCertificateChain", Type: TypeString, Null: true, Dynamic: true, Doc: "Inline PEM certificate chain going with ssl.keystore.key."},
	{Name: "ssl.truststore.type", Field: "SSLTruststoreType", Type: TypeString, Default: "JKS", Valid: oneOf("JKS", "PKCS12", "PEM", "jks", "pkcs12", "pem"), Dynamic: true, Doc: "File format of the trust store: JKS, PKCS12 or PEM."},
	{Name: "ssl.truststore.location", Field: "SSLTruststoreLocation", Type: TypeString, Null: true, Dynamic: true, Doc: "Trust store: CAs trusted for client certificates and, on inter-broker connections, for other brokers. Unset: the system roots."},
	{Name: "ssl.truststore.password", Field: "SSLTruststorePassword", Type: TypeString, Null: true, Dynamic: true, Password: true, Doc: "Password of the trust store."},
	{Name: "ssl.truststore.certificates", Field: "SSLTruststoreCertificates", Type: TypeString, Null: true, Dynamic: true, Doc: "Inline PEM trusted certificates (ssl.truststore.type=PEM)."},
	{Name: "ssl.client.auth", Field: "SSLClientAuth", Type: TypeString, Default: "none", Valid: oneOf("none", "requested", "required"), Dynamic: true, Doc: "Client certificates: none, requested (verified if sent) or required. On a SASL_SSL listener only the listener-prefixed key applies, as in Kafka."},
	{Name: "ssl.enabled.protocols", Field: "SSLEnabledProtocols", Type: TypeList, Default: "TLSv1.2,TLSv1.3", Dynamic: true, Doc: "TLS versions offered: TLSv1.2 and/or TLSv1.3."},
	{Name: "ssl.protocol", Field: "SSLProtocol", Type: TypeString, Default: "TLSv1.3", Dynamic: true, Doc: "Kafka's SSLContext protocol; Go negotiates from ssl.enabled.protocols." + noEffect},
	{Name: "ssl.cipher.suites", Field: "SSLCipherSuites", Type: TypeList, Default: "", Dynamic: true, Doc: "Cipher suites by their Java (IANA) names; empty means Go's defaults. TLS 1.3 suites are always enabled in Go."},
	{Name: "ssl.endpoint.identification.algorithm", Field: "SSLEndpointIdentificationAlgorithm", Type: TypeString, Default: "https", Dynamic: true, Doc: "https: inter-broker TLS connections verify that the other broker's certificate names its host; empty: the chain only."},
	{Name: "ssl.principal.mapping.rules", Field: "SSLPrincipalMappingRules", Type: TypeString, Default: "DEFAULT", Doc: "Rules mapping a client certificate's DN (RFC 2253, as Java writes it) to the principal name: DEFAULT or RULE:<regex>/<replacement>/[LU], comma separated."},
	{Name: "sasl.enabled.mechanisms", Field: "SASLEnabledMechanisms", Type: TypeList, Default: "GSSAPI", Dynamic: true, Doc: "SASL mechanisms SASL listeners accept: PLAIN, SCRAM-SHA-256, SCRAM-SHA-512 (GSSAPI and OAUTHBEARER are not supported). Per listener: listener.name.<l>.sasl.enabled.mechanisms."},
	{Name: "sasl.mechanism.inter.broker.protocol", Field: "SASLMechanismInterBrokerProtocol", Type: TypeString, Default: "GSSAPI", Dynamic: true, Doc: "Mechanism brokers use towards each other on a SASL inter-broker listener; its credentials are the username/password of the listener's JAAS entry for it."},
	{Name: "sasl.jaas.config", Field: "SASLJaasConfig", Type: TypeString, Null: true, Dynamic: true, Password: true, Doc: "A JAAS login module (Kafka syntax); on brokers only the listener- and mechanism-prefixed form listener.name.<l>.<mech>.sasl.jaas.config is used. Only PlainLoginModule and ScramLoginModule are accepted."},
	{Name: "sasl.server.max.receive.size", Field: "SASLServerMaxReceiveSize", Type: TypeInt, Default: "524288", Valid: atLeast(1), Doc: "Largest frame accepted before a SASL connection has authenticated (CVE-2022-34917)."},
	{Name: "connection.failed.authentication.delay.ms", Field: "ConnectionFailedAuthenticationDelayMs", Type: TypeInt, Default: "100", Valid: atLeast(0), Doc: "Delay before a failed authentication is answered and the connection closed."},
	{Name: "connections.max.reauth.ms", Field: "ConnectionsMaxReauthMs", Type: TypeLong, Default: "0", Valid: atLeast(0), Doc: "SASL session lifetime (KIP-368): 0 never expires; else clients must re-authenticate within it or the connection is closed."},
	// Encryption of dynamic password configs in ZooKeeper (docs/security.md).
	{Name: "password.encoder.secret", Field: "PasswordEncoderSecret", Type: TypeString, Null: true, Password: true, Doc: "Secret that encrypts the password configs set dynamically (kafka-configs.sh --entity-type brokers) before they are stored in /config/brokers/<id>; without it such configs are refused."},
	{Name: "password.encoder.old.secret", Field: "PasswordEncoderOldSecret", Type: TypeString, Null: true, Password: true, Doc: "The previous password.encoder.secret, while rotating it: stored passwords it decodes are re-encoded with the new secret at start."},
	{Name: "password.encoder.keyfactory.algorithm", Field: "PasswordEncoderKeyFactoryAlgorithm", Type: TypeString, Null: true, Valid: oneOf("PBKDF2WithHmacSHA512", "PBKDF2WithHmacSHA256", "PBKDF2WithHmacSHA1"), Doc: "PBKDF2 variant deriving the encryption key; unset means PBKDF2WithHmacSHA512, as Kafka."},
	{Name: "password.encoder.cipher.algorithm", Field: "PasswordEncoderCipherAlgorithm", Type: TypeString, Default: "AES/CBC/PKCS5Padding", Valid: oneOf("AES/CBC/PKCS5Padding", "AES/GCM/NoPadding"), Doc: "Cipher for dynamic password configs."},
	{Name: "password.encoder.key.length", Field: "PasswordEncoderKeyLength", Type: TypeInt, Default: "128", Valid: between(128, 256), Doc: "Key length in bits for dynamic password configs: 128, 192 or 256, which AES needs (Kafka accepts any value >= 8 and fails later)."},
	{Name: "password.encoder.iterations", Field: "PasswordEncoderIterations", Type: TypeInt, Default: "4096", Valid: between(1024, 1<<20), Doc: "PBKDF2 iterations for dynamic password configs."},
	// ZooKeeper over TLS (KIP-515, docs/security.md).
	{Name: "zookeeper.ssl.client.enable", Field: "ZookeeperSSLClientEnable", Type: TypeBool, Default: "false", Doc: "Connect to ZooKeeper over TLS (KIP-515); the zookeeper.ssl.* keys configure it."},
	{Name: "zookeeper.clientCnxnSocket", Field: "ZookeeperClientCnxnSocket", Type: TypeString, Null: true, Doc: "ZooKeeper's client socket class; Kafka needs org.apache.zookeeper.ClientCnxnSocketNetty for TLS." + noEffect},
	{Name: "zookeeper.ssl.keystore.location", Field: "ZookeeperSSLKeystoreLocation", Type: TypeString, Null: true, Doc: "Client key store for ZooKeeper TLS (a client certificate: ZooKeeper's x509 identity)."},
	{Name: "zookeeper.ssl.keystore.password", Field: "ZookeeperSSLKeystorePassword", Type: TypeString, Null: true, Password: true, Doc: "Password of zookeeper.ssl.keystore.location."},
	{Name: "zookeeper.ssl.keystore.type", Field: "ZookeeperSSLKeystoreType", Type: TypeString, Null: true, Doc: "JKS, PKCS12 or PEM; unset: from the file extension (.jks, .p12/.pfx, .pem), else JKS, as ZooKeeper's X509Util."},
	{Name: "zookeeper.ssl.truststore.location", Field: "ZookeeperSSLTruststoreLocation", Type: TypeString, Null: true, Doc: "Trust store for the ZooKeeper servers' certificates."},
	{Name: "zookeeper.ssl.truststore.password", Field: "ZookeeperSSLTruststorePassword", Type: TypeString, Null: true, Password: true, Doc: "Password of zookeeper.ssl.truststore.location."},
	{Name: "zookeeper.ssl.truststore.type", Field: "ZookeeperSSLTruststoreType", Type: TypeString, Null: true, Doc: "JKS, PKCS12 or PEM; unset: from the file extension, else JKS."},
	{Name: "zookeeper.ssl.protocol", Field: "ZookeeperSSLProtocol", Type: TypeString, Default: "TLSv1.2", Doc: "TLS protocol towards ZooKeeper; Go negotiates from zookeeper.ssl.enabled.protocols."},
	{Name: "zookeeper.ssl.enabled.protocols", Field: "ZookeeperSSLEnabledProtocols", Type: TypeList, Default: "", Doc: "TLS versions towards ZooKeeper (TLSv1.2, TLSv1.3); empty: both."},
	{Name: "zookeeper.ssl.cipher.suites", Field: "ZookeeperSSLCipherSuites", Type: TypeList, Default: "", Doc: "Cipher suites towards ZooKeeper by Java (IANA) name; empty: Go's defaults."},
	{Name: "zookeeper.ssl.endpoint.identification.algorithm", Field: "ZookeeperSSLEndpointIdentificationAlgorithm", Type: TypeString, Default: "HTTPS", Doc: "HTTPS: the ZooKeeper server's certificate must name the host in zookeeper.connect; empty: chain only."},
	{Name: "zookeeper.ssl.crl.enable", Field: "ZookeeperSSLCrlEnable", Type: TypeBool, Default: "false", Doc: "Certificate revocation lists." + noEffect},
	{Name: "zookeeper.ssl.ocsp.enable", Field: "ZookeeperSSLOcspEnable", Type: TypeBool, Default: "false", Doc: "OCSP." + noEffect},
	{Name: "samsa.group.rebalance.storm.count", Field: "GroupRebalanceStormCount", Type: TypeInt, Default: "5", Valid: atLeast(0), Doc: samsaOnly + "A consumer group that starts more than this many rebalances within samsa.group.rebalance.storm.window.ms is in a rebalance storm: the coordinator logs a WARN naming the member that keeps causing it and the likely cause, and samsa-doctor lists the group. 0 turns the detector off."},
	{Name: "samsa.group.rebalance.storm.window.ms", Field: "GroupRebalanceStormWindowMs", Type: TypeLong, Default: "600000", Valid: atLeast(1), Doc: samsaOnly + "The sliding window of the rebalance storm detector (see samsa.group.rebalance.storm.count)."},
	{Name: "samsa.group.rebalance.history.size", Field: "GroupRebalanceHistorySize", Type: TypeInt, Default: "10", Valid: between(1, 1000), Doc: samsaOnly + "How many of its latest rebalances (time, generation, reason) the coordinator keeps per group for kafka-consumer-groups --describe --state --verbose and the metrics listener's /groups/rebalances."},
}
