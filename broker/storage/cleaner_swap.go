package storage

import (
	"os"
	"time"

	"github.com/sirupsen/logrus"
)

// testHookCleanerSwap, when set by a test, runs at each crash point of a
// segment swap: "cleaned" (the .cleaned file is complete) and "swap" (it
// was renamed to .swap, the originals are untouched). A non-nil error
// stops the swap right there, leaving the files as a crash would.
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

// swapCleanedSegment replaces old (consecutive non-active segments of l)
// by the segment in cleanedPath, whose base is old[0]'s (Kafka's
// Log.replaceSegments). sizes are the old segments' sizes when they were
// read and truncations the log's truncation count before that; if the log
// was truncated or any segment changed or left the list since, the swap is
// abandoned with errCleaningAborted and the caller removes the file.
//
// Crash safety, in order:
//  1. "<base>.log.cleaned" → "<base>.log.swap", directory fsynced: from
//     here a restart completes the swap (completeSwapsLocked);
//  2. each original's files get the ".deleted" suffix (a restart removes
//     them);
//  3. ".swap" → "<base>.log"; the indexes are rebuilt from it; the
//     directory is fsynced.
//
// A disk error after step 1 takes the log offline (failLocked): memory no
// longer matches the files, and the next start repairs them.
func (l *Log) swapCleanedSegment(cleanedPath string, old []*Segment, sizes []int64, truncations int64) error {
	l.mu.Lock()
	defer l.mu.Unlock()
	if err := l.checkWritableLocked(); err != nil {
		return err
	}
	if l.mu.truncations != truncations {
		return errCleaningAborted
	}
	segs := *l.segments.Load()
	idx := -1
	for i, s := range segs {
		if s == old[0] {
			idx = i
			break
		}
	}
	if idx < 0 || idx+len(old) >= len(segs) {
		return errCleaningAborted // deleted, or one became the active segment
	}
	for i, s := range old {
		if segs[idx+i] != s || s.Size() != sizes[i] {
			return errCleaningAborted
		}
	}
	if testHookCleanerSwap != nil {
		if err := testHookCleanerSwap("cleaned"); err != nil {
			return err
		}
	}
	base := old[0].base
	swapPath := segmentFileName(l.dir, base, LogFileSuffix) + SwapFileSuffix
	if err := l.fs.Rename(cleanedPath, swapPath); err != nil {
		return storageError("rename cleaned segment", err)
	}
	// Durable: the .swap name, before any original is renamed away, so a
	// crash always finds either the originals or the swap file.
	if err := l.fs.SyncDir(l.dir); err != nil {
		return l.failLocked(storageError("sync log dir", err))
	}
	if testHookCleanerSwap != nil {
		if err := testHookCleanerSwap("swap"); err != nil {
			return err
		}
	}
	for _, s := range old {
		if err := s.renameSuffix(l.dir, DeletedFileSuffix); err != nil {
			return l.failLocked(err)
		}
	}
	if err := l.fs.Rename(swapPath, segmentFileName(l.dir, base, LogFileSuffix)); err != nil {
		return l.failLocked(storageError("rename swap segment", err))
	}
	s, err := openSegment(l.fs, l.dir, base, segmentOptionsFor(l.Config()), false, l.now())
	if err != nil {
		return l.failLocked(err)
	}
	if _, err := recoverSegmentLocked(s, false, l.logger); err != nil {
		s.closeHandles()
		return l.failLocked(err)
	}
	if err := s.onBecomeInactiveLocked(); err != nil {
		s.closeHandles()
		return l.failLocked(err)
	}
	if err := s.loadTimestampsLocked(); err != nil {
		s.closeHandles()
		return l.failLocked(err)
	}
	next := make([]*Segment, 0, len(segs)-len(old)+1)
	next = append(next, segs[:idx]...)
	next = append(next, s)
	next = append(next, segs[idx+len(old):]...)
	l.publishSegmentsLocked(next)
	// Durable: the swap's renames and the new index files.
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
