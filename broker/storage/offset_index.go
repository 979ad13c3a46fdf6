package storage

import (
	"encoding/binary"
	"fmt"
	"math"
)

// offsetIndexEntrySize is 4 bytes relative offset + 4 bytes position.
const offsetIndexEntrySize = 8

// OffsetPosition is one offset index entry resolved to absolute values: the
// last offset of a batch and the byte position of that batch in the .log.
type OffsetPosition struct {
	Offset   int64
	Position int32
}

// OffsetIndex is a segment's sparse ".index" (Kafka's OffsetIndex): entries
// of int32 (offset - baseOffset) and int32 position, big-endian, both
// strictly increasing. Since Kafka 0.11 the offset is the indexed batch's
// last offset. Safe for concurrent use.
type OffsetIndex struct {
	base int64
	x    *indexFile
}

// decodeOffsetEntry parses one 8-byte entry. It never fails; callers check
// order and range.
func decodeOffsetEntry(e []byte) (rel int32, pos int32) {
	return int32(binary.BigEndian.Uint32(e)), int32(binary.BigEndian.Uint32(e[4:]))
}

// validOffsetEntry accepts an entry only if it follows prev in both fields;
// the first entry must be non-negative in both.
func validOffsetEntry(prev, cur []byte) bool {
	rel, pos := decodeOffsetEntry(cur)
	if rel < 0 || pos < 0 {
		return false
	}
	if prev == nil {
		return true
	}
	prel, ppos := decodeOffsetEntry(prev)
	return rel > prel && pos > ppos
}

// OpenOffsetIndex opens (absent if missing, see indexFile) the offset index at path for a
// segment starting at baseOffset. maxIndexSize is segment.index.bytes.
func OpenOffsetIndex(fsys FS, path string, baseOffset int64, maxIndexSize int32, active bool) (*OffsetIndex, error) {
	x, err := openIndexFile(fsys, path, offsetIndexEntrySize,
		maxIndexEntries(maxIndexSize, offsetIndexEntrySize), active, validOffsetEntry)
	if err != nil {
		return nil, err
	}
	return &OffsetIndex{base: baseOffset, x: x}, nil
}

// Entries returns the number of entries.
func (i *OffsetIndex) Entries() int { return i.x.entries() }

// IsFull reports whether another entry would not fit.
func (i *OffsetIndex) IsFull() bool { return i.x.isFull() }

// LastEntry returns the last entry, or (baseOffset, 0) when empty.
func (i *OffsetIndex) LastEntry() OffsetPosition {
	i.x.mu.RLock()
	defer i.x.mu.RUnlock()
	e := i.x.lastLocked()
	if e == nil {
		return OffsetPosition{Offset: i.base}
	}
	rel, pos := decodeOffsetEntry(e)
	return OffsetPosition{Offset: i.base + int64(rel), Position: pos}
}

func (i *OffsetIndex) resolveLocked(n int) OffsetPosition {
	rel, pos := decodeOffsetEntry(i.x.entryLocked(n))
	return OffsetPosition{Offset: i.base + int64(rel), Position: pos}
}

// Lookup returns the entry with the largest offset <= target, or
// (baseOffset, 0) when there is none. Scanning the log from its position
// finds target.
func (i *OffsetIndex) Lookup(target int64) OffsetPosition {
	_ = i.x.ensureLoaded() // on failure: no entries, scan from the start
	i.x.mu.RLock()
	defer i.x.mu.RUnlock()
	k := i.x.searchLocked(func(e []byte) bool {
		rel, _ := decodeOffsetEntry(e)
		return i.base+int64(rel) <= target
	})
	if k < 0 {
		return OffsetPosition{Offset: i.base}
	}
	return i.resolveLocked(k)
}

// Append adds an entry for a batch whose last offset is offset at byte
// position pos. offset and pos must exceed the last entry's.
func (i *OffsetIndex) Append(offset int64, pos int32) error {
	rel := offset - i.base
	if rel < 0 || rel > math.MaxInt32 || pos < 0 {
		return fmt.Errorf("storage: offset %d position %d out of range for index based at %d", offset, pos, i.base)
	}
	if n := i.Entries(); n > 0 {
		last := i.LastEntry()
		if offset <= last.Offset || pos <= last.Position {
			return fmt.Errorf("storage: index entry (%d, %d) not after (%d, %d)", offset, pos, last.Offset, last.Position)
		}
	}
	var e [offsetIndexEntrySize]byte
	binary.BigEndian.PutUint32(e[:], uint32(rel))
	binary.BigEndian.PutUint32(e[4:], uint32(pos))
	return i.x.appendEntry(e[:])
}

// TruncateTo removes every entry whose offset is >= offset.
func (i *OffsetIndex) TruncateTo(offset int64, active bool) error {
	if err := i.x.ensureLoaded(); err != nil {
		return err
	}
	i.x.mu.RLock()
	k := i.x.searchLocked(func(e []byte) bool {
		rel, _ := decodeOffsetEntry(e)
		return i.base+int64(rel) < offset
	})
	i.x.mu.RUnlock()
	return i.x.truncateToEntries(k+1, active)
}

// TruncateToPosition removes every entry whose position is >= pos.
func (i *OffsetIndex) TruncateToPosition(pos int32, active bool) error {
	if err := i.x.ensureLoaded(); err != nil {
		return err
	}
	i.x.mu.RLock()
	k := i.x.searchLocked(func(e []byte) bool {
		_, p := decodeOffsetEntry(e)
		return p < pos
	})
	i.x.mu.RUnlock()
	return i.x.truncateToEntries(k+1, active)
}

// Reset removes every entry.
func (i *OffsetIndex) Reset(active bool) error { return i.x.truncateToEntries(0, active) }
