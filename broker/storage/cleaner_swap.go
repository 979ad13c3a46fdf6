package storage

import (
	"os"
	"time"

	"github.com/sirupsen/logrus"
)

// testHookCleanerSwap, when set by a test, runs at each crash point of a
// segment swap: "cleaned" (the .cleaned files are complete) and "swap"
// (they were renamed to .swap, the originals are untouched). A non-nil
// error stops the swap there.
var testHookCleanerSwap func(stage string) error

// chtimesFS is implemented by file systems that can set modification
// times. The cleaner uses it to keep a cleaned segment's time equal to
// the newest original's, as Kafka does, because tombstone expiry and
// retention compare against it. Without it the time is "now", which only
// delays tombstone removal.
type chtimesFS interface {
	Chtimes(name string, atime, mtime time.Time) error
}

// setModTime sets path's modification time to ms (Unix milliseconds) when
// fsys supports it.
func setModTime(fsys FS, path string, ms int64) error {
	c, ok := fsys.(chtimesFS)
	if !ok {
		return nil
	}
	t := time.UnixMilli(ms)
	if err := c.Chtimes(path, t, t); err != nil {
		return storageError("set segment time", err)
	}
	return nil
}

// openCleanedSegment opens the finished cleaned file as a Segment under
// its ".cleaned" names and builds its indexes from it, the way recovery
// does. The segment is not published, so this runs without the log's lock
// and never blocks appends or reads. On error the files are removed.
func openCleanedSegment(l *Log, base int64, logPath string, txns []AbortedTxn) (*Segment, error) {
	o := segmentOptionsFor(l.Config())
	s := newSegment(l.fs, base, logPath, o)
	err := s.openLog(os.O_RDWR, 0, "cleaned segment")
	if err != nil {
		return nil, err
	}
	f := s.log
	idx := segmentFileName(l.dir, base, IndexFileSuffix) + CleanedFileSuffix
	tidx := segmentFileName(l.dir, base, TimeIndexFileSuffix) + CleanedFileSuffix
	if s.offsetIndex, err = OpenOffsetIndex(l.fs, idx, base, o.maxIndexSize, false); err != nil {
		f.Close()
		return nil, err
	}
	if s.timeIndex, err = OpenTimeIndex(l.fs, tidx, base, o.maxIndexSize, false); err != nil {
		s.offsetIndex.x.close(false, false)
		f.Close()
		l.fs.Remove(idx)
		return nil, err
	}
	s.txnIndex = newTxnIndex(l.fs, segmentFileName(l.dir, base, TxnIndexFileSuffix)+CleanedFileSuffix, base)
	// The segment is private to the cleaner until published, so the
	// "Locked" helpers are safe here.
	err = func() error {
		if _, err := recoverSegmentLocked(s, false, l.logger); err != nil {
			return err
		}
		// The aborted transactions of the replaced segments (synced with
		// the indexes below the commit point).
		if err := s.txnIndex.writeAll(txns); err != nil {
			return err
		}
		if err := s.onBecomeInactiveLocked(); err != nil {
			return err
		}
		if err := s.loadTimestampsLocked(); err != nil {
			return err
		}
		// Durable: the new indexes too (the .log was synced already), as
		// Kafka flushes the cleaned segment before the swap; it may land
		// below the recovery point, which no later flush revisits.
		return s.flush()
	}()
	if err != nil {
		s.deleteFiles()
		return nil, err
	}
	return s, nil
}

// swapCleanedSegment replaces old (consecutive non-active segments of l)
// by the cleaned segment s, whose base is old[0]'s (Kafka's
// Log.replaceSegments). sizes are the old segments' sizes when they were
// read and truncations the log's truncation count before that; if the log
// was truncated or any segment changed or left the list since, the swap is
// abandoned with errCleaningAborted. Under the log's lock it only renames
// files and fsyncs the directory. Until the commit point any failure
// removes s's files and leaves the log as it was.
//
// Crash safety, in order:
//  1. s's files "<base>.{log,index,timeindex}.cleaned" → ".swap", the
//     directory fsynced: the commit point, after which a restart completes
//     the swap (completeSwapsLocked; swap indexes are rebuilt);
//  2. each original's files get the ".deleted" suffix (a restart removes
//     them);
//  3. s's files lose the ".swap" suffix; the directory is fsynced.
//
// A disk error after the commit point takes the log offline (failLocked):
// memory no longer matches the files, and the next start repairs them.
func (l *Log) swapCleanedSegment(s *Segment, old []*Segment, sizes []int64, truncations int64) (err error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	committed := false
	defer func() {
		if err != nil && !committed {
			s.deleteFiles()
		}
	}()
	if err := l.checkWritableLocked(); err != nil {
		return err
	}
	if l.truncations.Load() != truncations {
		return errCleaningAborted
	}
	segs := *l.segments.Load()
	idx := -1
	for i, seg := range segs {
		if seg == old[0] {
			idx = i
			break
		}
	}
	if idx < 0 || idx+len(old) >= len(segs) {
		return errCleaningAborted // deleted, or one became the active segment
	}
	for i, seg := range old {
		if segs[idx+i] != seg || seg.Size() != sizes[i] {
			return errCleaningAborted
		}
	}
	if testHookCleanerSwap != nil {
		if err := testHookCleanerSwap("cleaned"); err != nil {
			return err
		}
	}
	if err := s.renameSuffix(l.dir, SwapFileSuffix); err != nil {
		return err
	}
	// Durable: the .swap names, before any original is renamed away, so a
	// crash always finds either the originals or the swap files.
	if err := l.fs.SyncDir(l.dir); err != nil {
		return storageError("sync log dir", err)
	}
	committed = true
	if testHookCleanerSwap != nil {
		if err := testHookCleanerSwap("swap"); err != nil {
			return err
		}
	}
	for _, seg := range old {
		if err := seg.renameSuffix(l.dir, DeletedFileSuffix); err != nil {
			return l.failLocked(err)
		}
	}
	if err := s.renameSuffix(l.dir, ""); err != nil {
		return l.failLocked(err)
	}
	next := make([]*Segment, 0, len(segs)-len(old)+1)
	next = append(next, segs[:idx]...)
	next = append(next, s)
	next = append(next, segs[idx+len(old):]...)
	l.publishSegmentsLocked(next)
	// Durable: the swap's renames.
	if err := l.fs.SyncDir(l.dir); err != nil {
		return l.failLocked(storageError("sync log dir", err))
	}
	l.retireCleanedSegmentsLocked(old)
	l.logger.WithFields(logrus.Fields{"segment": s.logPath, "replaced": len(old), "size": s.Size()}).
		Debug("storage: swapped in cleaned segment")
	return nil
}

// retireCleanedSegmentsLocked deletes the replaced segments (already
// renamed ".deleted") after file.delete.delay.ms, so reads that started
// before the swap can finish (Kafka's asyncDeleteSegment).
func (l *Log) retireCleanedSegmentsLocked(old []*Segment) {
	del := func() {
		for _, s := range old {
			if err := s.deleteFiles(); err != nil {
				l.logger.WithError(err).WithField("segment", s.logPath).Warn("storage: deleting replaced segment failed")
			}
		}
	}
	if l.scheduleDelete == nil {
		del()
		return
	}
	l.scheduleDelete(time.Duration(l.Config().FileDeleteDelayMs)*time.Millisecond, del)
}

// Chtimes implements chtimesFS for OSFS (see setModTime).
func (OSFS) Chtimes(name string, atime, mtime time.Time) error {
	return os.Chtimes(name, atime, mtime)
}
