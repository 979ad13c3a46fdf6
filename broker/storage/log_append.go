package storage

import (
	"errors"
	"fmt"
	"math"

	"samsa/broker/record"
	"samsa/kafka"
)

// AppendInfo describes a successful append.
type AppendInfo struct {
	FirstOffset int64 // base offset of the first batch
	LastOffset  int64 // last offset of the last batch
	// MaxTimestamp is the largest batch max timestamp, and
	// OffsetOfMaxTimestamp the last offset of the batch that carried it.
	MaxTimestamp         int64
	OffsetOfMaxTimestamp int64
	// LogAppendTime is the time stamped into the batches under
	// LogAppendTime, or -1 (the ProduceResponse's log_append_time_ms).
	LogAppendTime int64
	NumBatches    int
	NumRecords    int64
	Bytes         int
	// LogStartOffset after the append (ProduceResponse v5+).
	LogStartOffset int64
	// Duplicate is set when the batch repeated one of its idempotent
	// producer's last five batches: nothing was appended and the offsets
	// are the original batch's (Kafka 2.8).
	Duplicate bool
}

// AppendAsLeader validates batches (one or more record batches v2 as a
// producer sent them) and appends them with offsets assigned from the log
// end offset, leaderEpoch stamped as each batch's partition leader epoch
// and, with LogAppendTime, the current time as max timestamp. It rewrites
// those header fields in batches (the caller's buffer) in place.
//
// Errors (nothing is appended on any of them): wrapping record.ErrCorrupt
// (framing, magic, CRC, trailing bytes), record.ErrInvalidRecord (record
// count, offset deltas, records that do not decode), record.ErrTooLarge
// (a batch over max.message.bytes), ErrInvalidTimestamp,
// ErrRecordBatchTooLarge (more than segment.bytes at once), ErrStorage
// (the disk failed; the log then refuses appends), ErrClosed, and for
// batches with a producer id ErrInvalidProducerEpoch,
// ErrOutOfOrderSequence, ErrUnknownProducerID. A batch that repeats one of
// its producer's last five batches appends nothing and returns the
// original offsets with Duplicate set.
func (l *Log) AppendAsLeader(batches []byte, leaderEpoch int32) (AppendInfo, error) {
	cfg := l.Config()
	now := l.now().UnixMilli()
	headers, info, err := l.validateLeaderBatches(batches, cfg, now)
	if err != nil {
		return AppendInfo{}, err
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	if err := l.checkWritableLocked(); err != nil {
		return AppendInfo{}, err
	}
	chk, err := l.checkLeaderProducersLocked(headers)
	if err != nil {
		return AppendInfo{}, err
	}
	if d := chk.duplicate; d != nil {
		dup := AppendInfo{FirstOffset: d.FirstOffset, LastOffset: d.LastOffset, MaxTimestamp: d.Timestamp,
			OffsetOfMaxTimestamp: d.LastOffset, LogAppendTime: -1, Duplicate: true,
			LogStartOffset: l.logStartOffset.Load()}
		if cfg.MessageTimestampType == LogAppendTime {
			dup.LogAppendTime = d.Timestamp
		}
		return dup, nil
	}
	// Assign offsets in place (Kafka's LogValidator, in-place path: the
	// batch bytes stay as the producer built them apart from header fields
	// outside the CRC, or recomputed with the CRC for LogAppendTime).
	next := l.end.Load().offset
	info.FirstOffset = next
	rest := batches
	for i := range headers {
		b, r, _ := record.NextBatch(rest)
		rest = r
		b.SetBaseOffset(next)
		b.SetPartitionLeaderEpoch(leaderEpoch)
		if cfg.MessageTimestampType == LogAppendTime {
			b.SetLogAppendTime(now)
		}
		headers[i] = b.Header()
		next = b.NextOffset()
	}
	info.LastOffset = next - 1
	info.MaxTimestamp, info.OffsetOfMaxTimestamp = -1, -1
	for _, h := range headers {
		if h.MaxTimestamp > info.MaxTimestamp {
			info.MaxTimestamp, info.OffsetOfMaxTimestamp = h.MaxTimestamp, h.LastOffset()
		}
	}
	info.LogAppendTime = -1
	if cfg.MessageTimestampType == LogAppendTime {
		info.LogAppendTime = now
	}
	if err := l.appendLocked(batches, headers, info, cfg); err != nil {
		return AppendInfo{}, err
	}
	if err := l.onAppendProducerStateLocked(headers, nil, info.LastOffset+1); err != nil {
		return AppendInfo{}, err
	}
	info.LogStartOffset = l.logStartOffset.Load()
	return info, nil
}

// validateLeaderBatches checks every batch before anything is written, so
// one bad batch rejects the whole request as Kafka's LogValidator does.
func (l *Log) validateLeaderBatches(batches []byte, cfg Config, now int64) ([]record.BatchHeader, AppendInfo, error) {
	var info AppendInfo
	if len(batches) == 0 {
		return nil, info, fmt.Errorf("storage: %s: empty append: %w", l.tp, record.ErrInvalidRecord)
	}
	if len(batches) > int(cfg.SegmentBytes) {
		return nil, info, fmt.Errorf("storage: %s: %d bytes exceed segment.bytes %d: %w", l.tp, len(batches), cfg.SegmentBytes, ErrRecordBatchTooLarge)
	}
	limits := record.Limits{MaxBatchBytes: int(cfg.MaxMessageBytes), Deep: true}
	var headers []record.BatchHeader
	for rest, i := batches, 0; len(rest) > 0; i++ {
		b, r, err := record.NextBatch(rest)
		if err != nil {
			return nil, info, framingError(l.tp, i, err)
		}
		rest = r
		if err := b.Validate(limits); err != nil {
			return nil, info, fmt.Errorf("storage: %s: batch %d: %w", l.tp, i, err)
		}
		if err := validateProducerFields(b.Header()); err != nil {
			return nil, info, fmt.Errorf("storage: %s: batch %d: %w", l.tp, i, err)
		}
		if b.IsControl() {
			// Kafka's LogValidator: "Clients are not allowed to write
			// control records" (markers come from WriteTxnMarkers only).
			return nil, info, fmt.Errorf("storage: %s: batch %d: %w: clients may not write control batches",
				l.tp, i, record.ErrInvalidRecord)
		}
		if cfg.CleanupPolicy.Compacts() && !b.IsControl() {
			if err := requireKeys(b); err != nil {
				return nil, info, fmt.Errorf("storage: %s: batch %d: %w", l.tp, i, err)
			}
		}
		if cfg.MessageTimestampType == CreateTime && cfg.MessageTimestampDifferenceMaxMs < NoLimit {
			// Kafka checks each record; the batch's first and max
			// timestamps bound every record's timestamp from both sides
			// closely enough for this check's purpose.
			for _, ts := range []int64{b.FirstTimestamp(), b.MaxTimestamp()} {
				if d := ts - now; d > cfg.MessageTimestampDifferenceMaxMs || -d > cfg.MessageTimestampDifferenceMaxMs {
					return nil, info, fmt.Errorf("storage: %s: batch %d: timestamp %d is more than %d ms from %d: %w",
						l.tp, i, ts, cfg.MessageTimestampDifferenceMaxMs, now, ErrInvalidTimestamp)
				}
			}
		}
		headers = append(headers, b.Header())
		info.NumRecords += int64(b.NumRecords())
	}
	info.NumBatches = len(headers)
	info.Bytes = len(batches)
	return headers, info, nil
}

// AppendAsFollower appends batches copied from the leader, keeping their
// offsets and leader epochs. The first batch must start at or after the log
// end offset and every batch must follow the previous one
// (ErrOffsetsOutOfOrder otherwise); framing and CRC are checked
// (record.ErrCorrupt), max.message.bytes is not, as in Kafka. Nothing is
// appended on error.
func (l *Log) AppendAsFollower(batches []byte) (AppendInfo, error) {
	cfg := l.Config()
	if len(batches) > int(cfg.SegmentBytes) {
		return AppendInfo{}, fmt.Errorf("storage: %s: %d bytes exceed segment.bytes %d: %w", l.tp, len(batches), cfg.SegmentBytes, ErrRecordBatchTooLarge)
	}
	var headers []record.BatchHeader
	info := AppendInfo{MaxTimestamp: -1, OffsetOfMaxTimestamp: -1, LogAppendTime: -1}
	for rest, i := batches, 0; len(rest) > 0; i++ {
		b, r, err := record.NextBatch(rest)
		if err != nil {
			return AppendInfo{}, framingError(l.tp, i, err)
		}
		rest = r
		if err := b.Validate(record.Limits{AllowOffsetGaps: true}); err != nil {
			return AppendInfo{}, fmt.Errorf("storage: %s: batch %d: %w", l.tp, i, err)
		}
		h := b.Header()
		if h.BaseOffset < 0 || h.LastOffset() < h.BaseOffset {
			return AppendInfo{}, fmt.Errorf("storage: %s: batch %d has offsets %d..%d: %w",
				l.tp, i, h.BaseOffset, h.LastOffset(), record.ErrCorrupt)
		}
		if len(headers) > 0 && h.BaseOffset <= headers[len(headers)-1].LastOffset() {
			return AppendInfo{}, fmt.Errorf("storage: %s: batch %d starts at %d, not after %d: %w",
				l.tp, i, h.BaseOffset, headers[len(headers)-1].LastOffset(), ErrOffsetsOutOfOrder)
		}
		if h.MaxTimestamp > info.MaxTimestamp {
			info.MaxTimestamp, info.OffsetOfMaxTimestamp = h.MaxTimestamp, h.LastOffset()
		}
		headers = append(headers, h)
		info.NumRecords += int64(h.NumRecords)
	}
	if len(headers) == 0 {
		return AppendInfo{}, fmt.Errorf("storage: %s: empty append: %w", l.tp, record.ErrInvalidRecord)
	}
	info.NumBatches, info.Bytes = len(headers), len(batches)
	info.FirstOffset, info.LastOffset = headers[0].BaseOffset, headers[len(headers)-1].LastOffset()
	markers, err := markersOf(batches, headers)
	if err != nil {
		return AppendInfo{}, fmt.Errorf("storage: %s: %w", l.tp, err)
	}

	l.mu.Lock()
	defer l.mu.Unlock()
	if err := l.checkWritableLocked(); err != nil {
		return AppendInfo{}, err
	}
	if leo := l.end.Load().offset; info.FirstOffset < leo {
		if leo != l.logStartOffset.Load() || headers[0].LastOffset() < leo {
			return AppendInfo{}, fmt.Errorf("storage: %s: follower append at %d below log end offset %d: %w",
				l.tp, info.FirstOffset, leo, ErrOffsetsOutOfOrder)
		}
		// An empty log starting inside the leader's first batch (the
		// leader's log start offset was moved into a batch by
		// DeleteRecords): restart at the batch's base offset, as Kafka's
		// Partition.appendRecordsToFollowerOrFutureReplica does.
		l.logger.WithField("offset", info.FirstOffset).Info("storage: follower log restarts at the leader's first batch")
		if err := l.truncateFullyLocked(info.FirstOffset); err != nil {
			return AppendInfo{}, l.failLocked(err)
		}
	}
	if err := l.appendLocked(batches, headers, info, cfg); err != nil {
		return AppendInfo{}, err
	}
	if err := l.onAppendProducerStateLocked(headers, markers, info.LastOffset+1); err != nil {
		return AppendInfo{}, err
	}
	info.LogStartOffset = l.logStartOffset.Load()
	return info, nil
}

// appendLocked rolls if needed, writes, publishes the new end, records
// each batch's leader epoch and applies flush.messages.
func (l *Log) appendLocked(batches []byte, headers []record.BatchHeader, info AppendInfo, cfg Config) error {
	seg, err := l.maybeRollLocked(len(batches), info, cfg)
	if err != nil {
		return l.failLocked(err)
	}
	if err := seg.appendLocked(batches, headers); err != nil {
		return l.failLocked(err)
	}
	l.publishEndLocked(info.LastOffset + 1)
	for _, h := range headers {
		// KIP-101: remember where each epoch starts (a no-op unless new;
		// memory only, written before the recovery point passes it). A
		// flush.messages flush below must see it.
		if h.PartitionLeaderEpoch >= 0 {
			if err := l.epochs.Assign(h.PartitionLeaderEpoch, h.BaseOffset); err != nil {
				return l.failLocked(err)
			}
		}
	}
	l.mu.unflushedMessages += info.NumRecords
	if l.mu.unflushedMessages >= cfg.FlushMessages {
		// flush.messages: fsync in the append path, as Kafka's Log.append.
		if err := l.flushLocked(l.end.Load().offset); err != nil {
			return l.failLocked(err)
		}
	}
	return nil
}

// maybeRollLocked returns the segment to append to, rolling a new one when
// Kafka's LogSegment.shouldRoll holds: the append would overflow
// segment.bytes; segment.ms (minus this segment's jitter) has passed since
// the first batch's timestamp (or the segment's creation when it has none);
// an index is full; or the last offset does not fit a relative offset.
func (l *Log) maybeRollLocked(size int, info AppendInfo, cfg Config) (*Segment, error) {
	s := l.activeLocked()
	segSize := s.Size()
	var waited int64
	if s.firstBatchTimestamp >= 0 {
		waited = info.MaxTimestamp - s.firstBatchTimestamp
	} else {
		waited = l.now().Sub(s.created).Milliseconds()
	}
	reachedRollMs := waited > cfg.SegmentMs-s.rollJitterMs
	roll := segSize > int64(cfg.SegmentBytes)-int64(size) ||
		(segSize > 0 && reachedRollMs) ||
		s.offsetIndex.IsFull() || s.timeIndex.IsFull() ||
		!s.canConvertToRelativeOffset(info.LastOffset) ||
		segSize+int64(size) > math.MaxInt32
	if !roll {
		return s, nil
	}
	// A follower may skip offsets; the new segment starts at the first
	// appended offset (Kafka rolls at appendInfo.firstOffset).
	return l.rollLocked(max(info.FirstOffset, l.end.Load().offset))
}

// framingError wraps a NextBatch error; a batch cut short is corrupt input
// (CORRUPT_MESSAGE), so it matches record.ErrCorrupt as well.
func framingError(tp kafka.TopicPartition, i int, err error) error {
	if errors.Is(err, record.ErrShortBatch) && !errors.Is(err, record.ErrCorrupt) {
		return fmt.Errorf("storage: %s: batch %d: %w: %w", tp, i, record.ErrCorrupt, err)
	}
	return fmt.Errorf("storage: %s: batch %d: %w", tp, i, err)
}

// requireKeys is Kafka's LogValidator check for compacted topics: "Compacted
// topic cannot accept message without key" (INVALID_RECORD).
func requireKeys(b record.Batch) error {
	it, err := b.Iter(0)
	if err != nil {
		return err
	}
	var r record.Record
	for it.Next(&r) {
		if r.Key == nil {
			return fmt.Errorf("%w: compacted topic cannot accept a record without a key (offset delta %d)",
				record.ErrInvalidRecord, r.OffsetDelta)
		}
	}
	return it.Err()
}
