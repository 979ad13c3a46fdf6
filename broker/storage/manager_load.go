package storage

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"sync"

	"github.com/sirupsen/logrus"

	"samsa/kafka"
)

// Suffixes of partition directories that are not live logs.
const (
	deleteDirSuffix = "-delete" // "<tp>.<uuid>-delete": deletion in progress
	futureDirSuffix = "-future" // "<tp>.<uuid>-future": inter-log-dir move target
)

// deleteDirName is Kafka's Log.logDeleteDirName: "<tp>.<32 hex>-delete",
// with the topic part cut so the name fits 255 bytes.
func deleteDirName(tp kafka.TopicPartition) string {
	var id [16]byte
	_, _ = rand.Read(id[:])
	suffix := "." + hex.EncodeToString(id[:]) + deleteDirSuffix
	prefix := tp.String()
	if len(prefix)+len(suffix) > 255 {
		prefix = prefix[:255-len(suffix)]
	}
	return prefix + suffix
}

// Load opens every log in every log dir, in parallel with
// RecoveryThreadsPerDataDir workers per dir (Kafka's LogManager.loadLogs):
// a dir without .kafka_cleanshutdown has its logs recovered from their
// checkpointed recovery points. The marker is then removed, so a crash from
// now on triggers recovery. Finally Load starts the background goroutines.
// A log dir whose files cannot be read, or that NewManager could not
// create, is taken offline (OnDirOffline is called for it); Load fails
// only when every dir is.
func (m *Manager) Load(ctx context.Context) error {
	m.mu.Lock()
	if m.mu.loaded || m.mu.closed {
		m.mu.Unlock()
		return errors.New("storage: manager already loaded or closed")
	}
	m.mu.loaded = true
	m.mu.Unlock()

	errs := make([]error, len(m.cfg.Dirs))
	var wg sync.WaitGroup
	for i, d := range m.cfg.Dirs {
		wg.Add(1)
		go func() {
			defer wg.Done()
			if err := m.createErrs[d]; err != nil {
				errs[i] = err // NewManager could not create it
				return
			}
			errs[i] = m.loadDir(ctx, d)
		}()
	}
	wg.Wait()
	if err := ctx.Err(); err != nil {
		return err
	}
	online := 0
	for i, d := range m.cfg.Dirs {
		if errs[i] == nil {
			online++
			continue
		}
		// Kafka takes a log dir that fails to load offline and starts
		// with the others (KIP-112); with none left it cannot start.
		m.dropDirLogs(d)
		m.markOffline(d, errs[i])
	}
	if online == 0 {
		return fmt.Errorf("storage: every log dir failed to load: %w", errors.Join(errs...))
	}
	m.mu.Lock()
	m.mu.started = true
	m.mu.Unlock()
	m.startBackground()
	return nil
}

// dropDirLogs closes and forgets the logs loaded from root.
func (m *Manager) dropDirLogs(root string) {
	m.mu.Lock()
	var drop []*Log
	for tp, ml := range m.mu.logs {
		if ml.root == root {
			drop = append(drop, ml.log)
			delete(m.mu.logs, tp)
		}
	}
	m.mu.Unlock()
	for _, l := range drop {
		l.Close()
	}
}

// loadDir loads one log dir (Kafka's LogManager.loadLogs for one dir): read
// the dir's marker and checkpoints, open its partitions in parallel, then
// consume the clean shutdown marker. The marker goes only after every log
// loaded: a load that fails or is cancelled leaves it, so the next start
// does not take a half-checked dir for a clean one.
func (m *Manager) loadDir(ctx context.Context, root string) error {
	logger := m.logger.WithField("dir", root)
	st, err := m.readDirState(root, logger)
	if err != nil {
		return err
	}
	entries, err := m.cfg.FS.ReadDir(root)
	if err != nil {
		return storageError("list log dir", err)
	}
	work := make(chan kafka.TopicPartition)
	wait := m.startLogOpeners(root, st, work)
	m.feedPartitionDirs(ctx, root, entries, work, logger)
	close(work)
	if err := wait(); err != nil {
		return err
	}
	if err := ctx.Err(); err != nil {
		return err
	}
	if st.clean {
		if err := m.consumeCleanShutdownMarker(root, st.marker); err != nil {
			return err
		}
	}
	logger.WithField("logs", m.countLogs(root)).Info("storage: loaded log dir")
	return nil
}

// dirState is what a log dir's own files say about its logs before any is
// opened: whether the last shutdown was clean, and the three checkpoints.
type dirState struct {
	marker    string // path of the clean shutdown marker
	clean     bool   // the marker exists
	recovery  map[kafka.TopicPartition]int64
	hws       map[kafka.TopicPartition]int64
	logStarts map[kafka.TopicPartition]int64
}

// readDirState reads the clean shutdown marker and the recovery point,
// replication (high watermark) and log start offset checkpoints of root.
func (m *Manager) readDirState(root string, logger logrus.FieldLogger) (*dirState, error) {
	st := &dirState{marker: filepath.Join(root, CleanShutdownFile)}
	_, err := m.cfg.FS.Stat(st.marker)
	st.clean = err == nil
	if !st.clean {
		logger.Info("storage: no clean shutdown marker; recovering logs past their recovery points")
	}
	if st.recovery, err = NewOffsetCheckpointFile(m.cfg.FS, filepath.Join(root, RecoveryPointCheckpointFile)).Read(); err != nil {
		return nil, err
	}
	if st.hws, err = NewOffsetCheckpointFile(m.cfg.FS, filepath.Join(root, ReplicationCheckpointFile)).Read(); err != nil {
		return nil, err
	}
	if st.logStarts, err = NewOffsetCheckpointFile(m.cfg.FS, filepath.Join(root, LogStartOffsetCheckpointFile)).Read(); err != nil {
		return nil, err
	}
	return st, nil
}

// startLogOpeners starts RecoveryThreadsPerDataDir goroutines (Kafka's
// num.recovery.threads.per.data.dir) that open each partition sent on work
// and register it: recovery after an unclean shutdown reads whole segments,
// so a dir with many partitions loads them in parallel. The returned wait
// blocks until work is closed and drained and returns every failure joined;
// one partition failing does not stop the others, so the error names them all.
func (m *Manager) startLogOpeners(root string, st *dirState, work <-chan kafka.TopicPartition) (wait func() error) {
	var (
		wg      sync.WaitGroup
		errMu   sync.Mutex
		loadErr error
	)
	fail := func(err error) {
		errMu.Lock()
		loadErr = errors.Join(loadErr, err)
		errMu.Unlock()
	}
	configFor := m.topicConfigMemo()
	for range m.cfg.RecoveryThreadsPerDataDir {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for tp := range work {
				if err := m.openAndRegister(root, st, tp, configFor(tp)); err != nil {
					fail(err)
				}
			}
		}()
	}
	return func() error {
		wg.Wait()
		return loadErr
	}
}

// openAndRegister opens tp's log in root with the dir's checkpointed offsets
// and adds it to the manager. A partition already loaded from another dir is
// an error (Kafka refuses to start with duplicate logs); the second copy is
// closed, not registered.
func (m *Manager) openAndRegister(root string, st *dirState, tp kafka.TopicPartition, cfg Config) error {
	opts := m.logOptions(root, tp, cfg)
	opts.CleanShutdown = st.clean
	opts.RecoveryPoint = st.recovery[tp]
	opts.HighWatermark = st.hws[tp]
	opts.LogStartOffset = st.logStarts[tp]
	l, err := OpenLog(opts)
	if err != nil {
		return fmt.Errorf("storage: load %s: %w", tp, err)
	}
	m.mu.Lock()
	_, dup := m.mu.logs[tp]
	if !dup {
		m.mu.logs[tp] = &managedLog{log: l, root: root}
	}
	m.mu.Unlock()
	if dup {
		l.Close()
		return fmt.Errorf("storage: %s found in more than one log dir", tp)
	}
	return nil
}

// feedPartitionDirs sends every partition directory of root on work, in
// listing order, until ctx ends. On the way it finishes deletions a crash
// interrupted ("<tp>.<id>-delete") and skips future dirs, which only
// inter-log-dir moves (not supported) create.
func (m *Manager) feedPartitionDirs(ctx context.Context, root string, entries []fs.DirEntry, work chan<- kafka.TopicPartition, logger logrus.FieldLogger) {
	for _, e := range entries {
		if !e.IsDir() {
			continue
		}
		name := e.Name()
		switch {
		case strings.HasSuffix(name, deleteDirSuffix):
			if err := m.cfg.FS.RemoveAll(filepath.Join(root, name)); err != nil {
				logger.WithError(err).Warn("storage: removing deleted log dir failed")
			}
			continue
		case strings.HasSuffix(name, futureDirSuffix):
			logger.WithField("segment", name).Warn("storage: ignoring future log dir (inter-log-dir moves are not supported)")
			continue
		}
		tp, err := ParseTopicPartitionDir(name)
		if err != nil {
			continue // not a partition directory
		}
		if ctx.Err() != nil {
			return
		}
		work <- tp
	}
}

// consumeCleanShutdownMarker removes the marker once every log loaded, so a
// crash before the next clean shutdown is seen as unclean.
func (m *Manager) consumeCleanShutdownMarker(root, marker string) error {
	if err := m.cfg.FS.Remove(marker); err != nil && !errors.Is(err, fs.ErrNotExist) {
		return storageError("remove clean shutdown marker", err)
	}
	// Durable: the marker's removal.
	if err := m.cfg.FS.SyncDir(root); err != nil {
		return storageError("sync log dir", err)
	}
	return nil
}

func (m *Manager) countLogs(root string) int {
	n := 0
	for _, ml := range m.managedLogs() {
		if ml.root == root {
			n++
		}
	}
	return n
}

// writeCleanShutdownMarker creates .kafka_cleanshutdown. Durable: the
// marker's directory entry (the logs were flushed before).
func (m *Manager) writeCleanShutdownMarker(root string) error {
	f, err := m.cfg.FS.OpenFile(filepath.Join(root, CleanShutdownFile), os.O_CREATE|os.O_WRONLY, 0o644)
	if err != nil {
		return storageError("create clean shutdown marker", err)
	}
	if err := f.Close(); err != nil {
		return storageError("create clean shutdown marker", err)
	}
	return storageError("sync log dir", m.cfg.FS.SyncDir(root))
}

// writeCheckpoints writes the selected checkpoint files of one log dir
// from the logs it holds (Kafka's checkpointLogRecoveryOffsets,
// checkpointLogStartOffsets and ReplicaManager.checkpointHighWatermarks).
// Each file is replaced atomically by CheckpointFile.
func (m *Manager) writeCheckpoints(root string, recovery, start, hw bool) error {
	if m.dirOffline(root) != nil {
		return nil
	}
	rp, so, hws := map[kafka.TopicPartition]int64{}, map[kafka.TopicPartition]int64{}, map[kafka.TopicPartition]int64{}
	for _, ml := range m.managedLogs() {
		if ml.root != root {
			continue
		}
		l := ml.log
		rp[l.tp] = l.RecoveryPoint()
		hws[l.tp] = l.HighWatermark()
		// Kafka writes a log start offset only when it is above the first
		// segment's base; we write all, which reads back the same.
		so[l.tp] = l.LogStartOffset()
	}
	var err error
	if recovery {
		err = errors.Join(err, NewOffsetCheckpointFile(m.cfg.FS, filepath.Join(root, RecoveryPointCheckpointFile)).Write(rp))
	}
	if start {
		err = errors.Join(err, NewOffsetCheckpointFile(m.cfg.FS, filepath.Join(root, LogStartOffsetCheckpointFile)).Write(so))
	}
	if hw {
		err = errors.Join(err, NewOffsetCheckpointFile(m.cfg.FS, filepath.Join(root, ReplicationCheckpointFile)).Write(hws))
	}
	if err != nil {
		m.logger.WithError(err).WithFields(logrus.Fields{"dir": root}).Error("storage: writing checkpoint files failed")
		if errors.Is(err, ErrStorage) {
			m.markOffline(root, err)
		}
	}
	return err
}

// topicConfigMemo returns a ConfigFor that asks m.cfg.ConfigFor once per
// topic (see ManagerConfig.ConfigFor); safe for concurrent use by the
// load workers. The first worker to need a topic asks; the others loading
// partitions of that topic wait for its answer rather than asking too.
func (m *Manager) topicConfigMemo() func(tp kafka.TopicPartition) Config {
	if m.cfg.ConfigFor == nil {
		return func(kafka.TopicPartition) Config { return m.cfg.LogConfig }
	}
	type entry struct {
		once sync.Once
		cfg  Config
	}
	var mu sync.Mutex
	byTopic := make(map[string]*entry)
	return func(tp kafka.TopicPartition) Config {
		mu.Lock()
		e := byTopic[tp.Topic]
		if e == nil {
			e = &entry{}
			byTopic[tp.Topic] = e
		}
		mu.Unlock()
		// Outside mu: it may block on ZooKeeper, and other topics go on meanwhile.
		e.once.Do(func() { e.cfg = m.cfg.ConfigFor(tp) })
		return e.cfg
	}
}
