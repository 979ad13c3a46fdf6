package storage

import (
	"errors"
	"fmt"
	"io/fs"
	"math"
	"os"
	"sync/atomic"
	"time"

	"samsa/broker/record"
)

// Segment is one "<base>.log" with its ".index" and ".timeindex" (Kafka's
// LogSegment). The .log holds record batches v2 exactly as they arrived on
// the wire, after offset assignment. The index files exist only once
// needed (doc.go, "Lazy index files").
//
// Concurrency: the owning Log serialises every mutation (append, truncate,
// roll, rename, close) under Log.mu. Reads (Log.Read, OffsetForTimestamp)
// run concurrently with them without a lock: they only pread bytes below a
// size that was published after the bytes were written, and the indexes
// have their own lock.
type Segment struct {
	fs   FS
	base int64 // immutable

	log         File // the .log; the descriptor survives renames
	offsetIndex *OffsetIndex
	timeIndex   *TimeIndex
	txnIndex    *TxnIndex // aborted transactions (txn_index.go)
	// txnIndexCorrupt is set at open when the .txnindex failed its checks;
	// the load then rebuilds it from the log.
	txnIndexCorrupt error

	size atomic.Int64 // bytes in the .log; published after each write

	// maxTimestamp and offsetOfMaxTimestamp are the largest batch max
	// timestamp and the last offset of the batch carrying it (-1 when
	// unknown). Atomic: retention and OffsetForTimestamp read them unlocked.
	maxTimestamp         atomic.Int64
	offsetOfMaxTimestamp atomic.Int64

	// Owned by the Log's mu:
	logPath                  string
	created                  time.Time // file mtime on open; roll by time falls back to it
	rollJitterMs             int64
	firstBatchTimestamp      int64 // -1 when empty; Kafka's rollingBasedTimestamp
	bytesSinceLastIndexEntry int64
	indexIntervalBytes       int64
	preallocated             bool // the .log is longer than size until trimmed
	recent                   recentBatches
}

// segmentOptions are the Config values a segment needs.
type segmentOptions struct {
	indexIntervalBytes int32
	maxIndexSize       int32
	rollJitterMs       int64
	preallocateBytes   int64 // 0: no preallocation
}

func segmentOptionsFor(c Config) segmentOptions {
	o := segmentOptions{
		indexIntervalBytes: c.IndexIntervalBytes,
		maxIndexSize:       c.SegmentIndexBytes,
		rollJitterMs:       c.randomSegmentJitter(),
	}
	if c.Preallocate {
		o.preallocateBytes = int64(c.SegmentBytes)
	}
	return o
}

// openSegment opens (creating if missing) the segment starting at base in
// dir. Missing index files are not created (doc.go, "Lazy index files");
// active preallocates existing ones. The .log size is its file size; an
// unclean start then runs recoverSegment to cut a torn tail.
func openSegment(fsys FS, dir string, base int64, o segmentOptions, active bool, now time.Time) (*Segment, error) {
	s := newSegment(fsys, base, segmentFileName(dir, base, LogFileSuffix), o)
	if err := s.openLog(os.O_RDWR|os.O_CREATE, 0o644, "segment"); err != nil {
		return nil, err
	}
	f := s.log
	if s.size.Load() == 0 {
		s.created = now
		if o.preallocateBytes > 0 && active {
			// Kafka's preallocate: reserve the file's blocks up front.
			if err := f.Truncate(o.preallocateBytes); err != nil {
				f.Close()
				return nil, storageError("preallocate segment", err)
			}
			s.preallocated = true
		}
	}
	var err error
	s.offsetIndex, err = OpenOffsetIndex(fsys, segmentFileName(dir, base, IndexFileSuffix), base, o.maxIndexSize, active)
	if err != nil {
		f.Close()
		return nil, err
	}
	s.timeIndex, err = OpenTimeIndex(fsys, segmentFileName(dir, base, TimeIndexFileSuffix), base, o.maxIndexSize, active)
	if err != nil {
		s.offsetIndex.x.close(false, false)
		f.Close()
		return nil, err
	}
	s.txnIndex, s.txnIndexCorrupt, err = openTxnIndex(fsys, segmentFileName(dir, base, TxnIndexFileSuffix), base)
	if err != nil {
		s.offsetIndex.x.close(false, false)
		s.timeIndex.x.close(false, false)
		f.Close()
		return nil, err
	}
	return s, nil
}

// newSegment returns the Segment of the .log at logPath with no file open
// yet and no batch seen.
func newSegment(fsys FS, base int64, logPath string, o segmentOptions) *Segment {
	s := &Segment{
		fs:                  fsys,
		base:                base,
		logPath:             logPath,
		rollJitterMs:        o.rollJitterMs,
		firstBatchTimestamp: -1,
		indexIntervalBytes:  int64(o.indexIntervalBytes),
	}
	s.maxTimestamp.Store(-1)
	s.offsetOfMaxTimestamp.Store(-1)
	return s
}

// openLog opens s's .log with flag and perm and takes its size and
// creation time from the file; what names the file in errors.
func (s *Segment) openLog(flag int, perm fs.FileMode, what string) error {
	f, err := s.fs.OpenFile(s.logPath, flag, perm)
	if err != nil {
		return storageError("open "+what, err)
	}
	st, err := f.Stat()
	if err != nil {
		f.Close()
		return storageError("stat "+what, err)
	}
	s.log = f
	s.size.Store(st.Size())
	s.created = st.ModTime()
	return nil
}

// BaseOffset returns the offset of the segment's first possible record.
func (s *Segment) BaseOffset() int64 { return s.base }

// Size returns the bytes in the .log.
func (s *Segment) Size() int64 { return s.size.Load() }

// LargestTimestamp is the timestamp retention.ms compares against (Kafka
// LogSegment.largestTimestamp): the max batch timestamp, or the file's
// modification time when no batch carried one.
func (s *Segment) LargestTimestamp() int64 {
	if ts := s.maxTimestamp.Load(); ts > 0 {
		return ts
	}
	return s.created.UnixMilli()
}

// canConvertToRelativeOffset reports whether offset fits the int32 relative
// offsets of the indexes.
func (s *Segment) canConvertToRelativeOffset(offset int64) bool {
	rel := offset - s.base
	return rel >= 0 && rel <= math.MaxInt32
}

// appendLocked writes batches (one or more whole, already validated batches
// with final offsets) at the end of the .log and indexes them. headers
// describe the batches in order. The caller holds Log.mu.
func (s *Segment) appendLocked(batches []byte, headers []record.BatchHeader) error {
	if len(headers) == 0 {
		return nil
	}
	if !s.canConvertToRelativeOffset(headers[len(headers)-1].LastOffset()) {
		return fmt.Errorf("storage: offset %d does not fit segment %d", headers[len(headers)-1].LastOffset(), s.base)
	}
	pos := s.size.Load()
	if pos+int64(len(batches)) > math.MaxInt32 {
		return fmt.Errorf("storage: segment %d would exceed 2 GiB", s.base)
	}
	start := pos
	if _, err := s.log.WriteAt(batches, pos); err != nil {
		s.rollbackLocked(start, headers[0].BaseOffset)
		return storageError("write segment", err)
	}
	for _, h := range headers {
		if err := s.indexBatchLocked(h, pos); err != nil {
			s.rollbackLocked(start, headers[0].BaseOffset)
			return err
		}
		pos += h.Size()
	}
	for i, p := 0, start; i < len(headers); i++ {
		h := &headers[i]
		s.recent.add(batchPlace{base: h.BaseOffset, last: h.LastOffset(), pos: p, size: h.Size()})
		p += h.Size()
	}
	s.size.Store(pos)
	return nil
}

// rollbackLocked undoes a failed append as far as the disk lets it: the
// .log is cut back to pos and index entries from firstOffset on are
// dropped. Errors are ignored: the log is failed anyway, and recovery
// re-checks everything past the recovery point at the next start.
func (s *Segment) rollbackLocked(pos, firstOffset int64) {
	_ = s.log.Truncate(pos)
	_ = s.offsetIndex.TruncateToPosition(int32(pos), true)
	_ = s.timeIndex.TruncateTo(firstOffset, true)
}

// indexBatchLocked updates the timestamps and, once index.interval.bytes
// have passed since the last entry, adds index entries for the batch at pos
// (Kafka LogSegment.append, per batch as in LogSegment.recover).
func (s *Segment) indexBatchLocked(h record.BatchHeader, pos int64) error {
	if s.firstBatchTimestamp < 0 {
		// Kafka's rollingBasedTimestamp is the first batch's max timestamp.
		s.firstBatchTimestamp = h.MaxTimestamp
	}
	if h.MaxTimestamp > s.maxTimestamp.Load() {
		s.maxTimestamp.Store(h.MaxTimestamp)
		s.offsetOfMaxTimestamp.Store(h.LastOffset())
	}
	// A full index takes no more entries (an append of many batches can
	// fill it midway; the index is sparse, and the next append rolls).
	if s.bytesSinceLastIndexEntry > s.indexIntervalBytes && !s.offsetIndex.IsFull() && !s.timeIndex.IsFull() {
		if err := s.offsetIndex.Append(h.LastOffset(), int32(pos)); err != nil {
			return err
		}
		if err := s.timeIndex.MaybeAppend(s.maxTimestamp.Load(), s.offsetOfMaxTimestamp.Load(), false); err != nil {
			return err
		}
		s.bytesSinceLastIndexEntry = 0
	}
	s.bytesSinceLastIndexEntry += h.Size()
	return nil
}

// readNextOffset returns the offset after the segment's last batch (its
// base offset when empty) by scanning from the last index entry.
func (s *Segment) readNextOffset() (int64, error) {
	size := s.size.Load()
	next := s.base
	pos := int64(s.offsetIndex.LastEntry().Position)
	hr := headerReader{f: s.log, limit: size}
	defer hr.release()
	for pos < size {
		h, err := hr.at(pos)
		if err != nil {
			return 0, s.corruptAt(pos, err)
		}
		next = h.NextOffset()
		pos += h.Size()
	}
	return next, nil
}

// loadTimestampsLocked recomputes firstBatchTimestamp and the max
// timestamp after open or truncation: the time index's last entry covers
// everything up to the last offset index entry; batches after it are read.
func (s *Segment) loadTimestampsLocked() error {
	s.firstBatchTimestamp = -1
	s.maxTimestamp.Store(-1)
	s.offsetOfMaxTimestamp.Store(-1)
	if s.size.Load() == 0 {
		return nil
	}
	h, err := record.ReadHeaderAt(s.log, 0)
	if err != nil {
		return s.corruptAt(0, err)
	}
	s.firstBatchTimestamp = h.MaxTimestamp
	if last := s.timeIndex.LastEntry(); s.timeIndex.Entries() > 0 {
		s.maxTimestamp.Store(last.Timestamp)
		s.offsetOfMaxTimestamp.Store(last.Offset)
	}
	size := s.size.Load()
	var bytesSince int64
	hr := headerReader{f: s.log, limit: size}
	defer hr.release()
	for pos := int64(s.offsetIndex.LastEntry().Position); pos < size; {
		h, err := hr.at(pos)
		if err != nil {
			return s.corruptAt(pos, err)
		}
		if h.MaxTimestamp > s.maxTimestamp.Load() {
			s.maxTimestamp.Store(h.MaxTimestamp)
			s.offsetOfMaxTimestamp.Store(h.LastOffset())
		}
		bytesSince += h.Size()
		pos += h.Size()
	}
	s.bytesSinceLastIndexEntry = bytesSince
	return nil
}

// truncateToLocked removes every batch whose last offset is >= offset and
// returns the bytes removed. active tells whether the segment stays the
// active one (indexes stay preallocated).
func (s *Segment) truncateToLocked(offset int64, active bool) (int64, error) {
	size := s.size.Load()
	pos, h, found, err := s.translateOffset(offset, size)
	if err != nil {
		return 0, err
	}
	if !found {
		return 0, nil
	}
	return size - pos, s.truncateToPositionLocked(pos, h.BaseOffset, active)
}

// truncateToPositionLocked cuts the .log at pos, a batch boundary, where
// the batch starting at offset removedFrom begins; index entries past it go
// and the timestamps are reloaded.
func (s *Segment) truncateToPositionLocked(pos, removedFrom int64, active bool) error {
	if err := s.offsetIndex.TruncateToPosition(int32(pos), active); err != nil {
		return err
	}
	if err := s.timeIndex.TruncateTo(removedFrom, active); err != nil {
		return err
	}
	if err := s.txnIndex.truncateToLocked(removedFrom); err != nil {
		return err
	}
	s.recent.truncateTo(pos) // before the file changes (also on failure)
	if err := s.log.Truncate(pos); err != nil {
		return storageError("truncate segment", err)
	}
	s.size.Store(pos)
	s.preallocated = false
	return s.loadTimestampsLocked()
}

// onBecomeInactiveLocked finishes a segment when a newer one takes over:
// the time index gets its final entry and the files are cut to their
// contents (Kafka LogSegment.onBecomeInactiveSegment).
func (s *Segment) onBecomeInactiveLocked() error {
	s.recent.reset() // only the active segment's tail is looked up
	if err := s.timeIndex.MaybeAppend(s.maxTimestamp.Load(), s.offsetOfMaxTimestamp.Load(), true); err != nil {
		return err
	}
	if err := s.offsetIndex.x.resize(false); err != nil {
		return err
	}
	if err := s.timeIndex.x.resize(false); err != nil {
		return err
	}
	if err := s.materializeIndexes(); err != nil {
		return err
	}
	if err := s.trimLogLocked(); err != nil {
		return err
	}
	return s.evictIndexes()
}

// materializeIndexes creates the absent index files of a segment that
// holds data (doc.go, "Lazy index files": an inactive or closed segment
// with data always has both, as Kafka expects). The offset index comes
// first: Kafka rebuilds a segment without one.
func (s *Segment) materializeIndexes() error {
	if s.size.Load() == 0 {
		return nil
	}
	return errors.Join(s.offsetIndex.x.materialize(), s.timeIndex.x.materialize())
}

// evictIndexes drops an inactive segment's index entries from memory until
// the next lookup (see indexFile).
func (s *Segment) evictIndexes() error {
	return errors.Join(s.offsetIndex.x.evict(), s.timeIndex.x.evict())
}

func (s *Segment) trimLogLocked() error {
	if !s.preallocated {
		return nil
	}
	if err := s.log.Truncate(s.size.Load()); err != nil {
		return storageError("trim segment", err)
	}
	s.preallocated = false
	return nil
}

// flush fsyncs the .log and both indexes. Durable afterwards: every batch
// appended to this segment before the call, and the index entries (which
// recovery could rebuild anyway). Not durable: the directory entry of a
// newly created file; Log.flush syncs the directory for that. An index
// file is created here only once it has entries, and the time index
// whenever the offset index exists (doc.go, "Lazy index files"); an
// append racing this flush can leave one of the two behind until the next
// flush, roll or close, in a segment that holds the new recovery point and
// so is recovered after a crash anyway.
func (s *Segment) flush() error {
	if err := s.log.Sync(); err != nil {
		return storageError("sync segment", err)
	}
	if err := s.offsetIndex.x.sync(false); err != nil {
		return err
	}
	if err := s.txnIndex.sync(); err != nil {
		return err
	}
	return s.timeIndex.x.sync(s.offsetIndex.x.exists())
}

// closeLocked trims and closes the files; a segment holding data gets
// both index files (materializeIndexes), so a clean restart rebuilds none.
func (s *Segment) closeLocked() error {
	err := s.timeIndex.MaybeAppend(s.maxTimestamp.Load(), s.offsetOfMaxTimestamp.Load(), true)
	err = errors.Join(err, s.trimLogLocked())
	create := s.size.Load() > 0
	err = errors.Join(err, s.offsetIndex.x.close(true, create), s.timeIndex.x.close(true, create), s.txnIndex.close())
	if cerr := s.log.Close(); cerr != nil && !errors.Is(cerr, fs.ErrClosed) {
		err = errors.Join(err, storageError("close segment", cerr))
	}
	return err
}

// closeHandles closes the .log descriptor and ends the indexes without
// trimming or writing them (after deletion).
func (s *Segment) closeHandles() {
	s.offsetIndex.x.close(false, false)
	s.timeIndex.x.close(false, false)
	_ = s.txnIndex.close() // nothing to lose: every write went to the file
	s.log.Close()
}

// renameSuffix renames the files (.log, .index, .timeindex, .txnindex) from their current names to
// "<base><ext><suffix>" (suffix "" restores the plain names).
func (s *Segment) renameSuffix(dir, suffix string) error {
	newLog := segmentFileName(dir, s.base, LogFileSuffix) + suffix
	if err := s.fs.Rename(s.logPath, newLog); err != nil {
		return storageError("rename segment", err)
	}
	s.logPath = newLog
	if err := s.offsetIndex.x.rename(segmentFileName(dir, s.base, IndexFileSuffix) + suffix); err != nil {
		return err
	}
	if err := s.txnIndex.rename(segmentFileName(dir, s.base, TxnIndexFileSuffix) + suffix); err != nil {
		return err
	}
	return s.timeIndex.x.rename(segmentFileName(dir, s.base, TimeIndexFileSuffix) + suffix)
}

// deleteFiles closes and removes the segment's files (the .txnindex too,
// as Kafka deletes it with its segment).
func (s *Segment) deleteFiles() error {
	s.closeHandles()
	var err error
	for _, p := range []string{s.logPath, s.offsetIndex.x.path(), s.timeIndex.x.path(), s.txnIndex.path()} {
		if rerr := s.fs.Remove(p); rerr != nil && !errors.Is(rerr, fs.ErrNotExist) {
			err = errors.Join(err, storageError("remove "+p, rerr))
		}
	}
	return err
}
