package storage

import (
	"errors"
	"fmt"
	"io"
	"os"
	"sort"

	"samsa/broker/record"
)

// ReadResult is what Log.Read returns: record batches as file regions plus
// the offsets a fetch response reports.
type ReadResult struct {
	// Regions hold whole batches in offset order (at most one region per
	// read today, as Kafka reads from one segment); empty when nothing is
	// available below the bound.
	Regions        []FileRegion
	LogStartOffset int64
	LogEndOffset   int64
	HighWatermark  int64
}

// Size returns the bytes in all regions.
func (r ReadResult) Size() int64 {
	var n int64
	for _, g := range r.Regions {
		n += g.Len
	}
	return n
}

// WriteTo writes every region to w (see FileRegion.WriteTo).
func (r ReadResult) WriteTo(w io.Writer) (int64, error) {
	var n int64
	for _, g := range r.Regions {
		m, err := g.WriteTo(w)
		n += m
		if err != nil {
			return n, err
		}
	}
	return n, nil
}

// Read returns whole record batches starting with the batch that holds
// offset, ending before upTo (pass HighWatermark for consumers,
// LogEndOffset for followers; larger values are clamped to the log end),
// of at most maxBytes bytes, except that with minOneBatch the first batch
// is returned even when larger than maxBytes (KIP-74). Batches wholly
// before offset are skipped, but the first batch may start before offset
// (compressed and multi-record batches are never split).
//
// It takes no lock (STYLE S6.4) and never copies record bytes. offset
// outside [LogStartOffset, LogEndOffset] returns ErrOffsetOutOfRange; a
// malformed segment returns an error matching ErrCorrupt.
func (l *Log) Read(offset int64, maxBytes int, upTo int64, minOneBatch bool) (ReadResult, error) {
	end := l.end.Load()
	res := ReadResult{
		LogStartOffset: l.logStartOffset.Load(),
		LogEndOffset:   end.offset,
		HighWatermark:  l.highWatermark.Load(),
	}
	if offset < res.LogStartOffset || offset > end.offset {
		return res, fmt.Errorf("storage: %s: offset %d outside [%d, %d]: %w",
			l.tp, offset, res.LogStartOffset, end.offset, ErrOffsetOutOfRange)
	}
	upTo = min(upTo, end.offset)
	if offset >= upTo || maxBytes < 0 {
		return res, nil
	}
	segs := *l.segments.Load()
	i := sort.Search(len(segs), func(i int) bool { return segs[i].base > offset }) - 1
	if i < 0 {
		i = 0
	}
	for ; i < len(segs) && segs[i].base <= end.seg.base; i++ {
		s := segs[i]
		maxPos := s.Size()
		var recent []batchPlace // the places of s's last batches, if active
		if s == end.seg {
			maxPos, recent = end.pos, end.recent
		}
		if upTo < end.offset && (i+1 == len(segs) || segs[i+1].base > upTo) {
			// upTo lies in this segment: stop before its batch.
			p, found, err := s.locate(upTo, maxPos, recent)
			if err != nil {
				return res, l.readError(offset, err)
			}
			if found {
				maxPos = p.pos
			}
		}
		region, found, err := s.read(offset, maxBytes, maxPos, minOneBatch, recent)
		if err != nil {
			return res, l.readError(offset, err)
		}
		if found {
			if region.Len > 0 {
				res.Regions = []FileRegion{region}
			}
			return res, nil
		}
		if upTo < end.offset && (i+1 == len(segs) || segs[i+1].base > upTo) {
			break
		}
	}
	return res, nil
}

// readError explains a read that failed because retention or truncation
// removed or cut the segment after the read picked it (a closed file, a
// batch cut short): the offset is now out of range.
func (l *Log) readError(offset int64, err error) error {
	if (errors.Is(err, os.ErrClosed) || errors.Is(err, ErrCorrupt)) &&
		(offset < l.LogStartOffset() || offset > l.LogEndOffset()) {
		return fmt.Errorf("storage: %s: offset %d left the log during the read: %w", l.tp, offset, ErrOffsetOutOfRange)
	}
	return err
}

// Special timestamps of ListOffsets.
const (
	LatestTimestamp   int64 = -1 // the log end offset
	EarliestTimestamp int64 = -2 // the log start offset
)

// OffsetForTimestamp answers ListOffsets (Kafka's
// Log.fetchOffsetByTimestamp): the first offset whose record timestamp is
// >= ts, with that timestamp; LatestTimestamp and EarliestTimestamp give
// the log end and start offsets (timestamp -1). found is false when every
// record is older than ts.
func (l *Log) OffsetForTimestamp(ts int64) (to TimestampOffset, found bool, err error) {
	switch ts {
	case LatestTimestamp:
		return TimestampOffset{Timestamp: -1, Offset: l.LogEndOffset()}, true, nil
	case EarliestTimestamp:
		return TimestampOffset{Timestamp: -1, Offset: l.LogStartOffset()}, true, nil
	}
	if ts < 0 {
		return to, false, fmt.Errorf("storage: %s: invalid timestamp %d: %w", l.tp, ts, ErrInvalidTimestamp)
	}
	end := l.end.Load()
	start := l.logStartOffset.Load()
	for _, s := range *l.segments.Load() {
		if s.base > end.seg.base {
			break
		}
		if s.maxTimestamp.Load() < ts {
			continue // Kafka: the first segment whose largest timestamp >= ts
		}
		maxPos := s.Size()
		if s == end.seg {
			maxPos = end.pos
		}
		to, found, err = s.findOffsetByTimestamp(ts, start, maxPos)
		if err != nil || found {
			return to, found, err
		}
	}
	return to, false, nil
}

// findOffsetByTimestamp scans from the time index's hint for the first
// record with timestamp >= ts at or after startOffset.
func (s *Segment) findOffsetByTimestamp(ts, startOffset, maxPos int64) (TimestampOffset, bool, error) {
	hint := s.timeIndex.Lookup(ts)
	pos := int64(s.offsetIndex.Lookup(max(hint.Offset, startOffset)).Position)
	hr := headerReader{f: s.log, limit: maxPos}
	defer hr.release()
	for pos < maxPos {
		h, err := hr.at(pos)
		if err != nil {
			return TimestampOffset{}, false, s.corruptAt(pos, err)
		}
		if h.MaxTimestamp >= ts && h.LastOffset() >= startOffset {
			if h.Size() > maxPos-pos {
				return TimestampOffset{}, false, s.corruptAt(pos, fmt.Errorf("batch crosses end %d", maxPos))
			}
			buf := make([]byte, h.Size()) // bounded by maxPos above
			if _, err := s.log.ReadAt(buf, pos); err != nil {
				return TimestampOffset{}, false, storageError("read segment", err)
			}
			b := record.Batch(buf)
			if h.TimestampType() == record.TimestampLogAppendTime {
				return TimestampOffset{Timestamp: h.MaxTimestamp, Offset: max(h.BaseOffset, startOffset)}, true, nil
			}
			it, err := b.Iter(0)
			if err != nil {
				return TimestampOffset{}, false, s.corruptAt(pos, err)
			}
			var r record.Record
			for it.Next(&r) {
				off := h.BaseOffset + int64(r.OffsetDelta)
				if rts := h.FirstTimestamp + r.TimestampDelta; rts >= ts && off >= startOffset {
					return TimestampOffset{Timestamp: rts, Offset: off}, true, nil
				}
			}
			if err := it.Err(); err != nil {
				return TimestampOffset{}, false, s.corruptAt(pos, err)
			}
		}
		pos += h.Size()
	}
	return TimestampOffset{}, false, nil
}
