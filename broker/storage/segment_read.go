package storage

import (
	"errors"
	"fmt"

	"samsa/broker/record"
)

// translateOffset returns the position and header of the first batch at or
// after startPos whose last offset is >= offset, looking only below
// maxPos. found is false when there is none.
func (s *Segment) translateOffset(offset int64, maxPos int64) (pos int64, h record.BatchHeader, found bool, err error) {
	pos = int64(s.offsetIndex.Lookup(offset).Position)
	hr := headerReader{f: s.log, limit: maxPos}
	defer hr.release()
	for i := 0; pos < maxPos; i++ {
		h, err = hr.at(pos)
		if err != nil {
			return 0, h, false, s.corruptAt(pos, err)
		}
		if pos+h.Size() > maxPos {
			return 0, h, false, s.corruptAt(pos, fmt.Errorf("batch of %d bytes crosses end %d", h.Size(), maxPos))
		}
		if h.LastOffset() >= offset {
			return pos, h, true, nil
		}
		pos += h.Size()
	}
	return 0, h, false, nil
}

// corruptAt wraps a scan error: a short or malformed header below a
// published size means the file changed under us or the disk lies.
func (s *Segment) corruptAt(pos int64, err error) error {
	var ce *CorruptError
	if errors.As(err, &ce) || errors.Is(err, ErrStorage) {
		return err
	}
	if errors.Is(err, record.ErrShortBatch) || errors.Is(err, record.ErrCorrupt) {
		// s.log.Name() is immutable; s.logPath may be renamed under us.
		return &CorruptError{Path: s.log.Name(), Pos: pos, Err: err}
	}
	return storageError("read segment", err)
}

// batchBoundaryAtOrBelow returns the largest batch boundary in
// [startPos, limit], scanning forward from startPos (a boundary) with the
// help of the offset index.
func (s *Segment) batchBoundaryAtOrBelow(startPos, limit int64) (int64, error) {
	pos := startPos
	_ = s.offsetIndex.x.ensureLoaded() // on failure: scan from startPos
	s.offsetIndex.x.mu.RLock()
	k := s.offsetIndex.x.searchLocked(func(e []byte) bool {
		_, p := decodeOffsetEntry(e)
		return int64(p) <= limit
	})
	if k >= 0 {
		if p := int64(s.offsetIndex.resolveLocked(k).Position); p > pos {
			pos = p
		}
	}
	s.offsetIndex.x.mu.RUnlock()
	hr := headerReader{f: s.log, limit: limit}
	defer hr.release()
	for i := 0; ; i++ {
		h, err := hr.at(pos)
		if err != nil {
			return 0, s.corruptAt(pos, err)
		}
		if pos+h.Size() > limit {
			return pos, nil
		}
		pos += h.Size()
		if pos == limit {
			return pos, nil
		}
	}
}

// read returns the region of whole batches starting with the batch that
// holds startOffset, below maxPos (a batch boundary), of at most maxBytes
// unless minOneBatch and the first batch alone is larger (KIP-74). found is
// false when no batch at or after startOffset lies below maxPos. recent is
// the published view of the segment's last batches (nil unless s is the
// active segment of the logEnd the caller read): offsets and bounds inside
// it cost no read of the file.
func (s *Segment) read(startOffset int64, maxBytes int, maxPos int64, minOneBatch bool, recent []batchPlace) (r FileRegion, found bool, err error) {
	first, found, err := s.locate(startOffset, maxPos, recent)
	if err != nil || !found {
		return FileRegion{}, false, err
	}
	pos := first.pos
	end := maxPos // a batch boundary: no need to look for one
	if int64(maxBytes) < maxPos-pos {
		limit := pos + int64(maxBytes)
		b, ok := boundaryRecent(recent, limit)
		switch {
		case ok:
			end = b
		case limit > pos:
			if end, err = s.batchBoundaryAtOrBelow(pos, limit); err != nil {
				return FileRegion{}, false, err
			}
		default:
			end = pos
		}
	}
	if end == pos && minOneBatch {
		end = first.end()
	}
	return FileRegion{File: s.log, Pos: pos, Len: end - pos, FirstOffset: first.base}, true, nil
}

// locate is translateOffset answered from recent when it can, reading
// batch headers from the file only otherwise.
func (s *Segment) locate(offset, maxPos int64, recent []batchPlace) (batchPlace, bool, error) {
	if p, found, ok := findRecent(recent, offset, maxPos); ok {
		return p, found, nil
	}
	pos, h, found, err := s.translateOffset(offset, maxPos)
	if err != nil || !found {
		return batchPlace{}, false, err
	}
	return batchPlace{base: h.BaseOffset, last: h.LastOffset(), pos: pos, size: h.Size()}, true, nil
}
