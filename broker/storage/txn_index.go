package storage

import (
	"encoding/binary"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"sync"
)

// TxnIndexFileSuffix names a segment's aborted-transaction index,
// "<20-digit base offset>.txnindex" (Kafka's Log.TxnIndexFileSuffix).
const TxnIndexFileSuffix = ".txnindex"

// Layout of a .txnindex file (Kafka 2.8 TransactionIndex / AbortedTxn):
// no header, a sequence of 34-byte big-endian entries, one per transaction
// aborted by an ABORT marker in this segment, in marker order:
//
//	version            int16  @0   0
//	producer_id        int64  @2
//	first_offset       int64  @10  the transaction's first offset (maybe in an older segment)
//	last_offset        int64  @18  the ABORT marker's offset; strictly increasing
//	last_stable_offset int64  @26  first offset of the oldest other open
//	                              transaction when the marker was written,
//	                              else last_offset + 1
const (
	txnIndexEntrySize = 34
	txnIndexVersion   = 0
	// maxTxnIndexBytes bounds a .txnindex read into memory (about 2 million
	// entries; a segment of 1 GiB holds at most ~13 million markers).
	maxTxnIndexBytes = 64 << 20
)

// ErrCorruptTxnIndex marks a .txnindex that fails its checks.
var ErrCorruptTxnIndex = fmt.Errorf("%w: transaction index", ErrCorrupt)

// AbortedTxn is one .txnindex entry (Kafka's AbortedTxn).
type AbortedTxn struct {
	ProducerID       int64
	FirstOffset      int64
	LastOffset       int64
	LastStableOffset int64
}

// AppendAbortedTxn appends e's 34 bytes to dst.
func AppendAbortedTxn(dst []byte, e AbortedTxn) []byte {
	dst = binary.BigEndian.AppendUint16(dst, txnIndexVersion)
	dst = binary.BigEndian.AppendUint64(dst, uint64(e.ProducerID))
	dst = binary.BigEndian.AppendUint64(dst, uint64(e.FirstOffset))
	dst = binary.BigEndian.AppendUint64(dst, uint64(e.LastOffset))
	return binary.BigEndian.AppendUint64(dst, uint64(e.LastStableOffset))
}

// DecodeTxnIndex parses a .txnindex file's content. It returns the entries
// of the longest valid prefix and, if the content does not end there, an
// error wrapping ErrCorruptTxnIndex: a partial entry (a torn write), an
// unknown version, first > last offset, a last offset below base or not
// after the previous one. It never panics and allocates at most one entry
// per 34 input bytes.
func DecodeTxnIndex(data []byte, base int64) ([]AbortedTxn, error) {
	out := make([]AbortedTxn, 0, len(data)/txnIndexEntrySize)
	prev := int64(-1)
	for p := 0; p < len(data); p += txnIndexEntrySize {
		if len(data)-p < txnIndexEntrySize {
			return out, fmt.Errorf("%w: %d trailing bytes at %d", ErrCorruptTxnIndex, len(data)-p, p)
		}
		b := data[p:]
		if v := int16(binary.BigEndian.Uint16(b)); v != txnIndexVersion {
			return out, fmt.Errorf("%w: version %d at %d", ErrCorruptTxnIndex, v, p)
		}
		e := AbortedTxn{
			ProducerID:       int64(binary.BigEndian.Uint64(b[2:])),
			FirstOffset:      int64(binary.BigEndian.Uint64(b[10:])),
			LastOffset:       int64(binary.BigEndian.Uint64(b[18:])),
			LastStableOffset: int64(binary.BigEndian.Uint64(b[26:])),
		}
		if e.LastOffset < base || e.LastOffset <= prev || e.FirstOffset > e.LastOffset || e.FirstOffset < 0 {
			return out, fmt.Errorf("%w: entry at %d has offsets %d..%d after %d (segment base %d)",
				ErrCorruptTxnIndex, p, e.FirstOffset, e.LastOffset, prev, base)
		}
		prev = e.LastOffset
		out = append(out, e)
	}
	return out, nil
}

// TxnIndex is a segment's aborted-transaction index (Kafka's
// TransactionIndex): the entries live in memory and in the file, which is
// created on the first entry (most segments never have one).
//
// Concurrency: mutations run under the owning Log's mu; readers (fetches)
// take mu here for reading only, so a fetch never waits for Log.mu.
type TxnIndex struct {
	fs   FS
	base int64 // immutable

	mu struct {
		sync.RWMutex
		path    string
		f       File // nil until the file exists and is opened
		entries []AbortedTxn
	}
}

// newTxnIndex returns an empty index whose file will be path.
func newTxnIndex(fsys FS, path string, base int64) *TxnIndex {
	x := &TxnIndex{fs: fsys, base: base}
	x.mu.path = path
	return x
}

// openTxnIndex loads path if it exists. A corrupt file keeps its valid
// prefix (the rest is cut) and is reported through corrupt so that the
// log rebuilds the index from the log.
func openTxnIndex(fsys FS, path string, base int64) (x *TxnIndex, corrupt error, err error) {
	x = &TxnIndex{fs: fsys, base: base}
	x.mu.path = path
	f, err := fsys.OpenFile(path, os.O_RDWR, 0)
	if errors.Is(err, fs.ErrNotExist) {
		return x, nil, nil
	}
	if err != nil {
		return nil, nil, storageError("open transaction index", err)
	}
	st, err := f.Stat()
	if err != nil {
		f.Close()
		return nil, nil, storageError("stat transaction index", err)
	}
	if st.Size() > maxTxnIndexBytes {
		f.Close()
		return nil, nil, fmt.Errorf("%w: %s is %d bytes", ErrCorruptTxnIndex, path, st.Size())
	}
	data := make([]byte, st.Size())
	if n, rerr := f.ReadAt(data, 0); n < len(data) {
		f.Close()
		return nil, nil, storageError("read transaction index", rerr)
	}
	x.mu.f = f
	x.mu.entries, corrupt = DecodeTxnIndex(data, base)
	if corrupt != nil {
		if err := f.Truncate(int64(len(x.mu.entries)) * txnIndexEntrySize); err != nil {
			f.Close()
			return nil, nil, storageError("truncate transaction index", err)
		}
	}
	return x, corrupt, nil
}

// appendLocked adds e (its marker in this segment, after every entry).
func (x *TxnIndex) appendLocked(e AbortedTxn) error {
	x.mu.Lock()
	defer x.mu.Unlock()
	if n := len(x.mu.entries); n > 0 && e.LastOffset <= x.mu.entries[n-1].LastOffset {
		return fmt.Errorf("storage: aborted transaction at %d does not follow %d in %s",
			e.LastOffset, x.mu.entries[n-1].LastOffset, x.mu.path)
	}
	if x.mu.f == nil {
		f, err := x.fs.OpenFile(x.mu.path, os.O_RDWR|os.O_CREATE, 0o644)
		if err != nil {
			return storageError("create transaction index", err)
		}
		x.mu.f = f
	}
	pos := int64(len(x.mu.entries)) * txnIndexEntrySize
	if _, err := x.mu.f.WriteAt(AppendAbortedTxn(make([]byte, 0, txnIndexEntrySize), e), pos); err != nil {
		return storageError("write transaction index", err)
	}
	x.mu.entries = append(x.mu.entries, e)
	return nil
}

// truncateToLocked drops the entries whose marker is at or after offset
// (Kafka's TransactionIndex.truncateTo).
func (x *TxnIndex) truncateToLocked(offset int64) error {
	x.mu.Lock()
	defer x.mu.Unlock()
	n := len(x.mu.entries)
	for n > 0 && x.mu.entries[n-1].LastOffset >= offset {
		n--
	}
	if n == len(x.mu.entries) {
		return nil
	}
	// A fresh slice: readers may still hold the old one.
	x.mu.entries = append([]AbortedTxn(nil), x.mu.entries[:n]...)
	if x.mu.f != nil {
		if err := x.mu.f.Truncate(int64(n) * txnIndexEntrySize); err != nil {
			return storageError("truncate transaction index", err)
		}
	}
	return nil
}

// Entries returns the entries, oldest first. The slice must not be
// modified.
func (x *TxnIndex) Entries() []AbortedTxn {
	x.mu.RLock()
	defer x.mu.RUnlock()
	return x.mu.entries
}

// collect is Kafka's TransactionIndex.collectAbortedTxns: the entries with
// last_offset >= fetchOffset and first_offset < upperBound; complete is
// true once an entry's last_stable_offset reaches upperBound (no later
// segment can hold a transaction overlapping the range).
func (x *TxnIndex) collect(dst []AbortedTxn, fetchOffset, upperBound int64) ([]AbortedTxn, bool) {
	for _, e := range x.Entries() {
		if e.LastOffset >= fetchOffset && e.FirstOffset < upperBound {
			dst = append(dst, e)
		}
		if e.LastStableOffset >= upperBound {
			return dst, true
		}
	}
	return dst, false
}

// sync fsyncs the file if there is one.
func (x *TxnIndex) sync() error {
	x.mu.RLock()
	defer x.mu.RUnlock()
	if x.mu.f == nil {
		return nil
	}
	if err := x.mu.f.Sync(); err != nil {
		return storageError("sync transaction index", err)
	}
	return nil
}

// rename moves the file (if any) to path; later appends create it there.
func (x *TxnIndex) rename(path string) error {
	x.mu.Lock()
	defer x.mu.Unlock()
	if x.mu.f != nil || x.exists() {
		if err := x.fs.Rename(x.mu.path, path); err != nil && !errors.Is(err, fs.ErrNotExist) {
			return storageError("rename transaction index", err)
		}
	}
	x.mu.path = path
	return nil
}

func (x *TxnIndex) exists() bool {
	_, err := x.fs.Stat(x.mu.path)
	return err == nil
}

// path returns the file's current name.
func (x *TxnIndex) path() string {
	x.mu.RLock()
	defer x.mu.RUnlock()
	return x.mu.path
}

// close closes the file if open.
func (x *TxnIndex) close() error {
	x.mu.Lock()
	defer x.mu.Unlock()
	if x.mu.f == nil {
		return nil
	}
	err := x.mu.f.Close()
	x.mu.f = nil
	if err != nil && !errors.Is(err, fs.ErrClosed) {
		return storageError("close transaction index", err)
	}
	return nil
}

// writeAll replaces the content by entries (the cleaner's copy into a
// cleaned segment). The file is created only when there are entries.
func (x *TxnIndex) writeAll(entries []AbortedTxn) error {
	if len(entries) == 0 {
		return nil
	}
	for _, e := range entries {
		if err := x.appendLocked(e); err != nil {
			return err
		}
	}
	return x.sync()
}
