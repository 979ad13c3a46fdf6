package replica

import (
	"errors"
	"fmt"
	"path/filepath"

	"github.com/sirupsen/logrus"

	"samsa/broker/storage"
	"samsa/kafka"
)

// Offline partitions (KIP-112; Kafka's HostedPartition.Offline). A
// partition whose log sits in a failed log dir leaves the partition map for
// the offline set: it is not led, not followed and not served (every
// request naming it answers ErrOffline, KAFKA_STORAGE_ERROR), and a
// LeaderAndIsr or StopReplica for it answers ErrOffline without touching
// it. It stays offline until the broker restarts: nothing takes a
// partition out of the set.

// dirKey names a log dir for comparisons: its absolute, cleaned path.
func dirKey(dir string) string {
	if abs, err := filepath.Abs(dir); err == nil {
		return abs
	}
	return filepath.Clean(dir)
}

// logRoot returns the key of the log dir holding l.
func logRoot(l *storage.Log) string { return dirKey(filepath.Dir(l.Dir())) }

// offlineError is ErrOffline for tp.
func offlineError(tp kafka.TopicPartition) error {
	return fmt.Errorf("%w: %s", ErrOffline, tp)
}

// getPartition returns the hosted partition tp (Kafka's
// getPartitionOrException): ErrOffline when its log dir failed, an
// UnknownPartitionError when this broker does not host it.
func (m *Manager) getPartition(tp kafka.TopicPartition) (*Partition, error) {
	m.mu.RLock()
	defer m.mu.RUnlock()
	// Every fetched partition comes here (twice per follower fetch of
	// thousands): skip hashing tp into the offline map unless a log dir
	// has failed.
	if len(m.mu.offline) > 0 {
		if _, off := m.mu.offline[tp]; off {
			return nil, offlineError(tp)
		}
	}
	p := m.mu.partitions[tp]
	if p == nil {
		return nil, unknownPartition(tp)
	}
	return p, nil
}

// IsOffline reports whether tp is offline on this broker (its log dir
// failed).
func (m *Manager) IsOffline(tp kafka.TopicPartition) bool {
	m.mu.RLock()
	defer m.mu.RUnlock()
	_, off := m.mu.offline[tp]
	return off
}

// OfflinePartitions returns the offline partitions, sorted (Kafka's
// OfflineReplicaCount counts them).
func (m *Manager) OfflinePartitions() []kafka.TopicPartition {
	m.mu.RLock()
	out := make([]kafka.TopicPartition, 0, len(m.mu.offline))
	for tp := range m.mu.offline {
		out = append(out, tp)
	}
	m.mu.RUnlock()
	kafka.SortPartitions(out)
	return out
}

// dirOffline reports whether HandleLogDirFailure has taken the log dir with
// key root offline. It takes only offlineDirs' own lock (a leaf), so it may
// be called under a partition's lock.
func (m *Manager) dirOffline(root string) bool {
	m.offlineDirs.Lock()
	defer m.offlineDirs.Unlock()
	return m.offlineDirs.dirs[root]
}

// HandleLogDirFailure takes every hosted partition whose log is in dir
// offline (Kafka's ReplicaManager.handleLogDirFailure): their follower
// fetchers stop, they stop being led, parked produce and fetch requests
// on them answer at once, and from then on they answer ErrOffline. A
// partition whose log a later LeaderAndIsr finds in dir goes offline too.
// Partitions in other dirs are untouched. It returns the partitions taken
// offline now, sorted. Calling it again for the same dir takes nothing
// more offline than the first call left online.
func (m *Manager) HandleLogDirFailure(dir string) []kafka.TopicPartition {
	root := dirKey(dir)
	m.stateChange.Lock()
	defer m.stateChange.Unlock()
	// Recorded before the scan: a LeaderAndIsr that opens a log in dir
	// after the scan looked at its partition sees the dir offline.
	m.offlineDirs.Lock()
	m.offlineDirs.dirs[root] = true
	m.offlineDirs.Unlock()
	var tps []kafka.TopicPartition
	for _, p := range m.Partitions() {
		if l := p.Log(); l != nil && logRoot(l) == root {
			tps = append(tps, p.tp)
		}
	}
	kafka.SortPartitions(tps)
	m.markOffline(tps)
	m.log.WithFields(logrus.Fields{"dir": dir, "partitions": len(tps)}).
		Warn("stopped serving the replicas in a failed log dir")
	return tps
}

// markOffline moves tps from the partition map to the offline set (Kafka's
// markPartitionOffline) and stops fetching them. The caller holds
// stateChange.
func (m *Manager) markOffline(tps []kafka.TopicPartition) {
	if len(tps) == 0 {
		return
	}
	m.fetchers.remove(tps)
	for _, tp := range tps {
		m.mu.Lock()
		p := m.mu.partitions[tp]
		delete(m.mu.partitions, tp)
		m.mu.offline[tp] = struct{}{}
		m.mu.Unlock()
		if p != nil {
			// A caller still holding p (a read in progress, a fetcher
			// round) sees neither leader nor followers from now on.
			p.mu.Lock()
			p.mu.leader = -1
			p.mu.followers = nil
			p.mu.Unlock()
			p.log.Warn("replica offline: its log dir failed")
		}
		m.notify(tp)
	}
}

// offlineOnStorageError reports whether err, from applying a LeaderAndIsr
// state, means the partition's storage failed (Kafka's makeLeaders /
// makeFollowers catch KafkaStorageException and mark the partition
// offline).
func offlineOnStorageError(err error) bool {
	return err != nil && errors.Is(err, storage.ErrStorage)
}

// leaderGone is the answer of a parked produce or DeleteRecords whose
// partition is no longer led here: ErrOffline when its log dir failed
// (Kafka's DelayedProduce answers the getPartitionOrError error),
// ErrNotLeader otherwise.
func leaderGone(tp kafka.TopicPartition, err error) error {
	if errors.Is(err, ErrOffline) {
		return err
	}
	return fmt.Errorf("%w: %s", ErrNotLeader, tp)
}
