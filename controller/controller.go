package controller

import (
	"context"
	"errors"
	"sync"
	"sync/atomic"

	"github.com/sirupsen/logrus"

	"samsa/kafka"
)

// Controller is one broker's controller module. Every broker runs one: it competes for
// /controller, and while it holds it (IsActive) it runs the controller duties on a single
// event goroutine. Methods are safe for concurrent use.
type Controller struct {
	cfg      Config
	store    Store
	log      logrus.FieldLogger
	queue    *eventQueue
	channels *ChannelManager
	metrics  *controllerMetrics
	versions requestVersions

	active   atomic.Bool  // this broker is the controller
	epoch    atomic.Int32 // epoch of the last election this broker won
	activeID atomic.Int32 // broker id in /controller as last seen, -1 when none

	// Owned by the event goroutine (and by Shutdown once that goroutine has ended).
	cc            *controllerContext // nil unless active
	batch         *requestBatch
	dutyWatches   []func()          // cancels of the active controller's watches
	topicWatches  map[string]func() // cancels of PartitionModifications watches
	brokerWatches map[int32]func()  // cancels of BrokerModifications watches
	// reassignWatches cancels the state watches of partitions being reassigned.
	reassignWatches map[kafka.TopicPartition]func()
	tenure          uint64      // counts elections won; tags timers of a tenure
	stopRebalance   func() bool // stops the auto leader rebalance timer; nil when not armed

	lifecycle sync.Mutex         // serialises Start and Shutdown
	cancel    context.CancelFunc // guarded by lifecycle; nil before Start
	done      chan struct{}      // closed when the event goroutine ends
	unwatch   []func()           // guarded by lifecycle: /controller watch, session hook
}

// New returns a Controller; it does nothing until Start.
func New(cfg Config) (*Controller, error) {
	cfg, err := cfg.withDefaults()
	if err != nil {
		return nil, err
	}
	log := cfg.Logger.WithFields(logrus.Fields{"component": "controller", "broker": cfg.BrokerID})
	c := &Controller{
		cfg:      cfg,
		store:    cfg.Store,
		log:      log,
		queue:    newEventQueue(),
		versions: requestVersions{cfg.LeaderAndIsrVersion, cfg.UpdateMetadataVersion, cfg.StopReplicaVersion},
		batch:    newRequestBatch(),
		done:     make(chan struct{}),
	}
	c.channels = newChannelManager(cfg.Dialer, cfg.InterBrokerListener, cfg.RequestTimeout, cfg.RetryBackoff, log)
	c.metrics = newControllerMetrics(cfg.Metrics, func() int64 { return int64(c.queue.size()) })
	c.activeID.Store(-1)
	return c, nil
}

// Start registers the /controller watch and the new-session hook, starts the event
// goroutine and queues the first election. It returns at once; the goroutine runs until
// Shutdown or until ctx ends.
func (c *Controller) Start(ctx context.Context) error {
	c.lifecycle.Lock()
	defer c.lifecycle.Unlock()
	if c.cancel != nil {
		return errors.New("controller: already started")
	}
	ctx, c.cancel = context.WithCancel(ctx)
	c.unwatch = append(c.unwatch,
		c.store.WatchController(func() { c.enqueue(controllerChangeEvent{}) }),
		c.store.OnNewSession(func() { c.enqueue(sessionRenewedEvent{}) }),
	)
	c.enqueue(startupEvent{})
	go c.run(ctx)
	return nil
}

// Shutdown stops the event goroutine, resigns if this broker is the controller (without
// deleting /controller: it goes away with the broker's ZooKeeper session, as in Kafka) and
// stops every sender goroutine. It waits for all of them; it is safe to call more than once
// and before Start.
func (c *Controller) Shutdown() {
	c.lifecycle.Lock()
	defer c.lifecycle.Unlock()
	if c.cancel != nil {
		c.cancel()
		<-c.done
		for _, f := range c.unwatch {
			if f != nil {
				f()
			}
		}
		c.unwatch = nil
		if c.active.Load() {
			c.onControllerResignation()
		}
	}
	c.channels.Shutdown()
}

// IsActive reports whether this broker is the active controller.
func (c *Controller) IsActive() bool { return c.active.Load() }

// Epoch returns the controller epoch of the last election this broker won (0 if none).
func (c *Controller) Epoch() int32 { return c.epoch.Load() }

// ActiveControllerID returns the broker id this broker last saw in /controller, or -1.
func (c *Controller) ActiveControllerID() int32 { return c.activeID.Load() }

// enqueue queues ev; it never blocks (ZooKeeper callbacks call it).
func (c *Controller) enqueue(ev event) { c.queue.put(ev, c.cfg.Now()) }

// awaitReply waits for the event goroutine's answer on reply to a request event: the error
// is ErrNotController once the controller has stopped, or ctx's when ctx ends first.
func awaitReply[R any](ctx context.Context, c *Controller, reply <-chan R) (R, error) {
	select {
	case r := <-reply:
		return r, nil
	case <-c.done:
		var zero R
		return zero, ErrNotController
	case <-ctx.Done():
		var zero R
		return zero, ctx.Err()
	}
}

// sync runs fn on the event goroutine and waits for it, or for ctx or the goroutine's end.
func (c *Controller) sync(ctx context.Context, fn func()) error {
	done := make(chan struct{})
	c.enqueue(funcEvent{fn: fn, done: done})
	select {
	case <-done:
		return nil
	case <-c.done:
		return errors.New("controller: stopped")
	case <-ctx.Done():
		return ctx.Err()
	}
}

// run is the event goroutine (Kafka's ControllerEventThread).
func (c *Controller) run(ctx context.Context) {
	defer close(c.done)
	for {
		select {
		case <-ctx.Done():
			return
		case <-c.queue.signal:
		}
		for _, qe := range c.queue.takeAll() {
			if ctx.Err() != nil {
				return
			}
			c.metrics.observeQueueTime(c.cfg.Now().Sub(qe.at))
			c.process(qe.ev)
		}
	}
}

// finishEvent sends the event's request batch and handles its error.
func (c *Controller) finishEvent(ev event, err error) {
	if errors.Is(err, ErrControllerMoved) {
		c.log.WithError(err).WithField("event", ev.name()).
			Info("controller: controller moved to another broker; resigning")
		c.onControllerMoved()
		return
	}
	if err != nil {
		c.log.WithError(err).WithField("event", ev.name()).Error("controller: error processing event")
	}
	c.sendBatch()
	c.metrics.update(c.cc)
}

// sendBatch sends the queued control requests, if this broker is still active.
func (c *Controller) sendBatch() {
	if c.cc == nil || c.batch.empty() {
		c.batch = newRequestBatch()
		return
	}
	epoch := c.cc.epoch
	c.batch.send(c.cc, c.cfg.BrokerID, c.channels, c.versions, c.log, &responseHooks{
		onDeleted: func(broker int32, results map[kafka.TopicPartition]error) {
			c.enqueue(replicaDeletionResponseEvent{broker: broker, results: results})
		},
		onLeaderAndIsr: func(broker int32, brokerEpoch int64, o leaderAndIsrOutcome) {
			c.enqueue(leaderAndIsrResponseEvent{broker: broker, brokerEpoch: brokerEpoch, controllerEpoch: epoch, outcome: o})
		},
	})
}
