package storage

import (
	"errors"
	"fmt"
	"io/fs"
	"os"

	"github.com/sirupsen/logrus"
)

// Roll starts a new active segment at the log end offset (Kafka's
// Log.roll), unless the active segment is empty.
func (l *Log) Roll() error {
	l.mu.Lock()
	defer l.mu.Unlock()
	if err := l.checkWritableLocked(); err != nil {
		return err
	}
	_, err := l.rollLocked(l.end.Load().offset)
	return l.failLocked(err)
}

// rollLocked makes a new active segment starting at newBase (>= the log end
// offset) and returns it. The previous active segment is finished (final
// time index entry, files trimmed); an empty previous segment is replaced.
func (l *Log) rollLocked(newBase int64) (*Segment, error) {
	old := l.activeLocked()
	segs := append([]*Segment(nil), *l.segments.Load()...)
	if old.Size() == 0 {
		if newBase == old.base {
			return old, nil
		}
		// An empty segment at a smaller base would only hide the gap.
		if err := old.deleteFiles(); err != nil {
			return nil, err
		}
		segs = segs[:len(segs)-1]
	} else if err := old.onBecomeInactiveLocked(); err != nil {
		return nil, err
	}
	l.onRollProducerStateLocked(newBase)
	path := segmentFileName(l.dir, newBase, LogFileSuffix)
	if st, err := l.fs.Stat(path); err == nil && st.Size() > 0 {
		return nil, fmt.Errorf("storage: %s: cannot roll to %d: non-empty %s exists", l.tp, newBase, path)
	} else if err != nil && !errors.Is(err, fs.ErrNotExist) {
		return nil, storageError("stat new segment", err)
	}
	// A stale .txnindex (Kafka deletes every index file found at the new
	// base before rolling) must not lend its entries to the new segment.
	if err := l.fs.Remove(segmentFileName(l.dir, newBase, TxnIndexFileSuffix)); err != nil && !errors.Is(err, fs.ErrNotExist) {
		return nil, storageError("remove stale transaction index", err)
	}
	s, err := openSegment(l.fs, l.dir, newBase, segmentOptionsFor(l.Config()), true, l.now())
	if err != nil {
		return nil, err
	}
	segs = append(segs, s)
	l.publishSegmentsLocked(segs)
	// The end offset is unchanged but now lives at the start of s.
	l.end.Store(&logEnd{offset: l.end.Load().offset, seg: s, pos: 0})
	l.mu.dirDirty = true
	l.logger.WithFields(logrus.Fields{"segment": s.logPath, "offset": newBase}).Debug("storage: rolled new segment")
	if l.onRoll != nil {
		l.onRoll(l)
	}
	return s, nil
}

// Flush fsyncs every segment holding data past the recovery point and,
// when segments were created or renamed since the last flush, the
// partition directory, writes a dirty leader-epoch-checkpoint durably,
// then advances the recovery point to the log end offset it started from.
// Durable afterwards: every batch below that offset and the names of the
// segment files holding them; an unclean restart re-reads only segments
// from the recovery point on. It does not block appends (it holds only
// flushMu while syncing).
func (l *Log) Flush() error {
	f := l.startFlush(nil)
	if f == nil {
		return nil
	}
	return f.end()
}

// logFlush is one flush of a log between startFlush and end; it holds the
// log's flushMu.
type logFlush struct {
	l               *Log
	upTo            int64 // the log end offset the flush covers
	dirDirty        bool
	flushedMessages int64
	gen             int64 // truncations count when upTo was read
	err             error // the segments' or the checkpoint's error
	ckptErr         error // the staged checkpoint's outcome (set by the batch)
}

// startFlush takes flushMu, fsyncs the segments (and directory) as Flush
// does and writes a dirty leader-epoch-checkpoint: durably at once when
// batch is nil, otherwise staged in batch, whose commit must run before
// end. It returns nil, holding nothing, for a closed log; otherwise the
// caller must call end, which releases flushMu.
func (l *Log) startFlush(batch *checkpointBatch) *logFlush {
	l.flushMu.Lock()
	l.mu.Lock()
	if l.mu.closed {
		l.mu.Unlock()
		l.flushMu.Unlock()
		return nil
	}
	f := &logFlush{l: l, upTo: l.end.Load().offset, dirDirty: l.mu.dirDirty,
		flushedMessages: l.mu.unflushedMessages, gen: l.truncations.Load()}
	segs := *l.segments.Load()
	l.mu.dirDirty = false
	l.mu.Unlock()

	f.err = l.syncSegments(segs, f.upTo, f.dirDirty)
	if f.err != nil {
		return f
	}
	// Before the recovery point passes them: the epochs assigned below
	// upTo (every append below upTo assigned its epoch before upTo was
	// read under mu). See LeaderEpochCache.
	if batch == nil {
		f.err = l.epochs.Flush()
	} else {
		_, f.err = l.epochs.stageFlush(batch, func(err error) { f.ckptErr = err })
	}
	return f
}

// end finishes the flush: on success it advances the recovery point to
// upTo; on error the log fails (its log dir goes offline) unless it was
// closed, and possibly deleted, meanwhile. It releases flushMu.
func (f *logFlush) end() error {
	l := f.l
	defer l.flushMu.Unlock()
	err := f.err
	if err == nil {
		err = f.ckptErr
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	if err != nil {
		if f.dirDirty {
			l.mu.dirDirty = true
		}
		if l.mu.closed && (errors.Is(err, os.ErrClosed) || errors.Is(err, fs.ErrNotExist)) {
			// Closed meanwhile, and possibly deleted (DeleteLog renames
			// and removes the directory): nothing to make durable.
			return nil
		}
		return l.failLocked(err)
	}
	if f.gen == l.truncations.Load() {
		// A truncation meanwhile may have replaced offsets below upTo
		// with bytes this flush did not cover.
		l.advanceRecoveryPointLocked(f.upTo)
	}
	l.mu.unflushedMessages = max(0, l.mu.unflushedMessages-f.flushedMessages)
	l.mu.lastFlush = l.now()
	return nil
}

// flushLocked is Flush for the append path (flush.messages), under mu.
func (l *Log) flushLocked(upTo int64) error {
	err := l.syncSegments(*l.segments.Load(), upTo, l.mu.dirDirty)
	if err == nil {
		err = l.epochs.Flush() // as in Flush
	}
	if err != nil {
		return err
	}
	l.advanceRecoveryPointLocked(upTo)
	l.mu.dirDirty = false
	l.mu.unflushedMessages = 0
	l.mu.lastFlush = l.now()
	return nil
}

// holdsSegment reports whether s is one of l's current segments.
func (l *Log) holdsSegment(s *Segment) bool {
	for _, cur := range *l.segments.Load() {
		if cur == s {
			return true
		}
	}
	return false
}

// syncSegments fsyncs the segments that may hold offsets in
// [recovery point, upTo); the caller then advances the recovery point.
// With nothing past the recovery point it syncs no segment (Kafka's
// Log.flush returns when offset <= recoveryPoint), and an empty log (no
// offset below upTo at all) does not sync its directory either: the names
// of files holding no record need no durability, a lost one is created
// again at open. So closing a broker with thousands of idle logs costs no
// fsync per log (Kafka 2.8 syncs neither).
func (l *Log) syncSegments(segs []*Segment, upTo int64, dirDirty bool) error {
	rp := l.recoveryPoint.Load()
	if upTo <= rp {
		segs = nil // everything below upTo is durable already
		if upTo <= l.logStartOffset.Load() {
			dirDirty = false // and there is nothing below upTo
		}
	}
	for i, s := range segs {
		if i+1 < len(segs) && segs[i+1].base <= rp {
			continue // wholly below the recovery point: already durable
		}
		if s.base > upTo {
			break
		}
		// Durable: this segment's batches and index entries.
		if err := s.flush(); err != nil {
			if errors.Is(err, os.ErrClosed) || (errors.Is(err, fs.ErrNotExist) && !l.holdsSegment(s)) {
				// Deleted or replaced meanwhile (retention, truncation, a
				// cleaner swap): nothing to keep. A missing file of a
				// replaced segment is no disk failure: a truncation may
				// have renamed a newer segment with the same base to the
				// same ".deleted" name and removed it while the replaced
				// one waited for its delayed deletion.
				continue
			}
			return err
		}
	}
	if dirDirty {
		// Durable: creation, rename and removal of segment files.
		if err := l.fs.SyncDir(l.dir); err != nil {
			return storageError("sync log dir", err)
		}
	}
	return nil
}

// advanceRecoveryPointLocked raises the recovery point to offset.
func (l *Log) advanceRecoveryPointLocked(offset int64) {
	if offset > l.recoveryPoint.Load() {
		l.recoveryPoint.Store(min(offset, l.end.Load().offset))
	}
}

// FlushIfDue flushes when flush.ms has passed since the last flush (the
// Manager's flush scheduler calls it). It reports whether it flushed.
func (l *Log) FlushIfDue() (bool, error) {
	if !l.flushDue() {
		return false, nil
	}
	return true, l.Flush()
}

// flushDue reports whether flush.ms has passed since the last flush with
// records appended since.
func (l *Log) flushDue() bool {
	cfg := l.Config()
	if cfg.FlushMs >= NoLimit {
		return false
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.mu.unflushedMessages > 0 && l.now().Sub(l.mu.lastFlush).Milliseconds() >= cfg.FlushMs
}

// UnflushedMessages returns the records appended since the last flush.
func (l *Log) UnflushedMessages() int64 {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.mu.unflushedMessages
}
