package replica

import (
	"fmt"

	"samsa/broker/storage"
	"samsa/kafka"
)

// ConsumerReplicaID is the replica id of a fetch from a client (Kafka's
// CONSUMER_REPLICA_ID). The debugging consumer (-2, DebuggingReplicaID) reads
// like a consumer: up to the high watermark, without follower bookkeeping.
const ConsumerReplicaID = -1

// DebuggingReplicaID is the replica id of kafka-replica-verification's
// fetches and ListOffsets (Kafka's DEBUGGING_REPLICA_ID).
const DebuggingReplicaID = -2

// ReadParams describe one partition of a fetch.
type ReadParams struct {
	// ReplicaID is -1 for consumers, the follower's broker id for
	// replication fetches.
	ReplicaID   int32
	FetchOffset int64
	MaxBytes    int
	// CurrentLeaderEpoch is the fetcher's view of the leader epoch (KIP-320);
	// -1 skips the check.
	CurrentLeaderEpoch int32
	// MinOneBatch returns the first batch even if larger than MaxBytes
	// (KIP-74); true for the first partition of a response with data.
	MinOneBatch bool
	// FollowerLogStartOffset is a follower's log start offset (Fetch v5+;
	// -1 when absent).
	FollowerLogStartOffset int64
	// AnyReplica lets a consumer read (ReplicaID < 0) be served by a
	// follower replica, from its own log up to its own high watermark
	// (KIP-392; Kafka's fetchOnlyFromLeader = false, which Kafka 2.8 sets for
	// consumer Fetch v11+). Ignored for replication fetches (ReplicaID >= 0),
	// which always need the leader.
	AnyReplica bool
	// ReadCommitted is isolation_level 1 (Fetch v4+, consumers only):
	// the read stops at the last stable offset and lists the aborted
	// transactions it overlaps (txn.go).
	ReadCommitted bool
}

// ReadResult is what a fetch gets for one partition.
type ReadResult struct {
	HighWatermark    int64
	LastStableOffset int64
	LogStartOffset   int64
	// Records hold whole batches as file regions (sendfile-able); empty
	// when there is nothing to send.
	Records []storage.FileRegion
	// AbortedTransactions is nil for read_uncommitted, non-nil (maybe
	// empty) for read_committed.
	AbortedTransactions []storage.AbortedTxn
}

// Read reads one partition for a fetch (Kafka ReplicaManager.readFromLocalLog).
// Consumers read up to the high watermark and must fetch from the leader
// unless rp.AnyReplica is set (then a follower answers from its own log, up
// to its own high watermark); a follower's fetch first records its position
// (its log end offset), which may advance the high watermark, and reads up
// to the log end.
// Errors: ErrUnknownPartition, ErrNotLeader, ErrFencedLeaderEpoch,
// ErrUnknownLeaderEpoch, storage.ErrOffsetOutOfRange.
func (m *Manager) Read(tp kafka.TopicPartition, rp ReadParams) (ReadResult, error) {
	res, _, err := m.ReadFrom(tp, rp)
	return res, err
}

// ReadFrom is Read that also returns the partition it read (nil when tp is
// unknown or offline), for the fetch purgatory's cheap checks
// (Partition.ReadReady) without another lookup.
func (m *Manager) ReadFrom(tp kafka.TopicPartition, rp ReadParams) (ReadResult, *Partition, error) {
	p, err := m.getPartition(tp)
	if err != nil {
		return ReadResult{}, nil, err
	}
	res, hwMoved, expand, err := p.read(rp)
	if expand {
		m.requestExpand(tp, rp.ReplicaID) // isr_expand.go
	}
	if hwMoved {
		m.Produce.Notify(tp)
		m.Fetch.Notify(tp)
	}
	return res, p, err
}

func (p *Partition) read(rp ReadParams) (res ReadResult, hwMoved, expand bool, err error) {
	p.mu.RLock()
	defer p.mu.RUnlock()
	// The current leader epoch is checked before leadership, as Kafka's
	// Partition.getLocalLog: a client with an old epoch learns it is fenced
	// (and refreshes its metadata) whichever broker it reached.
	if err := p.checkEpochLocked(rp.CurrentLeaderEpoch); err != nil {
		return ReadResult{}, false, false, err
	}
	if !p.isLeaderLocked() {
		if rp.AnyReplica && rp.ReplicaID < 0 {
			return p.readAsFollowerLocked(rp)
		}
		return ReadResult{}, false, false, fmt.Errorf("%w: %s (leader %d)", ErrNotLeader, p.tp, p.mu.leader)
	}
	l := p.mu.data
	upTo := l.HighWatermark()
	if rp.ReplicaID >= 0 {
		hwMoved, err = p.recordFollowerFetchLocked(rp.ReplicaID, rp.FetchOffset, rp.FollowerLogStartOffset)
		if err != nil {
			return ReadResult{}, false, false, err
		}
		upTo = l.LogEndOffset()
		expand = p.shouldExpandLocked(rp.ReplicaID, rp.FetchOffset)
	}
	res = ReadResult{HighWatermark: l.HighWatermark(), LogStartOffset: l.LogStartOffset(),
		LastStableOffset: l.LastStableOffset()}
	if rp.ReadCommitted && rp.ReplicaID < 0 {
		return readCommitted(l, rp, res)
	}
	rr, err := l.Read(rp.FetchOffset, rp.MaxBytes, upTo, rp.MinOneBatch)
	if err != nil {
		return res, hwMoved, expand, err
	}
	res.Records = rr.Regions
	return res, hwMoved, expand, nil
}

// readAsFollowerLocked serves a consumer read on a replica that does not
// lead the partition (KIP-392), as Kafka's Partition.readRecords with
// fetchOnlyFromLeader false: the caller has checked the current leader epoch
// (FENCED_LEADER_EPOCH / UNKNOWN_LEADER_EPOCH against this replica's view of
// the epoch); a replica without a log answers NOT_LEADER_OR_FOLLOWER, and the
// read stops at this replica's high watermark (its last stable offset for
// read_committed). Nothing is recorded about the reader.
//
// A replica whose log is open but that has no LeaderAndIsr state yet (a
// wave's log-opening stage, applyWave, has run but not its second stage)
// answers NOT_LEADER_OR_FOLLOWER too: its high watermark is still the
// checkpoint's, which a restarted leader's makeLeader is about to move up,
// so serving it would show a consumer a high watermark and last stable
// offset that go backwards. Kafka has no such state: its Partition creates
// the log inside makeLeader/makeFollower, under the same lock.
func (p *Partition) readAsFollowerLocked(rp ReadParams) (ReadResult, bool, bool, error) {
	l := p.mu.data
	if l == nil {
		return ReadResult{}, false, false, fmt.Errorf("%w: %s (no local log)", ErrNotLeader, p.tp)
	}
	if p.mu.leaderEpoch < 0 {
		return ReadResult{}, false, false, fmt.Errorf("%w: %s (no leader or follower state yet)", ErrNotLeader, p.tp)
	}
	hw := l.HighWatermark()
	res := ReadResult{HighWatermark: hw, LastStableOffset: l.LastStableOffset(), LogStartOffset: l.LogStartOffset()}
	if rp.ReadCommitted {
		return readCommitted(l, rp, res)
	}
	rr, err := l.Read(rp.FetchOffset, rp.MaxBytes, hw, rp.MinOneBatch)
	if err != nil {
		return res, false, false, err
	}
	res.Records = rr.Regions
	return res, false, false, nil
}

// checkEpochLocked validates a request's current leader epoch (KIP-320).
func (p *Partition) checkEpochLocked(epoch int32) error {
	switch {
	case epoch < 0 || epoch == p.mu.leaderEpoch:
		return nil
	case epoch < p.mu.leaderEpoch:
		return fmt.Errorf("%w: %s: %d < %d", ErrFencedLeaderEpoch, p.tp, epoch, p.mu.leaderEpoch)
	default:
		return fmt.Errorf("%w: %s: %d > %d", ErrUnknownLeaderEpoch, p.tp, epoch, p.mu.leaderEpoch)
	}
}

// recordFollowerFetchLocked records that follower id fetched from offset,
// which is its log end offset (Kafka Partition.updateFollowerFetchState),
// and advances the HW if that lets it move.
func (p *Partition) recordFollowerFetchLocked(id int32, offset, logStart int64) (bool, error) {
	fs, ok := p.mu.followers[id]
	if !ok {
		return false, fmt.Errorf("%w: %s: broker %d is not a replica", ErrReplicaNotAvailable, p.tp, id)
	}
	now := p.m.cfg.Now()
	leo := p.mu.data.LogEndOffset()
	p.progress.Lock()
	fs.leo = offset
	fs.lastFetch = now
	if offset >= leo {
		fs.lastCaughtUp = now
	}
	lsoMoved := logStart > fs.logStart
	fs.logStart = max(fs.logStart, logStart)
	p.progress.Unlock()
	moved := p.maybeIncrementHighWatermarkLocked()
	// A follower that moved its log start may complete a DeleteRecords
	// wait (parked in the produce purgatory); report it like an HW move.
	return moved || lsoMoved, nil
}

// FollowerProgress is the leader's view of one follower.
type FollowerProgress struct {
	ID           int32
	LogEndOffset int64 // -1 before its first fetch
	LastCaughtUp int64 // unix ms; 0 if never
}

// Followers returns the leader's view of its followers (nil when not leader).
func (p *Partition) Followers() []FollowerProgress {
	p.mu.RLock()
	defer p.mu.RUnlock()
	p.progress.Lock()
	defer p.progress.Unlock()
	var out []FollowerProgress
	for id, fs := range p.mu.followers {
		fp := FollowerProgress{ID: id, LogEndOffset: fs.leo}
		if !fs.lastCaughtUp.IsZero() {
			fp.LastCaughtUp = fs.lastCaughtUp.UnixMilli()
		}
		out = append(out, fp)
	}
	return out
}

// LocalRead is ReadLocal's answer.
type LocalRead struct {
	Records      []storage.FileRegion
	LogEndOffset int64 // when the read started
}

// ReadLocal reads tp as its leader up to the log end (not the high
// watermark), for in-broker consumers of a partition such as the group
// coordinator loading __consumer_offsets. Errors: ErrUnknownPartition,
// ErrNotLeader, storage errors.
func (m *Manager) ReadLocal(tp kafka.TopicPartition, offset int64, maxBytes int) (LocalRead, error) {
	p, err := m.getPartition(tp)
	if err != nil {
		return LocalRead{}, err
	}
	p.mu.RLock()
	defer p.mu.RUnlock()
	if !p.isLeaderLocked() {
		return LocalRead{}, fmt.Errorf("%w: %s (leader %d)", ErrNotLeader, tp, p.mu.leader)
	}
	l := p.mu.data
	leo := l.LogEndOffset()
	// A local reader (the group coordinator's load) replays from "the start": an offset
	// below the log start offset reads from the log start, as Kafka's
	// GroupMetadataManager starts at log.logStartOffset, so DeleteRecords or retention on
	// __consumer_offsets never leaves a partition unloadable.
	if start := l.LogStartOffset(); offset < start {
		offset = start
	}
	rr, err := l.Read(offset, maxBytes, leo, true)
	if err != nil {
		return LocalRead{LogEndOffset: leo}, err
	}
	return LocalRead{Records: rr.Regions, LogEndOffset: leo}, nil
}
