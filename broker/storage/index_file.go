package storage

import (
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"sync"
)

// indexFile is the storage shared by OffsetIndex and TimeIndex: a file of
// fixed-size big-endian entries, sorted, mirrored in memory.
//
// An indexFile holds no open descriptor. Reads are served from the
// in-memory copy (binary search, no syscalls). Appends go to the copy only
// and reach the file on sync, roll, truncation and close, the rare
// operations, each of which opens the file, writes (one pwrite for all new
// entries) and trims or grows it, and closes it again. Kafka's AbstractIndex
// likewise closes its file right after mmapping it, so an index costs no
// descriptor there either, and a replica costs one (its active .log): a
// broker with 10,000 replicas stays far below the open-file limit. Like
// Kafka's mmap, an append costs no syscall, and like Kafka, entries not yet
// written are rebuilt by recovery after a crash (an index is derived data).
// While the segment is active the file is preallocated (sparse) to
// maxEntries*entrySize, as Kafka does with its mmap; trim cuts it to the
// entries on roll and close.
//
// The file is created lazily (doc.go, "Lazy index files"): opening an
// index whose file does not exist leaves it absent, with no entries, and
// the file is created by the first operation that writes it: persisting
// entries (sync, eviction, close) or materialize (the segment asks for the
// file when it rolls or closes holding data). Until then truncation,
// resizing and renaming touch only memory and the name. A closed index
// never creates its file, and a segment is always closed before its files
// are removed, so no write after removal can leave a stray index behind:
// while the file exists, every operation opens it without O_CREATE.
//
// An inactive segment's index is evicted: its entries leave memory (only
// the count and the last entry stay) and the first lookup reads them
// again, so memory goes to the active segments and to the segments being
// read, as Kafka's lazy mmaps do. A lookup racing an eviction sees no
// entries and returns the segment start, which is always a correct (if
// slower) place to scan from.
type indexFile struct {
	fs         FS
	entrySize  int
	maxEntries int                         // immutable after open
	valid      func(prev, cur []byte) bool // immutable after open

	mu struct {
		sync.RWMutex
		path string // current name (changes on rename)
		buf  []byte // len == entries*entrySize; nil when evicted
		// persisted is how many bytes of buf are in the file.
		persisted int
		closed    bool
		evicted   bool
		// absent: the file does not exist yet (see the type comment).
		absent bool
		// active: the file is (or, once created, will be) preallocated to
		// maxEntries rather than trimmed to its entries; set at open and by
		// every resize or truncation.
		active bool
		count  int    // entries while evicted
		last   []byte // copy of the last entry while evicted
	}
}

// maxIndexEntries rounds segment.index.bytes down to whole entries, but
// to no fewer than 2 (the time index keeps one slot for its final entry).
func maxIndexEntries(maxIndexSize int32, entrySize int) int {
	return max(int(maxIndexSize)/entrySize, 2)
}

// openIndexFile opens path, loads its entries and closes it again; a
// missing file leaves the index absent and empty, and is not created (see
// the type comment). valid is called for each entry in order with the
// previous accepted one (nil first) and returns false at the first unused
// (zero) or out-of-order slot, where loading stops; Kafka likewise treats
// the preallocated zero tail as empty. When active, an existing file is
// preallocated to its maximum size.
func openIndexFile(fsys FS, path string, entrySize, maxEntries int, active bool,
	valid func(prev, cur []byte) bool) (*indexFile, error) {
	x := &indexFile{fs: fsys, entrySize: entrySize, maxEntries: maxEntries, valid: valid}
	x.mu.path = path
	x.mu.active = active
	f, err := fsys.OpenFile(path, os.O_RDWR, 0)
	if errors.Is(err, fs.ErrNotExist) {
		x.mu.absent = true
		return x, nil
	}
	if err != nil {
		return nil, storageError("open index", err)
	}
	err = x.loadFrom(f, active)
	if cerr := f.Close(); err == nil {
		err = storageError("close index", cerr)
	}
	if err != nil {
		return nil, err
	}
	return x, nil
}

// loadFrom reads the valid entries of a just-opened f and resizes it; the
// caller closes f.
func (x *indexFile) loadFrom(f File, active bool) error {
	st, err := f.Stat()
	if err != nil {
		return storageError("stat index", err)
	}
	size := st.Size()
	limit := int64(x.maxEntries * x.entrySize)
	if size > limit {
		size = limit // entries past the configured maximum are dropped
	}
	size -= size % int64(x.entrySize)
	if size > 0 {
		raw := make([]byte, size) // bounded by segment.index.bytes
		if _, err := f.ReadAt(raw, 0); err != nil && !errors.Is(err, io.EOF) {
			return storageError("read index", err)
		}
		n := validIndexPrefix(raw, x.entrySize, x.valid)
		x.mu.buf = raw[: n*x.entrySize : n*x.entrySize]
		x.mu.persisted = len(x.mu.buf)
	}
	return x.writeOutLocked(f, active)
}

// withFileLocked opens the file, runs fn on it and closes it. An absent
// file is created first, with the entries in memory written and sized as
// x.mu.active says; a closed index creates nothing. Callers hold x.mu.
func (x *indexFile) withFileLocked(fn func(f File) error) error {
	if x.mu.closed {
		return nil
	}
	flag := os.O_RDWR
	created := x.mu.absent
	if created {
		flag |= os.O_CREATE | os.O_TRUNC // nothing of ours is in it yet
	}
	f, err := x.fs.OpenFile(x.mu.path, flag, 0o644)
	if err != nil {
		return storageError("reopen index", err)
	}
	if created {
		x.mu.absent, x.mu.persisted = false, 0
		err = x.writeOutLocked(f, x.mu.active)
	}
	if err == nil {
		err = fn(f)
	}
	if cerr := f.Close(); err == nil {
		err = storageError("close index", cerr)
	}
	return err
}

// validIndexPrefix returns how many leading entries of raw valid accepts,
// each checked against the previous accepted one. Loading an index file
// uses it; it never panics on any input.
func validIndexPrefix(raw []byte, entrySize int, valid func(prev, cur []byte) bool) int {
	var prev []byte
	n := 0
	for ; (n+1)*entrySize <= len(raw); n++ {
		cur := raw[n*entrySize : (n+1)*entrySize]
		if !valid(prev, cur) {
			break
		}
		prev = cur
	}
	return n
}

// entries returns the number of entries.
func (x *indexFile) entries() int {
	x.mu.RLock()
	defer x.mu.RUnlock()
	return x.countLocked()
}

func (x *indexFile) countLocked() int {
	if x.mu.evicted {
		return x.mu.count
	}
	return len(x.mu.buf) / x.entrySize
}

// lastLocked returns the last entry (nil when there is none), also while
// evicted.
func (x *indexFile) lastLocked() []byte {
	if x.mu.evicted {
		return x.mu.last
	}
	if n := len(x.mu.buf) / x.entrySize; n > 0 {
		return x.entryLocked(n - 1)
	}
	return nil
}

// isFull reports whether no further entry fits.
func (x *indexFile) isFull() bool { return x.entries() >= x.maxEntries }

// ensureLoaded reloads an evicted index. A failure leaves it evicted
// (lookups then scan from the segment start) and is returned.
func (x *indexFile) ensureLoaded() error {
	x.mu.RLock()
	evicted := x.mu.evicted
	x.mu.RUnlock()
	if !evicted {
		return nil
	}
	x.mu.Lock()
	defer x.mu.Unlock()
	return x.loadLocked()
}

func (x *indexFile) loadLocked() error {
	if !x.mu.evicted {
		return nil
	}
	if x.mu.closed {
		return ErrClosed
	}
	if x.mu.absent { // nothing was written, so nothing was evicted
		x.mu.evicted, x.mu.count, x.mu.last = false, 0, nil
		return nil
	}
	f, err := x.fs.OpenFile(x.mu.path, os.O_RDONLY, 0)
	if err != nil {
		return storageError("reopen index", err)
	}
	raw := make([]byte, x.mu.count*x.entrySize) // bounded by maxEntries
	n, err := f.ReadAt(raw, 0)
	cerr := f.Close()
	if n < len(raw) {
		if err == nil || errors.Is(err, io.EOF) {
			err = io.ErrUnexpectedEOF
		}
		return storageError("reload index", err)
	}
	if cerr != nil {
		return storageError("close index", cerr)
	}
	k := validIndexPrefix(raw, x.entrySize, x.valid)
	x.mu.buf = raw[: k*x.entrySize : k*x.entrySize]
	x.mu.persisted = len(x.mu.buf)
	x.mu.evicted, x.mu.count, x.mu.last = false, 0, nil
	return nil
}

// evict writes pending entries and drops them from memory (an inactive
// segment's index; see the type comment).
func (x *indexFile) evict() error {
	x.mu.Lock()
	defer x.mu.Unlock()
	if x.mu.closed || x.mu.evicted {
		return nil
	}
	if x.mu.persisted < len(x.mu.buf) {
		if err := x.withFileLocked(x.persistTo); err != nil {
			return err
		}
	}
	if x.mu.absent {
		return nil // no entries: nothing in memory to drop
	}
	n := len(x.mu.buf) / x.entrySize
	var last []byte
	if n > 0 {
		last = append([]byte(nil), x.entryLocked(n-1)...)
	}
	x.mu.buf, x.mu.persisted = nil, 0
	x.mu.evicted, x.mu.count, x.mu.last = true, n, last
	return nil
}

// appendEntry writes e after the last entry (in memory; see the type
// comment).
func (x *indexFile) appendEntry(e []byte) error {
	x.mu.Lock()
	defer x.mu.Unlock()
	if x.mu.closed {
		return ErrClosed
	}
	if err := x.loadLocked(); err != nil {
		return err
	}
	n := len(x.mu.buf) / x.entrySize
	if n >= x.maxEntries {
		return fmt.Errorf("storage: index %s is full (%d entries)", x.mu.path, n)
	}
	x.mu.buf = append(x.mu.buf, e...)
	return nil
}

// persistTo writes the entries not yet in the file to f; callers hold
// x.mu.
func (x *indexFile) persistTo(f File) error {
	if x.mu.persisted >= len(x.mu.buf) {
		return nil
	}
	if _, err := f.WriteAt(x.mu.buf[x.mu.persisted:], int64(x.mu.persisted)); err != nil {
		return storageError("write index", err)
	}
	x.mu.persisted = len(x.mu.buf)
	return nil
}

// writeOutLocked writes pending entries to f and preallocates it (active)
// or trims it to its entries.
func (x *indexFile) writeOutLocked(f File, active bool) error {
	if err := x.persistTo(f); err != nil {
		return err
	}
	size := int64(len(x.mu.buf))
	if active {
		size = int64(x.maxEntries * x.entrySize)
	}
	return storageError("resize index", f.Truncate(size))
}

// truncateToEntries keeps the first n entries and zeroes the rest of the
// file so a crash cannot resurrect them.
func (x *indexFile) truncateToEntries(n int, active bool) error {
	x.mu.Lock()
	defer x.mu.Unlock()
	if x.mu.closed {
		return ErrClosed
	}
	if err := x.loadLocked(); err != nil {
		return err
	}
	if n*x.entrySize >= len(x.mu.buf) {
		return nil
	}
	x.mu.buf = x.mu.buf[:n*x.entrySize]
	x.mu.persisted = min(x.mu.persisted, len(x.mu.buf))
	x.mu.active = active
	if x.mu.absent {
		return nil // the cut entries never reached a file
	}
	return x.withFileLocked(func(f File) error {
		if err := f.Truncate(int64(x.mu.persisted)); err != nil {
			return storageError("truncate index", err)
		}
		return x.writeOutLocked(f, active)
	})
}

// resize preallocates the file (active) or trims it to its entries.
func (x *indexFile) resize(active bool) error {
	x.mu.Lock()
	defer x.mu.Unlock()
	if x.mu.closed {
		return ErrClosed
	}
	x.mu.active = active
	if x.mu.absent {
		return nil // sized so when it is created
	}
	if x.mu.evicted && !active {
		return nil // trimmed before it was evicted
	}
	if err := x.loadLocked(); err != nil {
		return err
	}
	return x.withFileLocked(func(f File) error { return x.writeOutLocked(f, active) })
}

// materialize creates the file of an absent index with its entries (the
// segment holds data and rolls or closes; see doc.go). It does nothing when
// the file exists or the index is closed.
func (x *indexFile) materialize() error {
	x.mu.Lock()
	defer x.mu.Unlock()
	if !x.mu.absent {
		return nil
	}
	return x.withFileLocked(func(File) error { return nil })
}

// exists reports whether the index has a file.
func (x *indexFile) exists() bool {
	x.mu.RLock()
	defer x.mu.RUnlock()
	return !x.mu.absent
}

// entry returns a copy-free view of entry i; callers hold x.mu.
func (x *indexFile) entryLocked(i int) []byte {
	return x.mu.buf[i*x.entrySize : (i+1)*x.entrySize]
}

// search returns the largest i whose entry satisfies le (a monotone
// "key <= target" predicate), or -1.
func (x *indexFile) searchLocked(le func(e []byte) bool) int {
	lo, hi := 0, len(x.mu.buf)/x.entrySize-1
	ans := -1
	for lo <= hi {
		mid := int(uint(lo+hi) >> 1)
		if le(x.entryLocked(mid)) {
			ans, lo = mid, mid+1
		} else {
			hi = mid - 1
		}
	}
	return ans
}

// sync writes pending entries and fsyncs the index, creating an absent
// file when it has entries or create says so. Durable: every entry of this
// index (also rebuildable from the log, so this only saves recovery time).
// An evicted index was written before eviction but maybe not yet fsynced,
// so it is fsynced too. An absent index without entries costs nothing.
func (x *indexFile) sync(create bool) error {
	x.mu.Lock()
	defer x.mu.Unlock()
	if x.mu.closed || (x.mu.absent && len(x.mu.buf) == 0 && !create) {
		return nil
	}
	return x.withFileLocked(func(f File) error {
		if err := x.persistTo(f); err != nil {
			return err
		}
		// Durable: every entry of this index.
		return storageError("sync index", f.Sync())
	})
}

// close ends the index; with trim it first writes pending entries and
// trims the file to them, creating an absent file when it has entries or
// create says so. Without trim (the files were removed) it touches no
// file.
func (x *indexFile) close(trim, create bool) error {
	x.mu.Lock()
	defer x.mu.Unlock()
	if x.mu.closed {
		return nil
	}
	skip := x.mu.evicted || !trim || (x.mu.absent && len(x.mu.buf) == 0 && !create)
	x.mu.active = false
	if !skip {
		// withFileLocked creates nothing once closed: close after it.
		defer func() { x.mu.closed = true }()
		trim := func(f File) error { return x.writeOutLocked(f, false) }
		if x.mu.absent {
			trim = func(File) error { return nil } // created trimmed
		}
		return x.withFileLocked(trim)
	}
	x.mu.closed = true
	return nil // an evicted index was written and trimmed before
}

// rename renames the file; no descriptor is held, so only the name
// changes (only the name, when the file is absent).
func (x *indexFile) rename(path string) error {
	x.mu.Lock()
	defer x.mu.Unlock()
	if x.mu.absent {
		x.mu.path = path
		return nil
	}
	if err := x.fs.Rename(x.mu.path, path); err != nil {
		return storageError("rename index", err)
	}
	x.mu.path = path
	return nil
}

// path returns the current file name.
func (x *indexFile) path() string {
	x.mu.RLock()
	defer x.mu.RUnlock()
	return x.mu.path
}

// sizeInBytes returns the bytes used by entries.
func (x *indexFile) sizeInBytes() int64 {
	x.mu.RLock()
	defer x.mu.RUnlock()
	return int64(x.countLocked() * x.entrySize)
}
