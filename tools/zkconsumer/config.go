package zkconsumer

import (
	"errors"
	"fmt"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/IBM/sarama"
	metrics "github.com/rcrowley/go-metrics"
	"github.com/sirupsen/logrus"
)

// Offset storage choices (offsets.storage).
const (
	StorageZooKeeper = "zookeeper"
	StorageKafka     = "kafka"
)

// auto.offset.reset choices.
const (
	ResetSmallest = "smallest"
	ResetLargest  = "largest"
)

// Config is the old consumer's ConsumerConfig. Each field names its Kafka
// property and default; DefaultConfig fills the defaults and
// ParseProperties reads Kafka's property names.
type Config struct {
	// GroupID is group.id (required).
	GroupID string
	// ConsumerID is consumer.id: replaces "<host>-<ms>-<hex>" in the
	// generated id "<group>_<host>-<ms>-<hex>". Meant for tests; default "".
	ConsumerID string
	// ZooKeeperConnect is zookeeper.connect, "host:port[,host:port][/chroot]"
	// (required).
	ZooKeeperConnect string
	// ZooKeeperSessionTimeout is zookeeper.session.timeout.ms (6000).
	ZooKeeperSessionTimeout time.Duration
	// ZooKeeperConnectionTimeout is zookeeper.connection.timeout.ms
	// (default: the session timeout).
	ZooKeeperConnectionTimeout time.Duration
	// RebalanceMaxRetries is rebalance.max.retries (4): attempts per rebalance.
	RebalanceMaxRetries int
	// RebalanceBackoff is rebalance.backoff.ms (2000, = zookeeper.sync.time.ms):
	// the pause between rebalance attempts.
	RebalanceBackoff time.Duration
	// RebalanceProcessingWait is rebalance.processing.wait.ms (3000,
	// Samsa-specific: Kafka has no such setting and does not wait): how long
	// a rebalance, and Close, wait for the message each stream has handed
	// out to be marked processed before committing. 0 does not wait.
	RebalanceProcessingWait time.Duration
	// AutoOffsetReset is auto.offset.reset: "largest" (default) or
	// "smallest", used when no offset is committed or the committed offset
	// is out of range.
	AutoOffsetReset string
	// AutoCommitEnable is auto.commit.enable (true).
	AutoCommitEnable bool
	// AutoCommitInterval is auto.commit.interval.ms (60000).
	AutoCommitInterval time.Duration
	// OffsetsStorage is offsets.storage: "zookeeper" (default) or "kafka".
	OffsetsStorage string
	// DualCommitEnabled is dual.commit.enabled (true): with
	// offsets.storage=kafka, also write ZooKeeper and read the larger of
	// both. Ignored with offsets.storage=zookeeper.
	DualCommitEnabled bool
	// OffsetsCommitMaxRetries is offsets.commit.max.retries (5), for manual
	// commits; automatic commits do not retry.
	OffsetsCommitMaxRetries int
	// OffsetsChannelBackoff is offsets.channel.backoff.ms (1000): the pause
	// between commit retries.
	OffsetsChannelBackoff time.Duration
	// ConsumerTimeout is consumer.timeout.ms (-1): Stream.Next returns
	// ErrConsumerTimeout after this long without a message; negative waits
	// for ever.
	ConsumerTimeout time.Duration
	// FetchMessageMaxBytes is fetch.message.max.bytes (1048576): bytes
	// fetched per partition per request; a larger message is an error.
	FetchMessageMaxBytes int32
	// FetchMinBytes is fetch.min.bytes (1).
	FetchMinBytes int32
	// FetchWaitMax is fetch.wait.max.ms (100).
	FetchWaitMax time.Duration
	// QueuedMaxMessageChunks is queued.max.message.chunks (2): each stream
	// queues at most this many fetched chunks of read-ahead; Samsa counts a
	// chunk as 100 messages.
	QueuedMaxMessageChunks int
	// RefreshLeaderBackoff is refresh.leader.backoff.ms (200).
	RefreshLeaderBackoff time.Duration
	// SocketTimeout is socket.timeout.ms (30000).
	SocketTimeout time.Duration
	// PartitionAssignmentStrategy is partition.assignment.strategy:
	// "range" (default) or "roundrobin".
	PartitionAssignmentStrategy string
	// ExcludeInternalTopics is exclude.internal.topics (true): wildcard
	// subscriptions never match __consumer_offsets.
	ExcludeInternalTopics bool
	// ClientID is client.id (default: the group id).
	ClientID string

	// Host is the host name in the generated consumer id (default
	// os.Hostname()).
	Host string
	// Logger receives logs (component=zkconsumer). Nil discards them.
	Logger logrus.FieldLogger
	// Metrics receives the connector's metrics (metrics.go). Nil means a
	// private registry.
	Metrics metrics.Registry
	// Sarama, when set, is the base configuration of the Sarama client
	// used for fetching and offset requests (Version, Net settings); the
	// fields above override its fetch settings. Default sarama.NewConfig()
	// with Version V0_10_2_0.
	Sarama *sarama.Config
	// RebalanceListener, when set, is told before partitions are released
	// and before fetchers start at each rebalance (listener.go). Nil means
	// none.
	RebalanceListener RebalanceListener
}

// DefaultConfig returns a Config with Kafka's defaults.
func DefaultConfig() Config {
	return Config{
		ZooKeeperSessionTimeout:     6 * time.Second,
		RebalanceMaxRetries:         4,
		RebalanceBackoff:            2 * time.Second,
		RebalanceProcessingWait:     3 * time.Second,
		AutoOffsetReset:             ResetLargest,
		AutoCommitEnable:            true,
		AutoCommitInterval:          60 * time.Second,
		OffsetsStorage:              StorageZooKeeper,
		DualCommitEnabled:           true,
		OffsetsCommitMaxRetries:     5,
		OffsetsChannelBackoff:       time.Second,
		ConsumerTimeout:             -time.Millisecond,
		FetchMessageMaxBytes:        1024 * 1024,
		FetchMinBytes:               1,
		FetchWaitMax:                100 * time.Millisecond,
		QueuedMaxMessageChunks:      2,
		RefreshLeaderBackoff:        200 * time.Millisecond,
		SocketTimeout:               30 * time.Second,
		PartitionAssignmentStrategy: StrategyRange,
		ExcludeInternalTopics:       true,
	}
}

// Validate reports every problem of c at once.
func (c *Config) Validate() error {
	var errs []error
	bad := func(format string, args ...any) { errs = append(errs, fmt.Errorf("zkconsumer: "+format, args...)) }
	if c.GroupID == "" {
		bad("group.id is required")
	}
	if c.ZooKeeperConnect == "" {
		bad("zookeeper.connect is required")
	}
	if c.ZooKeeperSessionTimeout <= 0 {
		bad("zookeeper.session.timeout.ms must be positive")
	}
	if c.RebalanceMaxRetries < 1 {
		bad("rebalance.max.retries must be at least 1")
	}
	if c.RebalanceBackoff < 0 {
		bad("rebalance.backoff.ms must not be negative")
	}
	if c.RebalanceProcessingWait < 0 {
		bad("rebalance.processing.wait.ms must not be negative")
	}
	if c.AutoOffsetReset != ResetSmallest && c.AutoOffsetReset != ResetLargest {
		bad("auto.offset.reset must be smallest or largest, not %q", c.AutoOffsetReset)
	}
	if c.AutoCommitEnable && c.AutoCommitInterval <= 0 {
		bad("auto.commit.interval.ms must be positive")
	}
	if c.OffsetsStorage != StorageZooKeeper && c.OffsetsStorage != StorageKafka {
		bad("offsets.storage must be zookeeper or kafka, not %q", c.OffsetsStorage)
	}
	if c.FetchMessageMaxBytes <= 0 {
		bad("fetch.message.max.bytes must be positive")
	}
	if c.QueuedMaxMessageChunks < 1 {
		bad("queued.max.message.chunks must be at least 1")
	}
	if _, err := AssignorFor(c.PartitionAssignmentStrategy); err != nil {
		errs = append(errs, err)
	}
	return errors.Join(errs...)
}

// property is one Kafka property name and how to set it.
type property struct {
	name string
	set  func(c *Config, v string) error
}

func durationMs(dst func(*Config) *time.Duration) func(*Config, string) error {
	return func(c *Config, v string) error {
		n, err := strconv.ParseInt(v, 10, 64)
		if err != nil {
			return err
		}
		*dst(c) = time.Duration(n) * time.Millisecond
		return nil
	}
}

func intProp(dst func(*Config) *int) func(*Config, string) error {
	return func(c *Config, v string) error {
		n, err := strconv.Atoi(v)
		if err == nil {
			*dst(c) = n
		}
		return err
	}
}

func int32Prop(dst func(*Config) *int32) func(*Config, string) error {
	return func(c *Config, v string) error {
		n, err := strconv.ParseInt(v, 10, 32)
		if err == nil {
			*dst(c) = int32(n)
		}
		return err
	}
}

func boolProp(dst func(*Config) *bool) func(*Config, string) error {
	return func(c *Config, v string) error {
		b, err := strconv.ParseBool(v)
		if err == nil {
			*dst(c) = b
		}
		return err
	}
}

func stringProp(dst func(*Config) *string) func(*Config, string) error {
	return func(c *Config, v string) error { *dst(c) = v; return nil }
}

// properties is the one table of Kafka property names this package reads.
var properties = []property{
	{"group.id", stringProp(func(c *Config) *string { return &c.GroupID })},
	{"consumer.id", stringProp(func(c *Config) *string { return &c.ConsumerID })},
	{"zookeeper.connect", stringProp(func(c *Config) *string { return &c.ZooKeeperConnect })},
	{"zookeeper.session.timeout.ms", durationMs(func(c *Config) *time.Duration { return &c.ZooKeeperSessionTimeout })},
	{"zookeeper.connection.timeout.ms", durationMs(func(c *Config) *time.Duration { return &c.ZooKeeperConnectionTimeout })},
	{"rebalance.max.retries", intProp(func(c *Config) *int { return &c.RebalanceMaxRetries })},
	{"rebalance.backoff.ms", durationMs(func(c *Config) *time.Duration { return &c.RebalanceBackoff })},
	{"rebalance.processing.wait.ms", durationMs(func(c *Config) *time.Duration { return &c.RebalanceProcessingWait })},
	{"auto.offset.reset", stringProp(func(c *Config) *string { return &c.AutoOffsetReset })},
	{"auto.commit.enable", boolProp(func(c *Config) *bool { return &c.AutoCommitEnable })},
	{"auto.commit.interval.ms", durationMs(func(c *Config) *time.Duration { return &c.AutoCommitInterval })},
	{"offsets.storage", stringProp(func(c *Config) *string { return &c.OffsetsStorage })},
	{"dual.commit.enabled", boolProp(func(c *Config) *bool { return &c.DualCommitEnabled })},
	{"offsets.commit.max.retries", intProp(func(c *Config) *int { return &c.OffsetsCommitMaxRetries })},
	{"offsets.channel.backoff.ms", durationMs(func(c *Config) *time.Duration { return &c.OffsetsChannelBackoff })},
	{"consumer.timeout.ms", durationMs(func(c *Config) *time.Duration { return &c.ConsumerTimeout })},
	{"fetch.message.max.bytes", int32Prop(func(c *Config) *int32 { return &c.FetchMessageMaxBytes })},
	{"fetch.min.bytes", int32Prop(func(c *Config) *int32 { return &c.FetchMinBytes })},
	{"fetch.wait.max.ms", durationMs(func(c *Config) *time.Duration { return &c.FetchWaitMax })},
	{"queued.max.message.chunks", intProp(func(c *Config) *int { return &c.QueuedMaxMessageChunks })},
	{"refresh.leader.backoff.ms", durationMs(func(c *Config) *time.Duration { return &c.RefreshLeaderBackoff })},
	{"socket.timeout.ms", durationMs(func(c *Config) *time.Duration { return &c.SocketTimeout })},
	{"partition.assignment.strategy", stringProp(func(c *Config) *string { return &c.PartitionAssignmentStrategy })},
	{"exclude.internal.topics", boolProp(func(c *Config) *bool { return &c.ExcludeInternalTopics })},
	{"client.id", stringProp(func(c *Config) *string { return &c.ClientID })},
}

// ParseProperties builds a Config from Kafka property names over
// DefaultConfig. Unknown keys are returned (sorted) for the caller to warn
// about, as Kafka's VerifiableProperties does; bad values are errors. As in
// Kafka, dual.commit.enabled defaults to offsets.storage == kafka when
// absent.
func ParseProperties(props map[string]string) (Config, []string, error) {
	c := DefaultConfig()
	known := make(map[string]property, len(properties))
	for _, p := range properties {
		known[p.name] = p
	}
	var unknown []string
	var errs []error
	for k, v := range props {
		p, ok := known[k]
		if !ok {
			unknown = append(unknown, k)
			continue
		}
		if err := p.set(&c, strings.TrimSpace(v)); err != nil {
			errs = append(errs, fmt.Errorf("zkconsumer: property %s=%q: %w", k, v, err))
		}
	}
	if _, ok := props["dual.commit.enabled"]; !ok {
		c.DualCommitEnabled = c.OffsetsStorage == StorageKafka
	}
	sort.Strings(unknown)
	sort.Slice(errs, func(i, j int) bool { return errs[i].Error() < errs[j].Error() })
	return c, unknown, errors.Join(append(errs, c.Validate())...)
}
