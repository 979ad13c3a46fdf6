package storage

// Creating a wave of logs with one log-dir fsync each, not one per log.
//
// GetOrCreateLog makes a new partition directory durable by fsyncing the
// log dir that holds it (its entry in the log dir). A LeaderAndIsr for a
// new topic names a hundred partitions, at creation of 10,000 partitions a
// broker gets 10,000, and one directory fsync per new log, a journal commit
// each on ext4, was most of the time a new topic took to get its leaders
// (issue 18 point 2; the logs are now also created in parallel,
// manager_create.go). Inside a wave (BeginCreateWave … end), GetOrCreateLog leaves
// that fsync out and remembers the log dir; end fsyncs every log dir that
// got a new log once, after all of them were created.
//
// Why it keeps the guarantees: the directory fsync only makes the new
// partition directory's name durable. The broker (broker/04_leader_and_isr.go)
// ends the wave before it answers the LeaderAndIsr, so every log it
// reports created is durable when the controller hears of it, as before.
// Until then a crash can lose the new directory, with everything in it,
// which is what a crash does to data not yet fsynced anyway: Kafka
// replicates rather than fsyncs (flush.messages and flush.ms are off by
// default), a replica restarted without the log gets it created again by
// the controller's next LeaderAndIsr and refetches it from the leader, and
// Kafka 2.8's LogManager does not fsync the parent directory of a new log
// at all. Inside the partition directory nothing changes: every file and
// checkpoint still goes through its own temp + fsync + rename + directory
// fsync, so a crash leaves each either old or new. The recovery-point
// and other checkpoint files are written on their own intervals (seconds),
// long after a wave has ended, and a log dir whose fsync fails at the end
// of a wave is taken offline (KIP-112) like any other disk error, its new
// logs answered with KAFKA_STORAGE_ERROR.
//
// Waves nest and overlap (a count, not a flag): a log created while any
// wave is open is synced by the end of the next wave to end, and the
// caller that created it holds a wave open until its own end, which
// syncs everything pending. Only LeaderAndIsr creates logs, always inside
// a wave; outside one GetOrCreateLog fsyncs at once as before.

import (
	"maps"
	"slices"
	"sync"

	"github.com/sirupsen/logrus"

	"samsa/kafka"
)

// createSyncs is the Manager's pending log-dir fsyncs of the open waves.
type createSyncs struct {
	mu      sync.Mutex
	open    int                               // waves begun and not ended
	pending map[string][]kafka.TopicPartition // log dir → logs created there, not yet synced
}

// deferSync records that tp's new directory in root needs root fsynced,
// and reports whether a wave is open to do it (false: the caller fsyncs
// now).
func (s *createSyncs) deferSync(root string, tp kafka.TopicPartition) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.open == 0 {
		return false
	}
	if s.pending == nil {
		s.pending = make(map[string][]kafka.TopicPartition)
	}
	s.pending[root] = append(s.pending[root], tp)
	return true
}

// BeginCreateWave opens a wave: until the returned end is called, logs
// GetOrCreateLog creates leave their log dir's fsync to end. end fsyncs
// each log dir with new logs once and returns the logs whose log dir
// fsync failed, with that error (that log dir is then offline). Call end
// exactly once, before telling anyone the logs exist.
func (m *Manager) BeginCreateWave() (end func() map[kafka.TopicPartition]error) {
	s := &m.createSync
	s.mu.Lock()
	s.open++
	s.mu.Unlock()
	var once sync.Once
	return func() map[kafka.TopicPartition]error {
		var failed map[kafka.TopicPartition]error
		once.Do(func() { failed = m.endCreateWave() })
		return failed
	}
}

// endCreateWave closes one wave and fsyncs every log dir with pending new
// logs, in config order.
func (m *Manager) endCreateWave() map[kafka.TopicPartition]error {
	s := &m.createSync
	s.mu.Lock()
	s.open--
	pending := s.pending
	s.pending = nil
	if s.open == 0 {
		m.create.Lock()
		m.dropPlansLocked()
		m.create.Unlock()
	}
	s.mu.Unlock()
	var failed map[kafka.TopicPartition]error
	for _, root := range slices.Sorted(maps.Keys(pending)) {
		err := m.cfg.FS.SyncDir(root)
		if err == nil {
			continue
		}
		err = storageError("sync log dir", err)
		m.logger.WithError(err).WithFields(logrus.Fields{"dir": root, "logs": len(pending[root])}).
			Error("storage: new logs not durable")
		m.markOffline(root, err)
		if failed == nil {
			failed = make(map[kafka.TopicPartition]error)
		}
		for _, tp := range pending[root] {
			failed[tp] = err
		}
	}
	return failed
}
