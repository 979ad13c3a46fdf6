package zkconsumer

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"sync"
	"time"

	"github.com/IBM/sarama"
	"github.com/sirupsen/logrus"

	"samsa/kafka"
	"samsa/zkutil"
)

// Connector is one member of an old-style consumer group, Kafka's
// ZookeeperConsumerConnector. Create it with NewConnector, subscribe once
// with CreateMessageStreams or CreateMessageStreamsByFilter, read the
// returned streams, and Close it.
type Connector struct {
	cfg     Config
	log     logrus.FieldLogger
	zk      *zkutil.Client
	id      string
	assign  Assignor
	metrics *connectorMetrics

	wake chan struct{} // rebalance trigger (capacity 1): watches only signal
	quit chan struct{} // closed by Close
	// idle (capacity 1) is signalled when a stream marks its message
	// processed while streams are paused.
	idle chan struct{}
	wg   sync.WaitGroup

	// ctx ends with Close; it bounds the background rebalances and commits.
	ctx    context.Context
	cancel context.CancelFunc

	closeOnce sync.Once

	// commitMu serialises commits with the commit-and-release step of a
	// rebalance, so a commit never writes for a partition already released.
	// Order: commitMu before mu.
	commitMu sync.Mutex

	mu struct {
		sync.Mutex
		gen uint64 // bumped when fetchers stop; older messages are stale
		// resume is non-nil while streams are paused (from the start of a
		// rebalance's release step until the rebalance ends, and from Close
		// on); closing it lets Next hand out messages again.
		resume     chan struct{}
		closing    bool // Close began: streams stay paused
		sub        *subscription
		regTime    int64
		streams    map[streamKey]*Stream
		owned      map[kafka.TopicPartition]*partState // Kafka's topicRegistry
		newSession bool
		rebalances int
		lastErr    error
	}

	// saramaMu guards the lazily created Sarama client. Order: commitMu →
	// saramaMu; mu is never held while taking it.
	saramaMu struct {
		sync.Mutex
		client   sarama.Client
		consumer sarama.Consumer
		dialing  chan struct{} // closed when the creation attempt in flight ends
		err      error         // of the last failed attempt
		closed   bool
		wg       sync.WaitGroup // the creation goroutine
	}

	// Owned by the goroutine that rebalances (the caller of
	// CreateMessageStreams, then run): no lock.
	fetchers     map[kafka.TopicPartition]*fetcher
	topicWatches map[string]func()
	brokerWatch  func()
	idsWatch     func()
	topicsWatch  func()
}

// partState is one owned partition in one generation: the offsets the
// commit path reads and writes.
type partState struct {
	tp        kafka.TopicPartition
	owner     ThreadID
	gen       uint64
	processed int64 // next offset after the last processed message; -1 unknown
	committed int64 // last value written to offset storage; -1 none
}

// NewConnector connects to ZooKeeper and prepares a consumer; nothing is
// registered until a CreateMessageStreams call.
func NewConnector(ctx context.Context, cfg Config) (*Connector, error) {
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	if cfg.ClientID == "" {
		cfg.ClientID = cfg.GroupID
	}
	if cfg.Host == "" {
		h, err := os.Hostname()
		if err != nil {
			h = "localhost"
		}
		cfg.Host = h
	}
	log := cfg.Logger
	if log == nil {
		l := logrus.New()
		l.SetOutput(io.Discard)
		log = l
	}
	assign, _ := AssignorFor(cfg.PartitionAssignmentStrategy)
	id, err := NewConsumerID(cfg.GroupID, cfg.ConsumerID, cfg.Host, time.Now())
	if err != nil {
		return nil, err
	}
	log = log.WithFields(logrus.Fields{"component": "zkconsumer", "group": cfg.GroupID, "member": id})
	zk, err := zkutil.Connect(ctx, zkutil.Config{
		Connect:           cfg.ZooKeeperConnect,
		SessionTimeout:    cfg.ZooKeeperSessionTimeout,
		ConnectionTimeout: cfg.ZooKeeperConnectionTimeout,
		Logger:            log,
	})
	if err != nil {
		return nil, fmt.Errorf("zkconsumer: connect to zookeeper: %w", err)
	}
	bg, cancel := context.WithCancel(context.Background())
	c := &Connector{
		ctx:          bg,
		cancel:       cancel,
		cfg:          cfg,
		log:          log,
		metrics:      newMetrics(cfg.Metrics),
		zk:           zk,
		id:           id,
		assign:       assign,
		wake:         make(chan struct{}, 1),
		quit:         make(chan struct{}),
		idle:         make(chan struct{}, 1),
		fetchers:     make(map[kafka.TopicPartition]*fetcher),
		topicWatches: make(map[string]func()),
	}
	c.mu.owned = make(map[kafka.TopicPartition]*partState)
	c.registerOwnedGauge()
	zk.OnNewSession(func() {
		c.mu.Lock()
		c.mu.newSession = true
		c.mu.Unlock()
		c.trigger()
	})
	return c, nil
}

// ConsumerID returns this member's id, "<group>_<host>-<ms>-<hex>".
func (c *Connector) ConsumerID() string { return c.id }

// trigger asks for a rebalance; it never blocks (watch callbacks call it).
func (c *Connector) trigger() {
	select {
	case c.wake <- struct{}{}:
	default:
	}
}

// CreateMessageStreams subscribes to topics with the given number of
// streams each, registers the consumer, runs the first rebalance and
// returns the streams per topic. It may be called once. If the first
// rebalance fails, the consumer leaves the group again and the Connector is
// only good for Close.
func (c *Connector) CreateMessageStreams(ctx context.Context, topicCount map[string]int) (map[string][]*Stream, error) {
	if len(topicCount) == 0 {
		return nil, errors.New("zkconsumer: no topics to consume")
	}
	for t, n := range topicCount {
		if err := zkutil.ValidateTopicName(t); err != nil {
			return nil, fmt.Errorf("zkconsumer: %w", err)
		}
		if n < 1 || n > MaxStreamsPerTopic {
			return nil, fmt.Errorf("zkconsumer: topic %s: stream count %d outside 1..%d", t, n, MaxStreamsPerTopic)
		}
	}
	static := make(map[string]int, len(topicCount))
	out := make(map[string][]*Stream, len(topicCount))
	streams := make(map[streamKey]*Stream)
	for t, n := range topicCount {
		static[t] = n
		for i := 0; i < n; i++ {
			s := c.newStream(streamKey{topic: t, thread: i})
			streams[s.key] = s
			out[t] = append(out[t], s)
		}
	}
	if err := c.consume(ctx, subscription{static: static}, streams); err != nil {
		return nil, err
	}
	return out, nil
}

// CreateMessageStreamsByFilter subscribes to every topic the filter
// allows, now and later, with numStreams streams shared by all those
// topics. It may be called once (instead of CreateMessageStreams).
func (c *Connector) CreateMessageStreamsByFilter(ctx context.Context, filter TopicFilter, numStreams int) ([]*Stream, error) {
	if numStreams < 1 || numStreams > MaxStreamsPerTopic {
		return nil, fmt.Errorf("zkconsumer: stream count %d outside 1..%d", numStreams, MaxStreamsPerTopic)
	}
	if _, err := filter.compile(c.cfg.ExcludeInternalTopics); err != nil {
		return nil, err
	}
	out := make([]*Stream, numStreams)
	streams := make(map[streamKey]*Stream)
	for i := range out {
		out[i] = c.newStream(streamKey{thread: i})
		streams[out[i].key] = out[i]
	}
	if err := c.consume(ctx, subscription{filter: filter, numStreams: numStreams}, streams); err != nil {
		return nil, err
	}
	return out, nil
}

func (c *Connector) newStream(k streamKey) *Stream {
	return &Stream{c: c, key: k, ch: make(chan *Message, c.cfg.QueuedMaxMessageChunks*100)}
}

// consume registers, arms the watches, runs the first rebalance and starts
// the background goroutine (Kafka's consume + reinitializeConsumer).
func (c *Connector) consume(ctx context.Context, sub subscription, streams map[streamKey]*Stream) error {
	c.mu.Lock()
	switch {
	case c.isClosed():
		c.mu.Unlock()
		return ErrClosed
	case c.mu.sub != nil:
		c.mu.Unlock()
		return errors.New("zkconsumer: streams were already created for this connector")
	}
	c.mu.sub = &sub
	c.mu.streams = streams
	c.mu.regTime = time.Now().UnixMilli()
	c.mu.Unlock()

	if err := c.register(); err != nil {
		return err
	}
	c.idsWatch = c.zk.WatchChildren(zkutil.ConsumerIDsPath(c.cfg.GroupID), c.trigger)
	if sub.wildcard() {
		c.topicsWatch = c.zk.WatchChildren(zkutil.TopicsPath(), c.trigger)
	}
	if err := c.syncedRebalance(ctx); err != nil {
		// Leave the group rather than stay registered without consuming.
		c.releaseAll(ctx, false)
		c.resumeStreams()
		c.cancelWatches()
		if derr := c.zk.DeregisterConsumer(c.cfg.GroupID, c.id); derr != nil {
			c.log.WithError(derr).Warn("deregistration after a failed first rebalance failed")
		}
		return err
	}
	c.wg.Add(1)
	go c.run()
	return nil
}

// cancelWatches stops every ZooKeeper watch of the connector.
func (c *Connector) cancelWatches() {
	for t, cancel := range c.topicWatches {
		cancel()
		delete(c.topicWatches, t)
	}
	for _, w := range []*func(){&c.idsWatch, &c.topicsWatch, &c.brokerWatch} {
		if *w != nil {
			(*w)()
			*w = nil
		}
	}
}

// register writes /consumers/<g>/ids/<id> (tolerating the node of this
// session: Kafka's checked ephemeral).
func (c *Connector) register() error {
	c.mu.Lock()
	reg := c.mu.sub.registration(c.mu.regTime)
	c.mu.Unlock()
	if err := c.zk.RegisterConsumer(c.cfg.GroupID, c.id, reg); err != nil {
		return fmt.Errorf("zkconsumer: register %s: %w", c.id, err)
	}
	c.log.Infof("registered consumer in zookeeper with subscription %v (%s)", reg.Subscription, reg.Pattern)
	return nil
}

func (c *Connector) isClosed() bool {
	select {
	case <-c.quit:
		return true
	default:
		return false
	}
}

// run is the watcher executor: it rebalances when a watch fired and
// commits every auto.commit.interval.ms.
func (c *Connector) run() {
	defer c.wg.Done()
	var tick <-chan time.Time
	if c.cfg.AutoCommitEnable {
		t := time.NewTicker(c.cfg.AutoCommitInterval)
		defer t.Stop()
		tick = t.C
	}
	ctx := c.ctx
	for {
		select {
		case <-c.quit:
			return
		case <-tick:
			if err := c.commit(ctx, 1); err != nil {
				c.log.WithError(err).Warn("auto commit failed")
			}
		case <-c.wake:
			c.mu.Lock()
			expired := c.mu.newSession
			c.mu.newSession = false
			c.mu.Unlock()
			if expired {
				c.handleNewSession()
			}
			if err := c.syncedRebalance(ctx); err != nil && !c.isClosed() {
				c.log.WithError(err).Error("rebalance failed; waiting for the next group or topic change")
			}
		}
	}
}

// handleNewSession runs after a ZooKeeper session expiry: the ephemeral
// owner znodes are gone, so ownership is dropped without commit or release
// (Kafka's resetState), and the consumer registers again.
func (c *Connector) handleNewSession() {
	c.log.Warn("zookeeper session expired; re-registering")
	c.stopFetchers()
	c.commitMu.Lock()
	c.mu.Lock()
	c.mu.owned = make(map[kafka.TopicPartition]*partState)
	c.mu.Unlock()
	c.commitMu.Unlock()
	// Bounded: a few attempts, the rebalance retries re-check registration.
	for attempt := 0; attempt < 3; attempt++ {
		err := c.register()
		if err == nil {
			return
		}
		c.log.WithError(err).Warn("re-registration failed")
		if !c.sleep(c.ctx, c.cfg.RebalanceBackoff) {
			return
		}
	}
}

// sleep waits d, or until Close or the end of ctx; it reports whether it
// waited the whole time.
func (c *Connector) sleep(ctx context.Context, d time.Duration) bool {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
		return true
	case <-c.quit:
		return false
	case <-ctx.Done():
		return false
	}
}

// Owned returns the partitions this consumer owns after its last
// successful rebalance, with the owning thread.
func (c *Connector) Owned() Assignment {
	c.mu.Lock()
	defer c.mu.Unlock()
	out := make(Assignment, len(c.mu.owned))
	for tp, ps := range c.mu.owned {
		out[tp] = ps.owner
	}
	return out
}

// Rebalances returns how many rebalances succeeded and the error of the
// last failed one (nil when the last one succeeded).
func (c *Connector) Rebalances() (int, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.mu.rebalances, c.mu.lastErr
}

// Close pauses the streams and waits up to rebalance.processing.wait.ms
// for the messages they handed out to be marked processed, stops fetching,
// commits processed offsets when auto.commit.enable is on, and closes the ZooKeeper session, which removes the registration
// and the owner znodes so the rest of the group rebalances. Streams return
// ErrClosed.
func (c *Connector) Close() error {
	var err error
	c.closeOnce.Do(func() {
		// Let the application finish the messages it holds, so that the
		// final commit includes them (rebalance.processing.wait.ms).
		c.mu.Lock()
		c.mu.closing = true
		c.mu.Unlock()
		wctx, wcancel := context.WithTimeout(context.Background(), c.cfg.RebalanceProcessingWait)
		c.pauseStreams(wctx)
		wcancel()
		close(c.quit)
		c.cancel()
		c.wg.Wait()
		c.stopFetchers()
		if c.cfg.AutoCommitEnable {
			ctx, cancel := context.WithTimeout(context.Background(), c.cfg.SocketTimeout)
			err = c.commit(ctx, 1)
			cancel()
		}
		c.cancelWatches()
		c.closeSarama()
		c.zk.Close()
		c.log.Info("consumer closed")
	})
	return err
}
