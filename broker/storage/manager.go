package storage

import (
	"errors"
	"fmt"
	"path/filepath"
	"sort"
	"sync"
	"time"

	"github.com/sirupsen/logrus"

	"samsa/kafka"
)

// ManagerConfig configures NewManager. Zero durations take Kafka's
// defaults.
type ManagerConfig struct {
	Dirs   []string           // log.dirs
	FS     FS                 // nil: OSFS
	Logger logrus.FieldLogger // nil: discard
	Now    func() time.Time   // nil: time.Now

	// LogConfig is the broker-wide default per-log config; ConfigFor, when
	// set, gives the config of a log found on disk at Load (topic
	// overrides). Load calls it once per topic and log dir, not once per
	// partition: a lookup may cost a ZooKeeper read, and a broker with
	// 10,000 partitions in 100 topics would otherwise wait for 10,000.
	LogConfig Config
	ConfigFor func(tp kafka.TopicPartition) Config

	RecoveryThreadsPerDataDir int           // num.recovery.threads.per.data.dir (1)
	RetentionCheckInterval    time.Duration // log.retention.check.interval.ms (5 min)
	FlushCheckInterval        time.Duration // log.flush.scheduler.interval.ms; how often flush.ms is checked (1 s)
	RecoveryPointInterval     time.Duration // log.flush.offset.checkpoint.interval.ms (60 s)
	LogStartOffsetInterval    time.Duration // log.flush.start.offset.checkpoint.interval.ms (60 s)
	HighWatermarkInterval     time.Duration // replica.high.watermark.checkpoint.interval.ms (5 s)

	// Cleaner, when set, is started by Load and stopped by Close; it runs
	// log compaction (cleaner*.go).
	Cleaner ManagedService

	// OnDirOffline, when set, is called once per log dir that a disk error
	// takes offline, with that error and how many dirs are still online
	// (0: none left; Kafka then halts the broker). It runs on the goroutine
	// that hit the error, possibly under a log's lock: it must return
	// quickly and must not call back into the log.
	OnDirOffline func(dir string, err error, online int)

	// OnLogStartMoved is every log's LogOptions.OnLogStartMoved.
	OnLogStartMoved func(tp kafka.TopicPartition)
}

// ManagedService is a background component the Manager runs (the log
// cleaner): Start launches its goroutines, Stop ends them and waits.
type ManagedService interface {
	Start(m *Manager)
	Stop()
}

func (c *ManagerConfig) setDefaults() {
	defaultDeps(&c.FS, &c.Now, &c.Logger)
	if c.LogConfig == (Config{}) {
		c.LogConfig = DefaultConfig()
	}
	if c.RecoveryThreadsPerDataDir < 1 {
		c.RecoveryThreadsPerDataDir = 1
	}
	def := func(d *time.Duration, v time.Duration) {
		if *d <= 0 {
			*d = v
		}
	}
	def(&c.RetentionCheckInterval, 5*time.Minute)
	def(&c.FlushCheckInterval, time.Second)
	def(&c.RecoveryPointInterval, time.Minute)
	def(&c.LogStartOffsetInterval, time.Minute)
	def(&c.HighWatermarkInterval, 5*time.Second)
}

// managedLog is a Log with the log dir (root) that holds it.
type managedLog struct {
	log  *Log
	root string
}

// Manager owns the log dirs (Kafka's LogManager): it loads and recovers
// every partition at start, creates and deletes logs, and runs the
// background work: retention, flush.ms, flushing rolled segments,
// checkpoint files, delayed file deletion and the cleaner.
//
// Concurrency: all methods are safe for concurrent use. mu guards the log
// map only and is never held during disk I/O (S6.9); create (a lock with
// the creations under way) orders log creation and deletion, and new logs
// are created concurrently outside it (manager_create.go). Goroutines
// start in Load and stop in Close.
type Manager struct {
	cfg    ManagerConfig // immutable after NewManager
	logger logrus.FieldLogger
	delays *delayQueue
	// createErrs are the log dirs NewManager could not create or that are
	// not directories; Load takes them offline. Immutable after NewManager.
	createErrs map[string]error

	// createSync holds the log-dir fsyncs deferred to the end of a wave
	// (manager_create_wave.go).
	createSync createSyncs
	// create tracks the logs being created and the planned placements
	// (manager_create.go); its lock is held through DeleteLog's I/O.
	create creations
	// flushBatchMu serialises flushLogs (manager_close.go).
	flushBatchMu sync.Mutex
	wg           sync.WaitGroup
	quit         chan struct{}
	rolled       chan struct{} // capacity 1; signals rollFlush.pending

	rollFlush struct {
		sync.Mutex
		pending map[*Log]struct{}
	}

	mu struct {
		sync.RWMutex
		logs    map[kafka.TopicPartition]*managedLog
		loaded  bool // Load was called
		started bool // Load succeeded and the goroutines run
		closed  bool
		offline map[string]error // log dirs that failed
	}
}

// NewManager checks and creates the log dirs; it reads nothing yet (see
// Load). A log dir that cannot be created (or is not a directory) is not
// an error while another can be: Load takes it offline (Kafka's
// LogManager.createAndValidateLogDirs); with none usable NewManager fails.
func NewManager(cfg ManagerConfig) (*Manager, error) {
	cfg.setDefaults()
	if len(cfg.Dirs) == 0 {
		return nil, errors.New("storage: no log dirs")
	}
	if err := cfg.LogConfig.Validate(); err != nil {
		return nil, err
	}
	seen := map[string]bool{}
	createErrs := map[string]error{}
	var errs []error
	for _, d := range cfg.Dirs {
		abs, err := filepath.Abs(d)
		if err != nil {
			return nil, fmt.Errorf("storage: log dir %q: %w", d, err)
		}
		if seen[abs] {
			return nil, fmt.Errorf("storage: log dir %q listed twice", d)
		}
		seen[abs] = true
		if err := cfg.FS.MkdirAll(d, 0o755); err != nil {
			createErrs[d] = storageError("create log dir "+d, err)
			errs = append(errs, createErrs[d])
		}
	}
	if len(createErrs) == len(cfg.Dirs) {
		return nil, fmt.Errorf("storage: none of the log dirs can be created: %w", errors.Join(errs...))
	}
	m := &Manager{
		cfg:        cfg,
		logger:     cfg.Logger.WithField("component", "storage"),
		delays:     newDelayQueue(),
		createErrs: createErrs,
		quit:       make(chan struct{}),
		rolled:     make(chan struct{}, 1),
	}
	m.rollFlush.pending = map[*Log]struct{}{}
	m.mu.logs = map[kafka.TopicPartition]*managedLog{}
	m.mu.offline = map[string]error{}
	return m, nil
}

// Dirs returns the configured log dirs.
func (m *Manager) Dirs() []string { return append([]string(nil), m.cfg.Dirs...) }

// Log returns the log of tp, if this broker hosts it.
func (m *Manager) Log(tp kafka.TopicPartition) (*Log, bool) {
	m.mu.RLock()
	defer m.mu.RUnlock()
	ml, ok := m.mu.logs[tp]
	if !ok {
		return nil, false
	}
	return ml.log, true
}

// Logs returns every hosted log, sorted by topic and partition.
func (m *Manager) Logs() []*Log {
	out := m.logsUnordered()
	sort.Slice(out, func(i, j int) bool {
		a, b := out[i].tp, out[j].tp
		return a.Topic < b.Topic || (a.Topic == b.Topic && a.Partition < b.Partition)
	})
	return out
}

// logsUnordered returns every hosted log in map order, for the periodic
// scans whose order does not matter: the flush check runs every second,
// and sorting 10,000 logs each time was most of an idle broker's CPU
// outside the fetch path (docs/benchmarks.md, "Cost per partition").
func (m *Manager) logsUnordered() []*Log {
	m.mu.RLock()
	defer m.mu.RUnlock()
	out := make([]*Log, 0, len(m.mu.logs))
	for _, ml := range m.mu.logs {
		out = append(out, ml.log)
	}
	return out
}

// logOptions fills the parts of LogOptions the Manager owns.
func (m *Manager) logOptions(root string, tp kafka.TopicPartition, cfg Config) LogOptions {
	return LogOptions{
		Dir:             filepath.Join(root, tp.String()),
		TP:              tp,
		Config:          cfg,
		FS:              m.cfg.FS,
		Logger:          m.cfg.Logger,
		Now:             m.cfg.Now,
		ScheduleDelete:  m.delays.schedule,
		OnRoll:          m.onRoll,
		OnFailure:       func(l *Log, err error) { m.markOffline(root, err) },
		OnTruncate:      m.onTruncate,
		OnLogStartMoved: m.cfg.OnLogStartMoved,
	}
}

// onTruncate is the logs' OnTruncate: the cleaner lowers l's checkpoint to
// keep (Kafka's LogManager.truncateTo → maybeTruncateCheckpoint). It runs
// under l's lock and takes Cleaner.mu and Cleaner.ckptMu, then Manager.mu
// for reading (cleaner_checkpoint.go); it never takes a Log's lock.
func (m *Manager) onTruncate(l *Log, keep int64) error {
	if tl, ok := m.cfg.Cleaner.(truncationListener); ok {
		return tl.logTruncated(l, keep)
	}
	return nil
}

// markOffline takes a log dir offline after a disk error (Kafka's
// LogDirFailureChannel, KIP-112): no new log is placed there, its
// checkpoints are no longer written and Close will not mark it clean. The
// logs in it refuse appends as they fail; the broker learns about it from
// OfflineDirs.
func (m *Manager) markOffline(root string, err error) {
	m.mu.Lock()
	if m.mu.offline[root] != nil {
		m.mu.Unlock()
		return
	}
	m.mu.offline[root] = err
	online := 0
	for _, d := range m.cfg.Dirs {
		if m.mu.offline[d] == nil {
			online++
		}
	}
	m.mu.Unlock()
	m.logger.WithError(err).WithFields(logrus.Fields{"dir": root, "online_dirs": online}).Error("storage: log dir offline after a disk error")
	if m.cfg.OnDirOffline != nil {
		m.cfg.OnDirOffline(root, err, online)
	}
}

// OfflineDirs returns the log dirs taken offline by disk errors, with the
// first error of each.
func (m *Manager) OfflineDirs() map[string]error {
	m.mu.RLock()
	defer m.mu.RUnlock()
	out := make(map[string]error, len(m.mu.offline))
	for d, err := range m.mu.offline {
		out[d] = err
	}
	return out
}

// DeleteLog removes tp's log: it is closed, its directory renamed
// "<topic>-<partition>.<uuid>-delete" (so a crash cannot resurrect it) and
// then removed. Deleting an unknown partition is a no-op.
func (m *Manager) DeleteLog(tp kafka.TopicPartition) error {
	m.lockCreateIdle(func() chan struct{} { return m.create.inFlight[tp] })
	defer m.create.Unlock()
	m.mu.Lock()
	ml, ok := m.mu.logs[tp]
	delete(m.mu.logs, tp)
	m.mu.Unlock()
	if !ok {
		return nil
	}
	m.rollFlush.Lock()
	delete(m.rollFlush.pending, ml.log)
	m.rollFlush.Unlock()
	if err := ml.log.closeForDelete(); err != nil && !errors.Is(err, ErrStorage) {
		m.logger.WithError(err).Warn("storage: closing deleted log")
	}
	if tl, ok := m.cfg.Cleaner.(truncationListener); ok {
		// A partition created again under this name must start dirty.
		if err := tl.logDeleted(ml.log); err != nil {
			m.logger.WithError(err).Warn("storage: removing deleted log's cleaner checkpoint")
		}
	}
	doomed := filepath.Join(ml.root, deleteDirName(tp))
	if err := m.cfg.FS.Rename(ml.log.dir, doomed); err != nil {
		return storageError("rename deleted log", err)
	}
	// Durable: the "-delete" name, so a crash during the removal below
	// cannot bring the partition back at the next start.
	if err := m.cfg.FS.SyncDir(ml.root); err != nil {
		return storageError("sync log dir", err)
	}
	if err := m.cfg.FS.RemoveAll(doomed); err != nil {
		return storageError("remove deleted log", err)
	}
	m.logger.WithFields(logrus.Fields{"topic": tp.Topic, "partition": tp.Partition}).Info("storage: deleted log")
	return nil
}

// onRoll queues a rolled log for a background flush (Kafka's Log.roll
// schedules flush(newOffset) on its scheduler). It never blocks.
func (m *Manager) onRoll(l *Log) {
	m.rollFlush.Lock()
	m.rollFlush.pending[l] = struct{}{}
	m.rollFlush.Unlock()
	select {
	case m.rolled <- struct{}{}:
	default:
	}
}

// Close stops the background goroutines, flushes every log, writes the
// checkpoints, closes the logs and, in each log dir where all of that
// succeeded, writes .kafka_cleanshutdown (Kafka's LogManager.shutdown).
// The logs of a dir that was offline before Close are only closed, and
// errors doing so are logged rather than returned.
func (m *Manager) Close() error {
	m.mu.Lock()
	if m.mu.closed {
		m.mu.Unlock()
		return nil
	}
	m.mu.closed = true
	m.mu.Unlock()
	if m.cfg.Cleaner != nil && m.isStarted() {
		m.cfg.Cleaner.Stop()
	}
	close(m.quit)
	m.wg.Wait()
	m.delays.drain()

	m.lockCreateIdle(m.anyCreation)
	defer m.create.Unlock()
	if !m.isStarted() {
		// Load failed or never ran: the loaded logs are incomplete, so
		// checkpoints written now would forget the others. Only close.
		var err error
		for _, ml := range m.managedLogs() {
			err = errors.Join(err, ml.log.Close())
		}
		return err
	}
	start := time.Now()
	logs := m.managedLogs()
	// Dirs already offline are not shut down (Kafka's LogManager.shutdown
	// covers the live dirs only): their logs are not flushed, and closing
	// them only releases their files; their failure was reported when it
	// happened, so what closing them hits is logged, not returned.
	offline := m.OfflineDirs()
	dirErr := m.flushForClose(logs, offline)
	for _, d := range m.cfg.Dirs {
		if err := m.writeCheckpoints(d, true, true, true); err != nil {
			dirErr[d] = errors.Join(dirErr[d], err)
		}
	}
	for _, ml := range m.managedLogs() {
		err := ml.log.Close()
		switch {
		case err == nil:
		case offline[ml.root] != nil:
			m.logger.WithError(err).WithField("dir", ml.root).Warn("storage: closing a log of an offline log dir")
		default:
			dirErr[ml.root] = errors.Join(dirErr[ml.root], err)
		}
	}
	var all error
	for _, d := range m.cfg.Dirs {
		if err := dirErr[d]; err != nil || m.dirOffline(d) != nil {
			all = errors.Join(all, err)
			m.logger.WithField("dir", d).Warn("storage: log dir not shut down cleanly; recovery will run at next start")
			continue
		}
		if err := m.writeCleanShutdownMarker(d); err != nil {
			all = errors.Join(all, err)
		}
	}
	m.logger.WithFields(logrus.Fields{"logs": len(logs), "duration": time.Since(start).String()}).
		Info("storage: flushed, checkpointed and closed the logs")
	return all
}

func (m *Manager) isStarted() bool {
	m.mu.RLock()
	defer m.mu.RUnlock()
	return m.mu.started
}

func (m *Manager) dirOffline(d string) error {
	m.mu.RLock()
	defer m.mu.RUnlock()
	return m.mu.offline[d]
}

// managedLogs snapshots the log map.
func (m *Manager) managedLogs() []*managedLog {
	m.mu.RLock()
	defer m.mu.RUnlock()
	out := make([]*managedLog, 0, len(m.mu.logs))
	for _, ml := range m.mu.logs {
		out = append(out, ml)
	}
	return out
}

// start runs fn on a goroutine owned by the Manager (S6.8).
func (m *Manager) start(fn func()) {
	m.wg.Add(1)
	go func() {
		defer m.wg.Done()
		fn()
	}()
}
