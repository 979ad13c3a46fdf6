package storage

// Creating logs concurrently (issue 18 point 2).
//
// GetOrCreateLog decides a new log's log dir under Manager.create (the
// online log dir holding the fewest logs, counting those being created,
// config order breaking ties: Kafka's LogManager.nextLogDirs), then creates
// the partition directory and its files holding no Manager lock, so that
// creations of different partitions overlap their I/O. Creating 10,000
// partitions right after a run that left gigabytes in writeback, every
// mkdir and create waits behind the disk; one after another those waits
// added up to 20-28 s.
//
// Placement in request order: the replica Manager applies a LeaderAndIsr's
// partitions concurrently. To give each new log the log dir a sequential
// apply gives it, it first calls PlanNewLogs with the new partitions in
// request order (no I/O), which places each as GetOrCreateLog calls in that
// order would and records the plan; each GetOrCreateLog then uses its
// partition's plan. A plan counts as a log of its dir until it is used. A
// plan whose log dir went offline meanwhile is dropped and the log placed
// afresh among the online dirs, as a sequential creation after the failure
// would place it. Plans never used (a partition whose apply failed before
// it created its log) are dropped when the last open wave ends.
//
// What stays ordered:
//   - one creation per partition: a GetOrCreateLog of a partition being
//     created waits for that creation and returns its log (or creates the
//     log itself if that creation failed);
//   - DeleteLog of a partition being created waits for the creation, then
//     deletes; Close waits for every creation under way, and GetOrCreateLog
//     refuses to start one once Close began (ErrClosed);
//   - a new log enters the log map only once its files exist and, outside
//     a wave, its log dir's entry is durable;
//   - a failed creation returns its own error to its caller (the broker
//     answers KAFKA_STORAGE_ERROR for that partition, as before) and
//     affects no other partition.

import (
	"fmt"
	"sync"

	"github.com/sirupsen/logrus"

	"samsa/kafka"
)

// creations is the Manager's bookkeeping of logs being created. The lock
// is also held through DeleteLog's I/O (Lock order: createSyncs.mu →
// creations → Manager.mu).
type creations struct {
	sync.Mutex
	inFlight map[kafka.TopicPartition]chan struct{} // closed when the creation ends
	planned  map[kafka.TopicPartition]string        // log dir planned by PlanNewLogs, not yet used
	pending  map[string]int                         // log dir → creations under way and plans there
}

// GetOrCreateLog returns the log of tp, creating it with cfg in the log dir
// holding the fewest partitions when it does not exist (Kafka's
// LogManager.getOrCreateLog and nextLogDirs), or in the log dir
// PlanNewLogs planned for it. An existing log keeps its config; use
// Log.SetConfig to change it. Safe to call concurrently: creations of
// different partitions run in parallel.
func (m *Manager) GetOrCreateLog(tp kafka.TopicPartition, cfg Config) (*Log, error) {
	if l, ok := m.Log(tp); ok {
		return l, nil
	}
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	l, root, err := m.beginCreate(tp)
	if l != nil || err != nil {
		return l, err
	}
	l, err = m.createLog(root, tp, cfg)
	m.endCreate(tp, root, l)
	if err != nil {
		return nil, err
	}
	m.logger.WithFields(logrus.Fields{"topic": tp.Topic, "partition": tp.Partition, "dir": root}).Info("storage: created log")
	return l, nil
}

// beginCreate returns tp's log if it exists; otherwise it places the new
// log and registers its creation, which the caller ends with endCreate.
func (m *Manager) beginCreate(tp kafka.TopicPartition) (*Log, string, error) {
	m.lockCreateIdle(func() chan struct{} { return m.create.inFlight[tp] })
	defer m.create.Unlock()
	if l, ok := m.Log(tp); ok {
		return l, "", nil
	}
	m.mu.RLock()
	closed := m.mu.closed
	m.mu.RUnlock()
	if closed {
		return nil, "", ErrClosed
	}
	root := m.takePlanLocked(tp)
	if root == "" {
		root = fewestLogs(m.cfg.Dirs, m.dirCountsLocked())
		if root == "" {
			return nil, "", fmt.Errorf("storage: no online log dir for %s: %w", tp, ErrStorage)
		}
		m.create.pending[root]++
	}
	m.create.inFlight[tp] = make(chan struct{})
	return nil, root, nil
}

// createLog creates tp's new log in root: its directory and files, and
// the log dir's fsync (now, or at the end of the open wave).
func (m *Manager) createLog(root string, tp kafka.TopicPartition, cfg Config) (*Log, error) {
	opts := m.logOptions(root, tp, cfg)
	opts.CleanShutdown = true // a new directory has nothing to recover
	l, err := OpenLog(opts)
	if err != nil {
		return nil, err
	}
	// Durable: the new partition directory's entry in the log dir (now,
	// or once for the whole wave when one is open).
	if !m.createSync.deferSync(root, tp) {
		if err := m.cfg.FS.SyncDir(root); err != nil {
			l.Close()
			return nil, storageError("sync log dir", err)
		}
	}
	return l, nil
}

// endCreate ends the creation of tp in root begun by beginCreate: the new
// log l (nil if the creation failed) enters the log map and whoever waits
// for the creation is woken.
func (m *Manager) endCreate(tp kafka.TopicPartition, root string, l *Log) {
	m.create.Lock()
	defer m.create.Unlock()
	if l != nil {
		m.mu.Lock()
		m.mu.logs[tp] = &managedLog{log: l, root: root}
		m.mu.Unlock()
	}
	m.create.pending[root]--
	close(m.create.inFlight[tp])
	delete(m.create.inFlight, tp)
}

// PlanNewLogs places each of tps that has no log, no creation under way
// and no plan yet, in the order given, as GetOrCreateLog calls in that
// order would place them, and keeps the plan for the partition's next
// GetOrCreateLog, so that a wave's logs can then be created concurrently
// and still land where a sequential creation puts them (manager_create.go).
// It does no I/O. Plans live only while a wave is open: outside one
// PlanNewLogs does nothing, and the last wave's end drops unused plans.
func (m *Manager) PlanNewLogs(tps []kafka.TopicPartition) {
	s := &m.createSync
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.open == 0 {
		return
	}
	m.create.Lock()
	defer m.create.Unlock()
	m.initCreationsLocked()
	counts := m.dirCountsLocked()
	for _, tp := range tps {
		if _, ok := m.Log(tp); ok {
			continue
		}
		if _, ok := m.create.planned[tp]; ok || m.create.inFlight[tp] != nil {
			continue
		}
		root := fewestLogs(m.cfg.Dirs, counts)
		if root == "" {
			return
		}
		m.create.planned[tp] = root
		m.create.pending[root]++
		counts[root]++
	}
}

// dropPlansLocked forgets every unused plan (the last open wave ended).
func (m *Manager) dropPlansLocked() {
	for tp, root := range m.create.planned {
		m.create.pending[root]--
		delete(m.create.planned, tp)
	}
}

// takePlanLocked removes tp's plan and returns its log dir, or "" when tp
// has no plan or the planned dir is no longer usable.
func (m *Manager) takePlanLocked(tp kafka.TopicPartition) string {
	root, ok := m.create.planned[tp]
	if !ok {
		return ""
	}
	delete(m.create.planned, tp)
	m.mu.RLock()
	usable := m.mu.offline[root] == nil && m.createErrs[root] == nil
	m.mu.RUnlock()
	if !usable {
		m.create.pending[root]--
		return ""
	}
	return root // still counted in pending, now as a creation under way
}

// dirCountsLocked counts the logs of every usable log dir (online, and
// created by NewManager), with the creations under way and the plans.
func (m *Manager) dirCountsLocked() map[string]int {
	m.mu.RLock()
	defer m.mu.RUnlock()
	counts := map[string]int{}
	for _, d := range m.cfg.Dirs {
		if m.mu.offline[d] == nil && m.createErrs[d] == nil {
			counts[d] = m.create.pending[d]
		}
	}
	for _, ml := range m.mu.logs {
		if _, ok := counts[ml.root]; ok {
			counts[ml.root]++
		}
	}
	return counts
}

// fewestLogs returns the dir of counts with the fewest logs, the first in
// dirs (config order) among equals, or "" when counts is empty.
func fewestLogs(dirs []string, counts map[string]int) string {
	root := ""
	for _, d := range dirs {
		if n, ok := counts[d]; ok && (root == "" || n < counts[root]) {
			root = d
		}
	}
	return root
}

// lockCreateIdle locks m.create once busy (called under the lock) returns
// nil, waiting for each creation it returns to end, and returns holding
// the lock.
func (m *Manager) lockCreateIdle(busy func() chan struct{}) {
	m.create.Lock()
	m.initCreationsLocked()
	for ch := busy(); ch != nil; ch = busy() {
		m.create.Unlock()
		<-ch
		m.create.Lock()
	}
}

// anyCreation returns the end channel of some creation under way, or nil;
// call it under m.create.
func (m *Manager) anyCreation() chan struct{} {
	for _, ch := range m.create.inFlight {
		return ch
	}
	return nil
}

// initCreationsLocked makes the creations maps.
func (m *Manager) initCreationsLocked() {
	if m.create.inFlight == nil {
		m.create.inFlight = map[kafka.TopicPartition]chan struct{}{}
		m.create.planned = map[kafka.TopicPartition]string{}
		m.create.pending = map[string]int{}
	}
}
