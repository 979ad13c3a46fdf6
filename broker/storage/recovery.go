package storage

import (
	"errors"
	"fmt"
	"io"
	"math"

	"github.com/sirupsen/logrus"

	"samsa/broker/record"
)

// ScanBatches reads the record batches of a segment's bytes (r, size bytes
// long) from position 0 and returns how many leading bytes form valid
// batches. baseOffset is the segment's base offset. visit is called for
// each valid batch in order; the Batch is only valid during the call.
//
// A batch is valid when its header frames correctly, it lies entirely
// within size, its CRC-32C matches (Kafka's LogSegment.recover checks
// exactly this, batch.ensureValid), its offsets are at or after
// baseOffset, within 2^31-1 of it, and follow the previous batch's. The first invalid
// batch ends the scan: stop describes it (nil when the scan reached size).
// Every length is bounded by size before anything is allocated.
//
// Read errors other than a short read are returned as err.
func ScanBatches(r io.ReaderAt, size, baseOffset int64, visit func(pos int64, b record.Batch) error) (valid int64, stop, err error) {
	var buf []byte
	next := baseOffset
	for pos := int64(0); pos < size; {
		h, herr := record.ReadHeaderAt(r, pos)
		if herr != nil {
			if errors.Is(herr, record.ErrShortBatch) || errors.Is(herr, record.ErrCorrupt) {
				return pos, herr, nil
			}
			return pos, nil, herr
		}
		if h.Size() > size-pos {
			return pos, fmt.Errorf("%w: batch of %d bytes, %d left", record.ErrShortBatch, h.Size(), size-pos), nil
		}
		if cap(buf) < int(h.Size()) {
			buf = make([]byte, h.Size()) // bounded by size above
		}
		buf = buf[:h.Size()]
		if n, rerr := r.ReadAt(buf, pos); n < len(buf) {
			if rerr == nil || errors.Is(rerr, io.EOF) {
				return pos, fmt.Errorf("%w: file ended inside batch", record.ErrShortBatch), nil
			}
			return pos, nil, rerr
		}
		b := record.Batch(buf)
		if verr := b.Validate(record.Limits{AllowOffsetGaps: true}); verr != nil {
			return pos, verr, nil
		}
		if b.BaseOffset() < next {
			return pos, fmt.Errorf("%w: batch offset %d after %d", record.ErrCorrupt, b.BaseOffset(), next-1), nil
		}
		// The base offset is outside the CRC: a damaged one must still fit
		// the segment's 32-bit relative offsets.
		if last := b.LastOffset(); last < b.BaseOffset() || last-baseOffset > math.MaxInt32 {
			return pos, fmt.Errorf("%w: batch offsets %d..%d do not fit a segment based at %d",
				record.ErrCorrupt, b.BaseOffset(), last, baseOffset), nil
		}
		if visit != nil {
			if verr := visit(pos, b); verr != nil {
				return pos, nil, verr
			}
		}
		next = b.NextOffset()
		pos += h.Size()
	}
	return size, nil, nil
}

// recoverSegmentLocked rebuilds a segment's indexes and timestamps from its
// .log and truncates the .log after the last valid batch (Kafka's
// LogSegment.recover). It returns the bytes dropped, after logging them at
// WARN with the segment, position and reason. The caller holds Log.mu.
func recoverSegmentLocked(s *Segment, active bool, logger logrus.FieldLogger) (int64, error) {
	return recoverSegmentVisitLocked(s, active, logger, nil)
}

// recoverSegmentVisitLocked is recoverSegmentLocked that also calls
// onBatch (when not nil) with the header of every valid batch, in order.
func recoverSegmentVisitLocked(s *Segment, active bool, logger logrus.FieldLogger, onBatch func(record.BatchHeader)) (int64, error) {
	s.recent.reset()
	if err := s.offsetIndex.Reset(active); err != nil {
		return 0, err
	}
	if err := s.timeIndex.Reset(active); err != nil {
		return 0, err
	}
	s.maxTimestamp.Store(-1)
	s.offsetOfMaxTimestamp.Store(-1)
	s.firstBatchTimestamp = -1
	s.bytesSinceLastIndexEntry = 0
	size := s.size.Load()
	valid, stop, err := ScanBatches(s.log, size, s.base, func(pos int64, b record.Batch) error {
		h := b.Header()
		if onBatch != nil {
			onBatch(h)
		}
		return s.indexBatchLocked(h, pos)
	})
	if err != nil {
		return 0, storageError("recover segment", err)
	}
	if valid == size {
		return 0, nil
	}
	logger.WithFields(logrus.Fields{
		"segment":  s.logPath,
		"position": valid,
		"dropped":  size - valid,
	}).WithError(&CorruptError{Path: s.logPath, Pos: valid, Err: stop}).
		Warn("storage: truncating invalid bytes at the end of a segment during recovery")
	if err := s.log.Truncate(valid); err != nil {
		return 0, storageError("truncate segment", err)
	}
	s.size.Store(valid)
	s.preallocated = false
	return size - valid, nil
}
