package controller

import (
	"errors"
	"io"
	"time"

	"github.com/rcrowley/go-metrics"
	"github.com/sirupsen/logrus"

	"samsa/kafka"
	"samsa/zkutil"
)

// Config configures a Controller. BrokerID, ZK (or Store) and Dialer are required.
type Config struct {
	// BrokerID is this broker's broker.id.
	BrokerID int32
	// ZK is the broker's ZooKeeper client; the controller uses it through StoreFromZK.
	ZK *zkutil.Client
	// Store replaces ZK when set (another Store implementation).
	Store Store
	// Dialer opens connections to other brokers' inter-broker listeners.
	Dialer Dialer
	// InterBrokerListener is the listener the controller sends its requests to on every
	// broker (Kafka's controllerToBrokerListenerName): control.plane.listener.name when set,
	// else inter.broker.listener.name; "" picks each broker's first registered endpoint
	// (Kafka's default is the PLAINTEXT listener).
	InterBrokerListener string
	// UncleanLeaderElectionEnable is the broker default of
	// unclean.leader.election.enable; a topic override read from ZooKeeper wins.
	UncleanLeaderElectionEnable bool
	// DeleteTopicDisabled is the negation of delete.topic.enable (default true in Kafka
	// 1.0+): when set, deletion markers are removed without deleting anything.
	DeleteTopicDisabled bool
	// AutoLeaderRebalanceEnable is auto.leader.rebalance.enable (Kafka's default is true;
	// the broker passes its configured value): every LeaderImbalanceCheckInterval (first 5 s
	// after becoming controller) partitions of brokers whose leader imbalance exceeds
	// LeaderImbalancePerBrokerPercentage move back to their preferred replica.
	AutoLeaderRebalanceEnable bool
	// LeaderImbalanceCheckInterval is leader.imbalance.check.interval.seconds (default 300 s).
	LeaderImbalanceCheckInterval time.Duration
	// LeaderImbalancePerBrokerPercentage is leader.imbalance.per.broker.percentage (default
	// 10 when zero; a negative value means 0).
	LeaderImbalancePerBrokerPercentage int
	// RequestTimeout bounds each control request (controller.socket.timeout.ms,
	// default 30 s).
	RequestTimeout time.Duration
	// RetryBackoff is the pause before a failed request is sent again (default 100 ms).
	RetryBackoff time.Duration
	// LeaderAndIsrVersion, UpdateMetadataVersion and StopReplicaVersion cap the request
	// versions (defaults: Kafka 2.8's 5, 7 and 3); the sender lowers them to what the
	// receiving broker negotiated when its client implements VersionLimiter.
	LeaderAndIsrVersion, UpdateMetadataVersion, StopReplicaVersion int16
	// LeaderHint, when set, returns the leader this broker's metadata cache holds for a
	// partition (ok=false when it has none). A new controller uses it only to order its
	// failover: the partitions it names as led by a broker that is not live are read from
	// ZooKeeper and elected first (failover_order.go); every decision is still taken on the
	// state read from ZooKeeper. Called on the event goroutine; it must not block.
	LeaderHint func(tp kafka.TopicPartition) (leader int32, ok bool)
	// Logger receives the controller's logs, including the state-change log; default: discard.
	Logger logrus.FieldLogger
	// Metrics is the registry for the controller's metrics; default: a private registry.
	Metrics metrics.Registry
	// Now is the clock; default time.Now.
	Now func() time.Time
	// AfterFunc runs f once after d unless the returned stop is called first; default
	// time.AfterFunc. The controller's callbacks only enqueue events.
	AfterFunc func(d time.Duration, f func()) (stop func() bool)
}

// withDefaults validates c and fills in defaults.
func (c Config) withDefaults() (Config, error) {
	if c.Store == nil && c.ZK != nil {
		c.Store = StoreFromZK(c.ZK)
	}
	if c.Store == nil {
		return c, errors.New("controller: Config.ZK or Config.Store is required")
	}
	if c.Dialer == nil {
		return c, errors.New("controller: Config.Dialer is required")
	}
	if c.BrokerID < 0 {
		return c, errors.New("controller: Config.BrokerID must be >= 0")
	}
	if c.RequestTimeout <= 0 {
		c.RequestTimeout = 30 * time.Second
	}
	if c.LeaderImbalanceCheckInterval <= 0 {
		c.LeaderImbalanceCheckInterval = 300 * time.Second
	}
	switch {
	case c.LeaderImbalancePerBrokerPercentage == 0:
		c.LeaderImbalancePerBrokerPercentage = 10
	case c.LeaderImbalancePerBrokerPercentage < 0:
		c.LeaderImbalancePerBrokerPercentage = 0
	}
	if c.RetryBackoff <= 0 {
		c.RetryBackoff = 100 * time.Millisecond
	}
	if c.LeaderAndIsrVersion <= 0 {
		c.LeaderAndIsrVersion = DefaultLeaderAndIsrVersion
	}
	if c.UpdateMetadataVersion <= 0 {
		c.UpdateMetadataVersion = DefaultUpdateMetadataVersion
	}
	if c.StopReplicaVersion <= 0 {
		c.StopReplicaVersion = DefaultStopReplicaVersion
	}
	if c.Logger == nil {
		l := logrus.New()
		l.SetOutput(io.Discard)
		c.Logger = l
	}
	if c.Metrics == nil {
		c.Metrics = metrics.NewRegistry()
	}
	if c.Now == nil {
		c.Now = time.Now
	}
	if c.AfterFunc == nil {
		c.AfterFunc = func(d time.Duration, f func()) func() bool { return time.AfterFunc(d, f).Stop }
	}
	return c, nil
}
