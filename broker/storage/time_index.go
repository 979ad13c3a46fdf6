package storage

import (
	"encoding/binary"
	"fmt"
	"math"
)

// timeIndexEntrySize is 8 bytes timestamp + 4 bytes relative offset.
const timeIndexEntrySize = 12

// TimestampOffset is one time index entry resolved to absolute values: the
// largest timestamp seen so far in the segment and the offset of the batch
// that carried it.
type TimestampOffset struct {
	Timestamp int64
	Offset    int64
}

// TimeIndex is a segment's sparse ".timeindex" (Kafka's TimeIndex, KIP-33):
// entries of int64 timestamp (ms) and int32 (offset - baseOffset),
// big-endian. An entry is written only when the segment's max timestamp
// grew, so timestamps strictly increase. Safe for concurrent use.
type TimeIndex struct {
	base int64
	x    *indexFile
}

// decodeTimeEntry parses one 12-byte entry. It never fails.
func decodeTimeEntry(e []byte) (ts int64, rel int32) {
	return int64(binary.BigEndian.Uint64(e)), int32(binary.BigEndian.Uint32(e[8:]))
}

// validTimeEntry accepts an entry only if its timestamp grows and its offset
// does not shrink; a zero slot after a real entry is therefore the end.
func validTimeEntry(prev, cur []byte) bool {
	ts, rel := decodeTimeEntry(cur)
	if rel < 0 || ts < 0 {
		return false
	}
	if prev == nil {
		return true
	}
	pts, prel := decodeTimeEntry(prev)
	return ts > pts && rel >= prel
}

// OpenTimeIndex opens the time index at path (absent if missing, see
// indexFile).
func OpenTimeIndex(fsys FS, path string, baseOffset int64, maxIndexSize int32, active bool) (*TimeIndex, error) {
	x, err := openIndexFile(fsys, path, timeIndexEntrySize,
		maxIndexEntries(maxIndexSize, timeIndexEntrySize), active, validTimeEntry)
	if err != nil {
		return nil, err
	}
	return &TimeIndex{base: baseOffset, x: x}, nil
}

// Entries returns the number of entries.
func (t *TimeIndex) Entries() int { return t.x.entries() }

// IsFull reports whether another entry would not fit. One slot stays free
// for the final entry written when the segment becomes inactive.
func (t *TimeIndex) IsFull() bool { return t.x.entries() >= t.x.maxEntries-1 }

// LastEntry returns the last entry, or (-1, baseOffset) when empty.
func (t *TimeIndex) LastEntry() TimestampOffset {
	t.x.mu.RLock()
	defer t.x.mu.RUnlock()
	e := t.x.lastLocked()
	if e == nil {
		return TimestampOffset{Timestamp: -1, Offset: t.base}
	}
	ts, rel := decodeTimeEntry(e)
	return TimestampOffset{Timestamp: ts, Offset: t.base + int64(rel)}
}

func (t *TimeIndex) resolveLocked(n int) TimestampOffset {
	ts, rel := decodeTimeEntry(t.x.entryLocked(n))
	return TimestampOffset{Timestamp: ts, Offset: t.base + int64(rel)}
}

// Lookup returns the entry with the largest timestamp <= ts, or
// (-1, baseOffset) when there is none. Every batch before the returned
// offset has a max timestamp below ts.
func (t *TimeIndex) Lookup(ts int64) TimestampOffset {
	_ = t.x.ensureLoaded() // on failure: no entries, scan from the start
	t.x.mu.RLock()
	defer t.x.mu.RUnlock()
	k := t.x.searchLocked(func(e []byte) bool {
		ets, _ := decodeTimeEntry(e)
		return ets <= ts
	})
	if k < 0 {
		return TimestampOffset{Timestamp: -1, Offset: t.base}
	}
	return t.resolveLocked(k)
}

// MaybeAppend adds (ts, offset) if ts is larger than the last entry's
// timestamp (Kafka's TimeIndex.maybeAppend). skipFull lets the final entry
// of a rolled segment use the reserved slot.
func (t *TimeIndex) MaybeAppend(ts, offset int64, skipFull bool) error {
	if ts < 0 {
		return nil // batches without timestamps (-1) are never indexed
	}
	last := t.LastEntry()
	if t.Entries() > 0 && ts <= last.Timestamp {
		return nil
	}
	if t.Entries() > 0 && offset < last.Offset {
		return fmt.Errorf("storage: time index offset %d before %d", offset, last.Offset)
	}
	rel := offset - t.base
	if rel < 0 || rel > math.MaxInt32 {
		return fmt.Errorf("storage: offset %d out of range for time index based at %d", offset, t.base)
	}
	if !skipFull && t.IsFull() {
		return fmt.Errorf("storage: time index %s is full", t.x.path())
	}
	var e [timeIndexEntrySize]byte
	binary.BigEndian.PutUint64(e[:], uint64(ts))
	binary.BigEndian.PutUint32(e[8:], uint32(rel))
	return t.x.appendEntry(e[:])
}

// TruncateTo removes every entry whose offset is >= offset.
func (t *TimeIndex) TruncateTo(offset int64, active bool) error {
	if err := t.x.ensureLoaded(); err != nil {
		return err
	}
	t.x.mu.RLock()
	k := t.x.searchLocked(func(e []byte) bool {
		_, rel := decodeTimeEntry(e)
		return t.base+int64(rel) < offset
	})
	t.x.mu.RUnlock()
	return t.x.truncateToEntries(k+1, active)
}

// Reset removes every entry.
func (t *TimeIndex) Reset(active bool) error { return t.x.truncateToEntries(0, active) }
