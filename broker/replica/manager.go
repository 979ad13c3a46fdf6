package replica

import (
	"context"
	"errors"
	"fmt"
	"io"
	"path/filepath"
	"slices"
	"sync"
	"sync/atomic"
	"time"

	"github.com/sirupsen/logrus"

	"samsa/broker/purgatory"
	"samsa/broker/storage"
	"samsa/kafka"
)

// TopicConfig is what a partition needs of its topic's configuration.
type TopicConfig struct {
	Log               storage.Config
	MinInsyncReplicas int
}

// LogProvider opens and deletes partition logs (the broker adapts
// storage.Manager to it; STYLE S1.4).
type LogProvider interface {
	// GetOrCreateLog returns the log of tp, creating it with cfg when it
	// does not exist. isNew is the LeaderAndIsr's IsNew: false says the
	// replica should exist here already, so while a log dir is offline a
	// missing log may be in it and must not be created empty elsewhere:
	// the provider then answers an error wrapping storage.ErrStorage
	// (Kafka's LogManager.getOrCreateLog), which takes the partition
	// offline.
	GetOrCreateLog(tp kafka.TopicPartition, cfg storage.Config, isNew bool) (*storage.Log, error)
	// DeleteLog closes and removes tp's log; a missing log is not an error.
	DeleteLog(tp kafka.TopicPartition) error
}

// Config configures a Manager.
type Config struct {
	BrokerID int32
	Logs     LogProvider
	// TopicConfig returns the effective configuration of a topic (broker
	// defaults plus its /config/topics overrides). Required.
	TopicConfig func(topic string) (TopicConfig, error)
	Logger      logrus.FieldLogger
	// ReplicaLagTimeMax is replica.lag.time.max.ms.
	ReplicaLagTimeMax time.Duration
	// Now and After are the clock (STYLE S6.11): Now reads it (ISR lag,
	// throttles); After returns a channel that receives once d has passed
	// on it (the ISR loop's intervals, the fetchers' error backoff and
	// quota pause). nil means time.Now and time.After.
	Now   func() time.Time
	After func(d time.Duration) <-chan time.Time
	// Fetcher configures the follower fetchers; a nil Source disables them.
	Fetcher FetcherConfig
	// Isr persists ISR expansions and shrinks; nil disables ISR
	// maintenance by the leader (the ISR then changes only through the
	// controller).
	Isr IsrStore
}

// Manager is the ReplicaManager of one broker.
type Manager struct {
	cfg Config             // immutable after New
	log logrus.FieldLogger // immutable after New

	// Produce holds acks=all produce requests waiting for the HW; Fetch
	// holds fetches waiting for data. Both are notified per partition.
	Produce *purgatory.Purgatory
	Fetch   *purgatory.Purgatory
	// LeaderThrottle and FollowerThrottle are the replication quotas
	// (throttle.go); the broker sets their rates and partitions from the
	// dynamic configs.
	LeaderThrottle   *Throttle
	FollowerThrottle *Throttle
	logEnd           logEndStart                      // log_end_start.go
	isrListener      atomic.Pointer[isrListenerBox]   // metrics.go
	topicListener    atomic.Pointer[topicListenerBox] // metrics.go

	controllerEpoch atomic.Int32 // highest controller epoch seen
	closed          atomic.Bool

	// stateChange serialises LeaderAndIsr, StopReplica and log dir
	// failures (Kafka's replicaStateChangeLock), so a partition taken
	// offline cannot get a fetcher back from a LeaderAndIsr applied at
	// the same time. Lock order: stateChange -> mu.
	stateChange sync.Mutex
	mu          struct {
		sync.RWMutex
		partitions map[kafka.TopicPartition]*Partition
		// offline holds the partitions whose log dir failed (offline.go);
		// a partition is in partitions or offline, never both.
		offline map[kafka.TopicPartition]struct{}
	}
	// offlineDirs are the log dirs HandleLogDirFailure took offline, by
	// dirKey. Its lock is a leaf: it is taken under Partition.mu.
	offlineDirs struct {
		sync.Mutex
		dirs map[string]bool
	}
	fetchers   *fetcherManager // owns the follower fetcher goroutines
	isrChanges isrPropagator   // partitions whose ISR this leader changed
	expander   isrExpander     // ISR expansions queued by follower fetches (isr_expand.go)
	// followerFetches: each follower broker's last session fetch (isr_caught_up.go)
	followerFetches followerFetches
	stop            context.CancelFunc
	wg              sync.WaitGroup // the ISR loop and the ISR expansion workers
}

// New returns a Manager. With Config.Isr it starts the ISR maintenance
// goroutine; the fetchers start when a LeaderAndIsr makes this broker a
// follower. Close stops them all.
func New(cfg Config) (*Manager, error) {
	if cfg.Logs == nil || cfg.TopicConfig == nil {
		return nil, fmt.Errorf("replica: Config.Logs and Config.TopicConfig are required")
	}
	if cfg.Logger == nil {
		l := logrus.New()
		l.SetOutput(io.Discard)
		cfg.Logger = l
	}
	if cfg.Now == nil {
		cfg.Now = time.Now
	}
	if cfg.After == nil {
		cfg.After = time.After
	}
	if cfg.ReplicaLagTimeMax <= 0 {
		cfg.ReplicaLagTimeMax = 30 * time.Second
	}
	m := &Manager{
		cfg:     cfg,
		log:     cfg.Logger.WithField("component", "replica"),
		Produce: purgatory.New("Produce"),
		Fetch:   purgatory.New("Fetch"),
	}
	m.LeaderThrottle, m.FollowerThrottle = NewThrottle(cfg.Now), NewThrottle(cfg.Now)
	m.mu.partitions = make(map[kafka.TopicPartition]*Partition)
	m.mu.offline = make(map[kafka.TopicPartition]struct{})
	m.offlineDirs.dirs = make(map[string]bool)
	m.fetchers = newFetcherManager(m, cfg.Fetcher)
	ctx, cancel := context.WithCancel(context.Background())
	m.stop = cancel
	if cfg.Isr != nil {
		m.wg.Add(1)
		go func() {
			defer m.wg.Done()
			m.isrLoop(ctx)
		}()
		m.startIsrExpanders(ctx)
	}
	return m, nil
}

// BrokerID returns the local broker id.
func (m *Manager) BrokerID() int32 { return m.cfg.BrokerID }

// ControllerEpoch returns the highest controller epoch seen.
func (m *Manager) ControllerEpoch() int32 { return m.controllerEpoch.Load() }

// ObserveControllerEpoch records epoch as seen, or returns
// ErrStaleControllerEpoch if a newer one was seen before (Kafka rejects
// every control request from an older controller).
func (m *Manager) ObserveControllerEpoch(epoch int32) error {
	for {
		cur := m.controllerEpoch.Load()
		if epoch < cur {
			return fmt.Errorf("%w: %d < %d", ErrStaleControllerEpoch, epoch, cur)
		}
		if epoch == cur || m.controllerEpoch.CompareAndSwap(cur, epoch) {
			return nil
		}
	}
}

// Partition returns the hosted partition tp, or nil (also when tp is
// offline: see IsOffline).
func (m *Manager) Partition(tp kafka.TopicPartition) *Partition {
	m.mu.RLock()
	defer m.mu.RUnlock()
	return m.mu.partitions[tp]
}

// Partitions returns every hosted partition, in no particular order; offline
// partitions are not among them.
func (m *Manager) Partitions() []*Partition {
	m.mu.RLock()
	defer m.mu.RUnlock()
	out := make([]*Partition, 0, len(m.mu.partitions))
	for _, p := range m.mu.partitions {
		out = append(out, p)
	}
	return out
}

// getOrCreatePartition returns tp's partition, creating it, or ErrOffline
// when tp is offline (it is never created again then).
func (m *Manager) getOrCreatePartition(tp kafka.TopicPartition) (*Partition, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	if _, off := m.mu.offline[tp]; off {
		return nil, offlineError(tp)
	}
	p, ok := m.mu.partitions[tp]
	if !ok {
		p = newPartition(m, tp)
		m.mu.partitions[tp] = p
	}
	return p, nil
}

// BecomeLeaderOrFollower applies a LeaderAndIsr request (Kafka
// ReplicaManager.becomeLeaderOrFollower). It returns
// ErrStaleControllerEpoch for the whole request, or one result per
// partition: nil, ErrStaleLeaderEpoch, ErrUnknownPartition (this broker is
// not a replica), ErrOffline (the partition is offline here: it is left
// as it is) or a storage error. A storage error (the log could not be
// opened or created, or it is in a failed log dir, or it is missing while
// a log dir is offline and the state is not IsNew: see LogProvider) takes
// the partition offline, as Kafka.
func (m *Manager) BecomeLeaderOrFollower(ctx context.Context, req LeaderAndIsr) (map[kafka.TopicPartition]error, error) {
	if m.closed.Load() {
		return nil, ErrShuttingDown
	}
	m.stateChange.Lock()
	defer m.stateChange.Unlock()
	if err := m.ObserveControllerEpoch(req.ControllerEpoch); err != nil {
		m.log.WithFields(logrus.Fields{"controller_epoch": req.ControllerEpoch}).
			Info("rejected LeaderAndIsr from a stale controller")
		return nil, err
	}
	now := m.cfg.Now()
	results := make(map[kafka.TopicPartition]error, len(req.Partitions))
	var follow []fetchTarget
	var stopFetching []kafka.TopicPartition
	// One config lookup per topic of the request, not per partition: a
	// lookup may be a ZooKeeper read, and a LeaderAndIsr after a broker
	// failure names thousands of partitions of a few topics.
	var configMu sync.Mutex
	configs := make(map[string]topicConfigResult)
	topicConfig := func(topic string) (TopicConfig, error) {
		configMu.Lock()
		defer configMu.Unlock()
		r, ok := configs[topic]
		if !ok {
			r.tc, r.err = m.cfg.TopicConfig(topic)
			configs[topic] = r
		}
		return r.tc, r.err
	}
	var offline []kafka.TopicPartition
	wave := make([]waveItem, 0, len(req.Partitions))
	for _, ps := range req.Partitions {
		// Offline first, as Kafka's becomeLeaderOrFollower.
		if m.IsOffline(ps.TopicPartition) {
			results[ps.TopicPartition] = offlineError(ps.TopicPartition)
			continue
		}
		if !slices.Contains(ps.Replicas, m.cfg.BrokerID) {
			results[ps.TopicPartition] = fmt.Errorf("%w: %s: broker %d not in replicas %v",
				ErrUnknownPartition, ps.TopicPartition, m.cfg.BrokerID, ps.Replicas)
			continue
		}
		p, err := m.getOrCreatePartition(ps.TopicPartition)
		if err != nil {
			results[ps.TopicPartition] = err
			continue
		}
		wave = append(wave, waveItem{ps: ps, p: p})
	}
	applyWave(wave, now, topicConfig)
	for _, w := range wave {
		ps, isLeader, err := w.ps, w.isLeader, w.err
		results[ps.TopicPartition] = err
		if offlineOnStorageError(err) {
			m.log.WithError(err).WithFields(logrus.Fields{"topic": ps.Topic, "partition": ps.Partition}).
				Error("LeaderAndIsr hit a storage error; the replica goes offline")
			offline = append(offline, ps.TopicPartition)
		}
		if err != nil {
			continue
		}
		if isLeader {
			stopFetching = append(stopFetching, ps.TopicPartition)
		} else {
			follow = append(follow, fetchTarget{tp: ps.TopicPartition, leader: ps.Leader, leaderEpoch: ps.LeaderEpoch})
		}
		m.notify(ps.TopicPartition)
	}
	m.markOffline(offline)
	m.fetchers.remove(stopFetching)
	m.fetchers.add(ctx, follow, req.LiveLeaders)
	return results, nil
}

// topicConfigResult is one memoised TopicConfig lookup.
type topicConfigResult struct {
	tc  TopicConfig
	err error
}

// applyLeaderAndIsr opens the log if needed and makes p leader or follower;
// topicConfig is the request's memoised Config.TopicConfig.
func (p *Partition) applyLeaderAndIsr(ps PartitionState, now time.Time,
	topicConfig func(string) (TopicConfig, error)) (isLeader bool, err error) {
	return p.applyLeaderAndIsrUpTo(ps, now, topicConfig, false)
}

// applyLeaderAndIsrUpTo is applyLeaderAndIsr; with openOnly it stops once
// the log is open (the sequential first stage of a wave, so that new logs
// are placed in request order).
func (p *Partition) applyLeaderAndIsrUpTo(ps PartitionState, now time.Time,
	topicConfig func(string) (TopicConfig, error), openOnly bool) (isLeader bool, err error) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.mu.leaderEpoch >= 0 && ps.LeaderEpoch <= p.mu.leaderEpoch {
		return false, fmt.Errorf("%w: %s: epoch %d, local %d", ErrStaleLeaderEpoch, p.tp, ps.LeaderEpoch, p.mu.leaderEpoch)
	}
	tc, err := topicConfig(p.tp.Topic)
	if err != nil {
		return false, fmt.Errorf("replica: %s: topic config: %w", p.tp, err)
	}
	p.mu.minISR = max(1, tc.MinInsyncReplicas)
	if p.mu.data == nil {
		l, err := p.m.cfg.Logs.GetOrCreateLog(p.tp, tc.Log, ps.IsNew)
		if err != nil {
			return false, fmt.Errorf("replica: %s: open log: %w", p.tp, err)
		}
		// A log found in a failed dir (loaded before the dir failed, or
		// created just before) is never served.
		if p.m.dirOffline(logRoot(l)) {
			return false, fmt.Errorf("replica: %s: log dir %s is offline: %w", p.tp, filepath.Dir(l.Dir()), storage.ErrStorage)
		}
		if err := l.Failed(); err != nil {
			return false, fmt.Errorf("replica: %s: log failed: %w", p.tp, err)
		}
		p.mu.data = l
	}
	if openOnly {
		return false, nil
	}
	if ps.Leader == p.m.cfg.BrokerID {
		return true, p.makeLeaderLocked(ps, now)
	}
	p.makeFollowerLocked(ps)
	return false, nil
}

// StopReplicas applies a StopReplica request (Kafka
// ReplicaManager.stopReplicas): the partitions stop being served, and with
// Delete their logs are removed; a topic left with no hosted partition by
// a delete is reported to the TopicListener. Partitions this broker does
// not host succeed; offline partitions answer ErrOffline and are left as
// they are (Kafka's stopReplicas).
func (m *Manager) StopReplicas(req StopReplica) (map[kafka.TopicPartition]error, error) {
	if err := m.ObserveControllerEpoch(req.ControllerEpoch); err != nil {
		return nil, err
	}
	m.stateChange.Lock()
	defer m.stateChange.Unlock()
	results := make(map[kafka.TopicPartition]error, len(req.Partitions))
	var stop []kafka.TopicPartition
	for _, sp := range req.Partitions {
		if m.IsOffline(sp.TopicPartition) {
			results[sp.TopicPartition] = offlineError(sp.TopicPartition)
			continue
		}
		p := m.Partition(sp.TopicPartition)
		if p != nil && sp.LeaderEpoch != EpochDuringDelete && sp.LeaderEpoch != NoEpoch {
			p.mu.RLock()
			local := p.mu.leaderEpoch
			p.mu.RUnlock()
			if sp.LeaderEpoch <= local {
				results[sp.TopicPartition] = fmt.Errorf("%w: %s: epoch %d, local %d",
					ErrFencedLeaderEpoch, sp.TopicPartition, sp.LeaderEpoch, local)
				continue
			}
		}
		stop = append(stop, sp.TopicPartition)
	}
	m.fetchers.remove(stop)
	var deleted map[string]bool
	for _, sp := range req.Partitions {
		if _, done := results[sp.TopicPartition]; done {
			continue
		}
		results[sp.TopicPartition] = m.stopPartition(sp)
		if sp.Delete {
			if deleted == nil {
				deleted = map[string]bool{}
			}
			deleted[sp.Topic] = true
		}
	}
	m.topicsRemoved(deleted)
	return results, nil
}

func (m *Manager) stopPartition(sp StopPartition) error {
	m.mu.Lock()
	p := m.mu.partitions[sp.TopicPartition]
	delete(m.mu.partitions, sp.TopicPartition)
	m.mu.Unlock()
	if p != nil {
		p.mu.Lock()
		p.mu.leader = -1
		p.mu.followers = nil
		p.mu.Unlock()
		m.notify(sp.TopicPartition)
		p.log.WithField("delete", sp.Delete).Info("stopped replica")
	}
	if !sp.Delete {
		return nil
	}
	if err := m.cfg.Logs.DeleteLog(sp.TopicPartition); err != nil {
		return fmt.Errorf("replica: delete log %s: %w", sp.TopicPartition, err)
	}
	return nil
}

// notify wakes the waiters of tp in both purgatories.
func (m *Manager) notify(tp kafka.TopicPartition) {
	m.Produce.Notify(tp)
	m.Fetch.Notify(tp)
}

// Close stops the follower fetchers and wakes every parked request; parked
// requests then fail with ErrShuttingDown or NOT_LEADER. It does not close
// the logs (the storage.Manager's owner does).
func (m *Manager) Close() {
	if m.closed.Swap(true) {
		return
	}
	m.stop()
	m.wg.Wait()
	m.fetchers.close()
	m.Produce.NotifyAll()
	m.Fetch.NotifyAll()
}

// UpdateTopicConfig applies a changed topic configuration to every hosted
// partition of topic (the dynamic config change path): the logs' settings
// and min.insync.replicas.
func (m *Manager) UpdateTopicConfig(topic string, tc TopicConfig) error {
	var errs []error
	for _, p := range m.Partitions() {
		if p.tp.Topic != topic {
			continue
		}
		p.mu.Lock()
		p.mu.minISR = max(1, tc.MinInsyncReplicas)
		l := p.mu.data
		p.mu.Unlock()
		if l != nil {
			if err := l.SetConfig(tc.Log); err != nil {
				errs = append(errs, fmt.Errorf("replica: %s: %w", p.tp, err))
			}
		}
	}
	return errors.Join(errs...)
}
