package storage

import (
	"math"

	"samsa/broker/record"
)

// noTxnIndexRebuild disables re-adding .txnindex entries during a replay.
const noTxnIndexRebuild = math.MaxInt64

// LastStableOffset returns the partition's last stable offset (Kafka's
// Log.lastStableOffset): the first offset of the oldest transaction that is
// open or whose marker is not below the high watermark yet, if that is
// below the high watermark, else the high watermark. Lock-free: one atomic
// load when no transaction is in flight.
func (l *Log) LastStableOffset() int64 {
	hw := l.highWatermark.Load()
	p := l.unstable.Load()
	if p == nil {
		return hw
	}
	first, ok := firstUnstable(*p, hw)
	if !ok || first >= hw {
		return hw
	}
	return max(first, l.logStartOffset.Load())
}

// FirstUnstableOffset returns the first offset of the oldest transaction
// that is open or not yet replicated, and whether there is one; the cleaner
// never cleans at or after it.
func (l *Log) FirstUnstableOffset() (int64, bool) {
	p := l.unstable.Load()
	if p == nil {
		return 0, false
	}
	return firstUnstable(*p, l.highWatermark.Load())
}

// publishUnstableLocked prunes the replicated completed transactions and
// publishes a copy of the list for lock-free readers.
func (l *Log) publishUnstableLocked() {
	ps := l.mu.producers
	if ps == nil {
		return
	}
	ps.pruneUnstable(l.highWatermark.Load())
	if len(ps.unstable) == 0 {
		if l.unstable.Load() != nil {
			l.unstable.Store(nil)
		}
		return
	}
	c := append([]unstableTxn(nil), ps.unstable...)
	l.unstable.Store(&c)
}

// AppendEndTxnMarker appends a COMMIT or ABORT control batch for producer
// pid at epoch as the leader (Kafka's appendAsLeader with
// AppendOrigin.Coordinator, for WriteTxnMarkers). It ends the producer's
// open transaction in this partition; an ABORT adds the transaction to the
// active segment's .txnindex. A marker for a producer with no open
// transaction is appended but changes neither. Errors:
// ErrInvalidProducerEpoch (epoch older than the producer's),
// ErrTransactionCoordinatorFenced (coordinator epoch older than the
// producer's last marker's), ErrStorage, ErrClosed.
func (l *Log) AppendEndTxnMarker(pid int64, epoch int16, m record.EndTxnMarker, leaderEpoch int32) (AppendInfo, error) {
	now := l.now().UnixMilli()
	l.mu.Lock()
	defer l.mu.Unlock()
	if err := l.checkWritableLocked(); err != nil {
		return AppendInfo{}, err
	}
	if l.mu.producers != nil {
		if err := l.mu.producers.checkEndTxnMarker(l.tp, pid, epoch, m); err != nil {
			return AppendInfo{}, err
		}
		// Whatever happens to the append below, the verified answer is
		// spent: the coordinator has ended that transaction.
		l.mu.producers.endVerification(pid)
	}
	next := l.end.Load().offset
	h := record.NewBuildHeader(next, now)
	h.PartitionLeaderEpoch, h.ProducerID, h.ProducerEpoch = leaderEpoch, pid, epoch
	b, err := record.BuildEndTxnMarker(h, m)
	if err != nil {
		return AppendInfo{}, err
	}
	headers := []record.BatchHeader{b.Header()}
	info := AppendInfo{FirstOffset: next, LastOffset: next, MaxTimestamp: now, OffsetOfMaxTimestamp: next,
		LogAppendTime: -1, NumBatches: 1, NumRecords: 1, Bytes: len(b)}
	if err := l.appendLocked(b, headers, info, l.Config()); err != nil {
		return AppendInfo{}, err
	}
	if err := l.onAppendProducerStateLocked(headers, []*record.EndTxnMarker{&m}, next+1); err != nil {
		return AppendInfo{}, err
	}
	info.LogStartOffset = l.logStartOffset.Load()
	return info, nil
}

// onCompletedTxnLocked indexes an aborted transaction in seg, the segment
// holding its marker (Kafka's LogSegment.updateTxnIndex).
func (l *Log) onCompletedTxnLocked(seg *Segment, c completedTxn) error {
	if !c.aborted {
		return nil
	}
	e := AbortedTxn{ProducerID: c.pid, FirstOffset: c.first, LastOffset: c.last,
		LastStableOffset: l.mu.producers.lastStableOffsetFor(c)}
	if err := seg.txnIndex.appendLocked(e); err != nil {
		return err
	}
	l.mu.dirDirty = true
	return nil
}

// markersOf returns, for batches (already validated), the end-transaction
// marker of each control batch by position in the append, or nil when the
// append has no control batch (the common case, allocation-free).
func markersOf(batches []byte, headers []record.BatchHeader) ([]*record.EndTxnMarker, error) {
	anyControl := false
	for i := range headers {
		anyControl = anyControl || headers[i].IsControl()
	}
	if !anyControl {
		return nil, nil
	}
	var out []*record.EndTxnMarker
	rest := batches
	for i, h := range headers {
		b, r, err := record.NextBatch(rest)
		if err != nil {
			return nil, err
		}
		rest = r
		if !h.IsControl() {
			continue
		}
		m, ok, err := batchMarker(b)
		if err != nil {
			return nil, err
		}
		if !ok {
			continue
		}
		if out == nil {
			out = make([]*record.EndTxnMarker, len(headers))
		}
		out[i] = &m
	}
	return out, nil
}

// readCommittedUpperBound is the upper bound of the aborted transactions a
// read_committed answer needs (Kafka's LogSegment.fetchUpperBoundOffset,
// else the next segment's base, else the log end): the base offset of the
// first batch after the returned bytes.
func (l *Log) readCommittedUpperBound(segs []*Segment, i int, region FileRegion, end *logEnd) (int64, error) {
	s := segs[i]
	maxPos := s.Size()
	if s == end.seg {
		maxPos = end.pos
	}
	if pos := region.Pos + region.Len; pos < maxPos {
		h, err := record.ReadHeaderAt(s.log, pos)
		if err != nil {
			return 0, s.corruptAt(pos, err)
		}
		return h.BaseOffset, nil
	}
	if i+1 < len(segs) {
		return segs[i+1].base, nil
	}
	return end.offset, nil
}

// ReadCommitted is Read for an isolation_level=1 consumer (Kafka's Log.read
// with FetchTxnCommitted): batches up to the last stable offset, plus the
// aborted transactions overlapping them (collectAbortedTransactions over
// the .txnindex of the segment read and the following ones, until an entry
// shows no later transaction can overlap). aborted is never nil. It takes
// no Log lock.
func (l *Log) ReadCommitted(offset int64, maxBytes int, minOneBatch bool) (res ReadResult, lso int64, aborted []AbortedTxn, err error) {
	lso = l.LastStableOffset()
	aborted = []AbortedTxn{}
	res, err = l.Read(offset, maxBytes, lso, minOneBatch)
	if err != nil || len(res.Regions) == 0 {
		return res, lso, aborted, err
	}
	end := l.end.Load()
	segs := *l.segments.Load()
	region := res.Regions[0]
	i := -1
	for j, s := range segs {
		if s.log == region.File {
			i = j
			break
		}
	}
	if i < 0 {
		// The segment left the list after the read (retention or a swap):
		// the answer could name aborted data without its entries.
		return ReadResult{LogStartOffset: res.LogStartOffset, LogEndOffset: res.LogEndOffset,
			HighWatermark: res.HighWatermark}, lso, aborted, nil
	}
	upper, err := l.readCommittedUpperBound(segs, i, region, end)
	if err != nil {
		return res, lso, aborted, err
	}
	for _, s := range segs[i:] {
		var complete bool
		aborted, complete = s.txnIndex.collect(aborted, offset, upper)
		if complete {
			break
		}
	}
	return res, lso, aborted, nil
}

// noteTxnIndexResetLocked records, during load, that s's .txnindex must be
// rebuilt from the log (s was recovered, or its .txnindex was corrupt).
func (l *Log) noteTxnIndexResetLocked(s *Segment) {
	l.mu.txnIndexRebuildFrom = min(l.mu.txnIndexRebuildFrom, s.base)
}

// resetTxnIndexesFromLocked empties the .txnindex of every segment based at
// or after from, before the replay that rebuilds them.
func (l *Log) resetTxnIndexesFromLocked(from int64) error {
	for _, s := range *l.segments.Load() {
		if s.base >= from {
			if err := s.txnIndex.truncateToLocked(math.MinInt64); err != nil {
				return err
			}
		}
	}
	return nil
}
