package storage

import (
	"context"
	"errors"
	"sync"
	"sync/atomic"
	"time"

	"github.com/sirupsen/logrus"

	"samsa/broker/record"
	"samsa/kafka"
)

// CleanerConfig holds the broker-wide log.cleaner.* settings (per-topic
// ones are in Config).
type CleanerConfig struct {
	// Threads is log.cleaner.threads: goroutines cleaning logs at once.
	Threads int
	// DedupeBufferSize is log.cleaner.dedupe.buffer.size: the memory for
	// offset maps, split evenly across Threads.
	DedupeBufferSize int64
	// IOBufferLoadFactor is log.cleaner.io.buffer.load.factor: the share
	// of an offset map's memory that may be filled.
	IOBufferLoadFactor float64
	// IOBufferSize is log.cleaner.io.buffer.size: the write buffer of each
	// thread (Kafka splits it between read and write buffers).
	IOBufferSize int
	// Backoff is log.cleaner.backoff.ms: the pause when no log needs
	// cleaning.
	Backoff time.Duration
}

// DefaultCleanerConfig returns Kafka 2.8's defaults.
func DefaultCleanerConfig() CleanerConfig {
	return CleanerConfig{
		Threads:            1,
		DedupeBufferSize:   128 << 20,
		IOBufferLoadFactor: 0.9,
		IOBufferSize:       512 << 10,
		Backoff:            15 * time.Second,
	}
}

// CleanerOptions configure NewCleaner.
type CleanerOptions struct {
	Config CleanerConfig
	FS     FS // nil: OSFS
	// Logs returns the logs the cleaner may compact (the Manager's logs).
	// Logs whose cleanup.policy does not include compact are skipped. It
	// is called from cleaner goroutines and must be safe for that.
	Logs   func() []*Log
	Logger logrus.FieldLogger // nil: discard
	Now    func() time.Time   // nil: time.Now
}

// Cleaner compacts logs whose cleanup.policy includes "compact" (Kafka's
// LogCleaner and LogCleanerManager). Each of Config.Threads goroutines
// repeatedly picks the log with the highest dirty ratio above its
// min.cleanable.dirty.ratio, cleans it once and records the new first
// dirty offset in "<log dir>/cleaner-offset-checkpoint".
//
// Concurrency: Start launches the goroutines; Stop stops them and waits.
// CleanOnce, PauseCleaning, ResumeCleaning and the checkpoint methods are
// safe to call from any goroutine. A log is cleaned by at most one
// goroutine at a time. Cleaning reads non-active segments without the
// log's lock and takes it only to swap the result in. Lock order:
// ckptMu → Manager.mu (through Logs); mu is never held while a log's lock
// is taken.
type Cleaner struct {
	cfg    CleanerConfig                 // immutable after NewCleaner
	fs     FS                            // immutable after NewCleaner
	logs   atomic.Pointer[func() []*Log] // set by NewCleaner or ManagedService().Start
	logger logrus.FieldLogger            // immutable after NewCleaner
	now    func() time.Time              // immutable after NewCleaner

	ckptMu    sync.Mutex                                // serialises cleaner-offset-checkpoint read-modify-writes
	ckptCache map[string]map[kafka.TopicPartition]int64 // guarded by ckptMu; contents of each checkpoint file by path

	mu struct {
		sync.Mutex
		inProgress  map[*Log]*cleaning // guarded by mu
		paused      map[*Log]int       // guarded by mu; pause depth
		uncleanable map[*Log]error     // guarded by mu; logs whose data failed a pass
		cancel      context.CancelFunc // guarded by mu; nil when not started
	}
	wg sync.WaitGroup // the Start goroutines
}

// testHookCleanerPass, when set by a test, runs on the cleaning goroutine
// with no lock held: "counted" after the truncation counts of the
// candidate logs were taken and before their checkpoints are read;
// "mapped" after the offset map was built; "swap" before each swap takes
// the log's lock; "checkpoint" after a pass
// swapped its segments in and before it writes the checkpoint. (testHookCleanerSwap covers the swap itself.)
var testHookCleanerPass func(stage string)

// cleaning tracks one in-progress pass.
type cleaning struct {
	abort atomic.Bool
	done  chan struct{} // closed when the pass ends
}

// NewCleaner returns a stopped Cleaner.
func NewCleaner(opts CleanerOptions) *Cleaner {
	defaultDeps(&opts.FS, &opts.Now, &opts.Logger)
	if opts.Config.Threads < 1 {
		opts.Config.Threads = 1
	}
	if opts.Config.IOBufferLoadFactor <= 0 || opts.Config.IOBufferLoadFactor > 1 {
		opts.Config.IOBufferLoadFactor = 0.9
	}
	if opts.Config.IOBufferSize <= 0 {
		opts.Config.IOBufferSize = 512 << 10
	}
	c := &Cleaner{
		cfg:    opts.Config,
		fs:     opts.FS,
		logger: opts.Logger.WithField("component", "storage"),
		now:    opts.Now,
	}
	if opts.Logs != nil {
		c.logs.Store(&opts.Logs)
	}
	c.mu.inProgress = make(map[*Log]*cleaning)
	c.mu.paused = make(map[*Log]int)
	c.mu.uncleanable = make(map[*Log]error)
	return c
}

// currentLogs returns the logs to consider, none before they are known.
func (c *Cleaner) currentLogs() []*Log {
	if fn := c.logs.Load(); fn != nil {
		return (*fn)()
	}
	return nil
}

// ManagedService adapts c to the Manager's ManagedService: Start(m) makes
// c clean m's logs (unless CleanerOptions.Logs was given) and starts the
// goroutines; Stop stops them and waits. Pass it as ManagerConfig.Cleaner.
func (c *Cleaner) ManagedService() ManagedService { return cleanerService{c} }

type cleanerService struct{ c *Cleaner }

// Start implements ManagedService.
func (s cleanerService) Start(m *Manager) {
	fn := m.Logs
	s.c.logs.CompareAndSwap(nil, &fn)
	s.c.Start(context.Background())
}

// Stop implements ManagedService; it waits for the goroutines.
func (s cleanerService) Stop() { s.c.Stop(context.Background()) }

// newRun returns the per-goroutine state: an offset map holding this
// thread's share of the dedupe buffer, times the load factor.
func (c *Cleaner) newRun() *cleanRun {
	limit := int64(float64(c.cfg.DedupeBufferSize/int64(c.cfg.Threads)) * c.cfg.IOBufferLoadFactor)
	return &cleanRun{
		om:    newOffsetMap(limit),
		ioBuf: make([]byte, 0, c.cfg.IOBufferSize),
	}
}

// Start launches Config.Threads cleaner goroutines. They run until Stop or
// until ctx is done. Calling Start twice without Stop does nothing.
func (c *Cleaner) Start(ctx context.Context) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.mu.cancel != nil {
		return
	}
	ctx, cancel := context.WithCancel(ctx)
	c.mu.cancel = cancel
	for i := 0; i < c.cfg.Threads; i++ {
		c.wg.Add(1)
		go c.run(ctx, i)
	}
}

// Stop stops the goroutines, aborting passes in progress (their partial
// output is removed), and waits for them or for ctx.
func (c *Cleaner) Stop(ctx context.Context) error {
	c.mu.Lock()
	cancel := c.mu.cancel
	c.mu.cancel = nil
	for _, st := range c.mu.inProgress {
		st.abort.Store(true)
	}
	c.mu.Unlock()
	if cancel != nil {
		cancel()
	}
	done := make(chan struct{})
	go func() {
		c.wg.Wait()
		close(done)
	}()
	select {
	case <-done:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}

// run is one cleaner goroutine: clean the filthiest log, or back off.
func (c *Cleaner) run(ctx context.Context, thread int) {
	defer c.wg.Done()
	r := c.newRun()
	logger := c.logger.WithField("cleaner_thread", thread)
	for ctx.Err() == nil {
		cleaned, err := c.cleanFilthiest(ctx, r)
		if err != nil && !errors.Is(err, errCleaningAborted) {
			logger.WithError(err).Warn("storage: log cleaning failed")
		}
		if cleaned && err == nil {
			continue
		}
		t := time.NewTimer(c.cfg.Backoff)
		select {
		case <-ctx.Done():
			t.Stop()
			return
		case <-t.C:
		}
	}
}

// CleanOnce cleans the log that needs it most, once, on the calling
// goroutine, and reports whether there was one. It blocks for the whole
// pass. Tests and tools use it; the Start goroutines do the same in a loop.
func (c *Cleaner) CleanOnce(ctx context.Context) (bool, error) {
	return c.cleanFilthiest(ctx, c.newRun())
}

// cleanFilthiest picks the compacted log with the highest dirty ratio that
// qualifies (Kafka's grabFilthiestCompactedLog), cleans it and updates its
// checkpoint.
func (c *Cleaner) cleanFilthiest(ctx context.Context, r *cleanRun) (bool, error) {
	now := c.now()
	var best *logToClean
	logs := c.currentLogs()
	c.pruneUncleanable(logs)
	// Truncation counts first, checkpoints after (cleaner_checkpoint.go,
	// rule 1): a truncation counted here has lowered the checkpoint already.
	type candidate struct {
		l           *Log
		cfg         Config
		truncations int64
	}
	var cands []candidate
	for _, l := range logs {
		cfg := l.Config()
		if !cfg.CleanupPolicy.Compacts() || l.Failed() != nil || c.busy(l) {
			continue
		}
		cands = append(cands, candidate{l: l, cfg: cfg, truncations: l.truncationCount()})
	}
	if testHookCleanerPass != nil && len(cands) > 0 {
		testHookCleanerPass("counted")
	}
	checkpoints := make(map[string]map[kafka.TopicPartition]int64) // per log dir, read once
	for _, cd := range cands {
		l := cd.l
		path := checkpointPathFor(l)
		cp, seen := checkpoints[path]
		if !seen {
			var err error
			if cp, err = c.readCheckpoint(path); err != nil {
				// An unreadable checkpoint only costs a full re-clean.
				c.logger.WithError(err).WithField("file", path).Warn("storage: ignoring unreadable cleaner checkpoint")
			}
			checkpoints[path] = cp
		}
		off, ok := cp[l.tp]
		ltc, err := newLogToClean(l, cd.truncations, off, ok, now)
		if err != nil {
			c.logger.WithError(err).WithFields(logrus.Fields{"topic": l.tp.Topic, "partition": l.tp.Partition}).
				Warn("storage: computing cleanable range failed")
			continue
		}
		if !ltc.shouldClean(cd.cfg) {
			continue
		}
		if best == nil || ltc.ratio() > best.ratio() {
			best = ltc
		}
	}
	if best == nil {
		return false, nil
	}
	return true, c.cleanLog(ctx, r, best)
}

// busy reports whether l is being cleaned, paused or uncleanable.
func (c *Cleaner) busy(l *Log) bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.mu.inProgress[l] != nil || c.mu.paused[l] > 0 || c.mu.uncleanable[l] != nil
}

// pruneUncleanable forgets uncleanable logs that are gone.
func (c *Cleaner) pruneUncleanable(logs []*Log) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if len(c.mu.uncleanable) == 0 {
		return
	}
	present := make(map[*Log]bool, len(logs))
	for _, l := range logs {
		present[l] = true
	}
	for l := range c.mu.uncleanable {
		if !present[l] {
			delete(c.mu.uncleanable, l)
		}
	}
}

// UncleanablePartitions lists the logs whose data made a pass fail (a
// corrupt batch, a record that cannot be decoded or re-encoded); they are
// skipped until the broker restarts (Kafka's uncleanable partitions, KIP-346).
func (c *Cleaner) UncleanablePartitions() []kafka.TopicPartition {
	c.mu.Lock()
	defer c.mu.Unlock()
	out := make([]kafka.TopicPartition, 0, len(c.mu.uncleanable))
	for l := range c.mu.uncleanable {
		out = append(out, l.tp)
	}
	return out
}

// isDataError reports whether err comes from the log's content rather than
// from the disk or a concurrent change: retrying would fail again.
func isDataError(err error) bool {
	return errors.Is(err, ErrCorrupt) || errors.Is(err, record.ErrCorrupt) ||
		errors.Is(err, record.ErrInvalidRecord) || errors.Is(err, record.ErrTooLarge)
}

// cleanLog runs one pass over ltc.log and checkpoints the result.
func (c *Cleaner) cleanLog(ctx context.Context, r *cleanRun, ltc *logToClean) error {
	l := ltc.log
	st := &cleaning{done: make(chan struct{})}
	c.mu.Lock()
	if c.mu.inProgress[l] != nil || c.mu.paused[l] > 0 {
		c.mu.Unlock()
		return errCleaningAborted
	}
	c.mu.inProgress[l] = st
	c.mu.Unlock()
	defer func() {
		c.mu.Lock()
		delete(c.mu.inProgress, l)
		c.mu.Unlock()
		close(st.done)
	}()
	r.aborted = func() bool { return st.abort.Load() || ctx.Err() != nil }

	start := c.now()
	end, err := r.clean(ltc)
	if err != nil && l.truncations.Load() != ltc.truncations {
		// The log was cut under the pass: whatever failed, it read data
		// that is gone (cleaner_checkpoint.go, rule 4).
		err = errCleaningAborted
	}
	if err != nil {
		if isDataError(err) {
			c.mu.Lock()
			c.mu.uncleanable[l] = err
			c.mu.Unlock()
			c.logger.WithError(err).WithFields(logrus.Fields{"topic": l.tp.Topic, "partition": l.tp.Partition}).
				Error("storage: log cannot be cleaned; skipping it until restart")
		}
		return err
	}
	if testHookCleanerPass != nil {
		testHookCleanerPass("checkpoint")
	}
	if err := c.updateCheckpoint(l, end, ltc.truncations); err != nil {
		return err
	}
	c.logger.WithFields(logrus.Fields{
		"topic": l.tp.Topic, "partition": l.tp.Partition,
		"first_dirty": ltc.firstDirty, "cleaned_to": end, "dirty_ratio": ltc.ratio(),
		"segments": r.stats.segments, "bytes_read": r.stats.bytesRead, "bytes_written": r.stats.bytesWritten,
		"records_read": r.stats.recordsRead, "records_retained": r.stats.recordsRetained,
		"tombstones_removed": r.stats.tombstonesDrop, "keys_mapped": r.om.size(), "map_utilization": r.om.utilization(),
		"duration": c.now().Sub(start),
	}).Info("storage: cleaned log")
	return nil
}

// PauseCleaning stops cleaning of l until a matching ResumeCleaning: a pass
// in progress is aborted and waited for (or ctx ends the wait), so the
// caller must not hold l's lock. Truncation and deletion do not need it
// (cleaner_checkpoint.go explains why a pass cannot swap in or checkpoint
// pre-truncation data); it is for callers that want no cleaning at all for
// a while. Calls nest.
func (c *Cleaner) PauseCleaning(ctx context.Context, l *Log) error {
	c.mu.Lock()
	c.mu.paused[l]++
	st := c.mu.inProgress[l]
	c.mu.Unlock()
	if st == nil {
		return nil
	}
	st.abort.Store(true)
	select {
	case <-st.done:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}

// ResumeCleaning undoes one PauseCleaning.
func (c *Cleaner) ResumeCleaning(l *Log) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.mu.paused[l] <= 1 {
		delete(c.mu.paused, l)
		return
	}
	c.mu.paused[l]--
}
