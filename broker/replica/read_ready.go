package replica

import "samsa/kafka"

// ReadReady reports whether a Read of tp with rp could return records or an
// error now. It is the fetch purgatory's cheap check (Kafka's
// DelayedFetch.tryComplete): it compares the fetch offset with the offset the
// read would stop at (the log end for a follower, the high watermark for a
// consumer, the last stable offset for read_committed) and looks for the
// cases that make Read fail (unknown or offline partition, fenced or unknown
// leader epoch, not the leader, a fetcher that is not a replica, an offset
// outside the log: truncated or deleted), without reading the log or
// recording anything about a follower. It errs towards true: a true answer
// only costs the caller a full Read, a false one promises that Read would
// return no records and no error.
func (m *Manager) ReadReady(tp kafka.TopicPartition, rp ReadParams) bool {
	p, err := m.getPartition(tp)
	if err != nil {
		return true
	}
	return p.ReadReady(rp)
}

// ReadReady is Manager.ReadReady for a partition a fetch already read
// (Manager.ReadFrom). A partition that left the manager since (StopReplica, a
// failed log dir) has no leader any more, which answers true: the caller's
// full read then finds the manager's current state.
func (p *Partition) ReadReady(rp ReadParams) bool {
	p.mu.RLock()
	defer p.mu.RUnlock()
	if p.checkEpochLocked(rp.CurrentLeaderEpoch) != nil {
		return true
	}
	l := p.mu.data
	if l == nil || p.mu.leader < 0 {
		return true
	}
	var upTo int64
	switch {
	case !p.isLeaderLocked():
		if !rp.AnyReplica || rp.ReplicaID >= 0 || p.mu.leaderEpoch < 0 {
			return true // NOT_LEADER_OR_FOLLOWER
		}
		upTo = l.HighWatermark()
	case rp.ReplicaID >= 0:
		if _, ok := p.mu.followers[rp.ReplicaID]; !ok {
			return true // REPLICA_NOT_AVAILABLE
		}
		upTo = l.LogEndOffset()
	default:
		upTo = l.HighWatermark()
	}
	if rp.ReadCommitted && rp.ReplicaID < 0 {
		upTo = l.LastStableOffset()
	}
	off := rp.FetchOffset
	return off < upTo || off < l.LogStartOffset() || off > l.LogEndOffset()
}
