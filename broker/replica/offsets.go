package replica

import (
	"context"
	"errors"
	"fmt"
	"time"

	"samsa/broker/purgatory"
	"samsa/broker/storage"
	"samsa/kafka"
)

// OffsetAnswer is the answer to a ListOffsets query for one partition.
type OffsetAnswer struct {
	Found       bool  // false: no record at or after the timestamp
	Offset      int64 // -1 when not found
	Timestamp   int64 // -1 for the earliest/latest queries
	LeaderEpoch int32
}

// ListOffset answers ListOffsets for one partition (Kafka
// Partition.fetchOffsetForTimestamp): timestamp -2 is the log start offset,
// -1 the high watermark for consumers (the log end for any other replica
// id, the debugging -2 included, as Kafka gives them no isolation level;
// the last stable offset for readCommitted consumers, KIP-98),
// otherwise the first offset with a timestamp >= ts that is below that
// limit. Only the leader answers, except to the debugging replica id -2,
// which any replica with a log answers from its own log (Kafka's
// fetchOnlyFromLeader = replicaId != DEBUGGING_REPLICA_ID). Errors: ErrUnknownPartition,
// ErrNotLeader, ErrFencedLeaderEpoch, ErrUnknownLeaderEpoch, storage errors.
func (m *Manager) ListOffset(tp kafka.TopicPartition, ts int64, replicaID, currentLeaderEpoch int32, readCommitted bool) (OffsetAnswer, error) {
	p, err := m.getPartition(tp)
	if err != nil {
		return OffsetAnswer{}, err
	}
	p.mu.RLock()
	defer p.mu.RUnlock()
	// Epoch first, then leadership (Kafka's Partition.getLocalLog).
	if err := p.checkEpochLocked(currentLeaderEpoch); err != nil {
		return OffsetAnswer{}, err
	}
	if err := p.offsetsReplicaLocked(replicaID); err != nil {
		return OffsetAnswer{}, err
	}
	l := p.mu.data
	ans := OffsetAnswer{Found: true, Timestamp: -1, LeaderEpoch: p.mu.leaderEpoch}
	limit := l.HighWatermark()
	switch {
	case replicaID != ConsumerReplicaID:
		limit = l.LogEndOffset()
	case readCommitted:
		// Kafka's fetchOffsetForTimestamp: isolation level 1 bounds
		// latest and timestamp lookups by the last stable offset.
		limit = l.LastStableOffset()
	}
	switch ts {
	case storage.EarliestTimestamp:
		ans.Offset = l.LogStartOffset()
		return ans, nil
	case storage.LatestTimestamp:
		ans.Offset = limit
		return ans, nil
	}
	to, found, err := l.OffsetForTimestamp(ts)
	if err != nil {
		return OffsetAnswer{}, err
	}
	if !found || to.Offset >= limit {
		return OffsetAnswer{Offset: -1, Timestamp: -1, LeaderEpoch: -1}, nil
	}
	ans.Offset, ans.Timestamp = to.Offset, to.Timestamp
	ans.LeaderEpoch = epochForOffset(l.LeaderEpochCache().Entries(), to.Offset)
	return ans, nil
}

// epochForOffset returns the leader epoch whose range holds offset, or -1.
func epochForOffset(entries []storage.EpochEntry, offset int64) int32 {
	e := int32(-1)
	for _, en := range entries {
		if en.StartOffset > offset {
			break
		}
		e = en.Epoch
	}
	return e
}

// EpochEnd is the answer to OffsetsForLeaderEpoch for one partition.
type EpochEnd struct {
	LeaderEpoch int32 // the largest epoch <= the requested one, -1 if none
	EndOffset   int64 // -1 if unknown
}

// EndOffsetForEpoch answers OffsetsForLeaderEpoch (KIP-101/279): the end
// offset of the largest leader epoch <= epoch in the leader's epoch cache
// (the log end offset for the current epoch). Only the leader answers,
// except for replicaID -2 (debugging), as Kafka. Errors: ErrUnknownPartition,
// ErrNotLeader, ErrFencedLeaderEpoch, ErrUnknownLeaderEpoch.
func (m *Manager) EndOffsetForEpoch(tp kafka.TopicPartition, epoch, currentLeaderEpoch, replicaID int32) (EpochEnd, error) {
	p, err := m.getPartition(tp)
	if err != nil {
		return EpochEnd{}, err
	}
	p.mu.RLock()
	defer p.mu.RUnlock()
	// Epoch first, then leadership (Kafka's Partition.getLocalLog).
	if err := p.checkEpochLocked(currentLeaderEpoch); err != nil {
		return EpochEnd{}, err
	}
	if p.mu.data == nil || (replicaID != -2 && !p.isLeaderLocked()) {
		return EpochEnd{}, fmt.Errorf("%w: %s (leader %d)", ErrNotLeader, tp, p.mu.leader)
	}
	l := p.mu.data
	e, off := l.EndOffsetForEpoch(epoch)
	return EpochEnd{LeaderEpoch: e, EndOffset: off}, nil
}

// DeleteRecords moves tp's log start offset to offset (-1: the high
// watermark) as its leader (DeleteRecords, KIP-107) and returns the new log
// start offset, which followers adopt from their next fetch. Errors:
// ErrUnknownPartition, ErrNotLeader, storage.ErrOffsetOutOfRange (above the
// high watermark or below -1).
func (m *Manager) DeleteRecords(tp kafka.TopicPartition, offset int64) (int64, error) {
	p, err := m.getPartition(tp)
	if err != nil {
		return -1, err
	}
	p.mu.RLock()
	defer p.mu.RUnlock()
	if !p.isLeaderLocked() {
		return -1, fmt.Errorf("%w: %s (leader %d)", ErrNotLeader, tp, p.mu.leader)
	}
	l := p.mu.data
	if offset == -1 {
		offset = l.HighWatermark()
	}
	if offset < 0 {
		return -1, fmt.Errorf("replica: %s: delete records before %d: %w", tp, offset, storage.ErrOffsetOutOfRange)
	}
	return l.DeleteRecordsBefore(offset)
}

// LowWatermark is the smallest log start offset among the leader and the
// followers in the ISR (Kafka Partition.lowWatermarkIfLeader, with the ISR
// standing for the live replicas); a follower that has not reported one
// yet counts as -1.
func (p *Partition) lowWatermarkLocked() int64 {
	lw := p.mu.data.LogStartOffset()
	p.progress.Lock()
	defer p.progress.Unlock()
	for _, id := range p.mu.isr {
		if fs, ok := p.mu.followers[id]; ok {
			lw = min(lw, fs.logStart)
		}
	}
	return lw
}

// WaitLowWatermark parks until tp's low watermark reaches offset
// (DelayedDeleteRecords), the deadline passes (ErrTimeout), leadership
// moves (ErrNotLeader) or ctx ends. It returns the low watermark.
func (m *Manager) WaitLowWatermark(ctx context.Context, tp kafka.TopicPartition, offset int64, deadline time.Time) (int64, error) {
	lw := int64(-1)
	var outcome error
	check := func() bool {
		p, err := m.getPartition(tp)
		if err != nil {
			outcome = leaderGone(tp, err)
			return true
		}
		p.mu.RLock()
		defer p.mu.RUnlock()
		if !p.isLeaderLocked() {
			outcome = fmt.Errorf("%w: %s", ErrNotLeader, tp)
			return true
		}
		lw = p.lowWatermarkLocked()
		return lw >= offset
	}
	err := m.Produce.Wait(ctx, deadline, []kafka.TopicPartition{tp}, check)
	switch {
	case errors.Is(err, purgatory.ErrTimeout):
		return lw, fmt.Errorf("%w: %s: low watermark %d < %d", ErrTimeout, tp, lw, offset)
	case err != nil:
		return lw, err
	}
	return lw, outcome
}

// LegacyOffsets answers ListOffsets v0 (Kafka Log.legacyFetchOffsetsBefore):
// up to maxNum offsets, newest first, taken from the segments' base offsets
// and the log end, each paired with the segment's largest timestamp (the
// log end with now): for -1 all of them from the log end, for -2 only the
// log start, otherwise those whose time is at or before ts. Consumers
// (replica id -1) see nothing past the high watermark (it replaces larger
// offsets). The leader answers; any replica with a log answers -2.
func (m *Manager) LegacyOffsets(tp kafka.TopicPartition, ts int64, maxNum int32, replicaID int32) ([]int64, error) {
	p, err := m.getPartition(tp)
	if err != nil {
		return nil, err
	}
	p.mu.RLock()
	defer p.mu.RUnlock()
	if err := p.offsetsReplicaLocked(replicaID); err != nil {
		return nil, err
	}
	l := p.mu.data
	type offTime struct{ off, ts int64 }
	var arr []offTime
	segs := l.Segments()
	for _, s := range segs {
		arr = append(arr, offTime{s.BaseOffset(), s.LargestTimestamp()})
	}
	if n := len(segs); n > 0 && segs[n-1].Size() > 0 {
		arr = append(arr, offTime{l.LogEndOffset(), m.cfg.Now().UnixMilli()})
	}
	start := -1
	switch ts {
	case storage.LatestTimestamp:
		start = len(arr) - 1
	case storage.EarliestTimestamp:
		if len(arr) > 0 {
			start = 0
		}
	default:
		for i := len(arr) - 1; i >= 0; i-- {
			if arr[i].ts <= ts {
				start = i
				break
			}
		}
	}
	var out []int64
	for i := start; i >= 0 && int32(len(out)) < maxNum; i-- {
		out = append(out, arr[i].off)
	}
	if ts == storage.EarliestTimestamp && len(out) > 0 {
		out[0] = l.LogStartOffset()
	}
	if replicaID == ConsumerReplicaID {
		hw := l.HighWatermark()
		trimmed := out[:0:0]
		capped := false
		for _, o := range out {
			if o > hw {
				capped = true
				continue
			}
			trimmed = append(trimmed, o)
		}
		if capped {
			trimmed = append([]int64{hw}, trimmed...)
			if int32(len(trimmed)) > maxNum {
				trimmed = trimmed[:maxNum]
			}
		}
		out = trimmed
	}
	return out, nil
}

// offsetsReplicaLocked reports whether this replica may answer a ListOffsets
// from replicaID: the leader always, any replica with a log when the
// debugging replica id -2 asks (ErrNotLeader otherwise).
func (p *Partition) offsetsReplicaLocked(replicaID int32) error {
	if p.isLeaderLocked() || (replicaID == DebuggingReplicaID && p.mu.data != nil) {
		return nil
	}
	return fmt.Errorf("%w: %s (leader %d)", ErrNotLeader, p.tp, p.mu.leader)
}
