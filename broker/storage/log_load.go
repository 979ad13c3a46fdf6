package storage

import (
	"errors"
	"io/fs"
	"path/filepath"
	"sort"
	"strings"

	"github.com/sirupsen/logrus"
)

// loadLocked opens the segments found in the directory (Kafka's
// Log.loadSegments): it removes leftovers of interrupted operations,
// completes compaction swaps, rebuilds missing or inconsistent indexes,
// recovers the segments past the recovery point after an unclean shutdown,
// and sets the offsets.
func (l *Log) loadLocked(opts LogOptions) error {
	entries, err := l.fs.ReadDir(l.dir)
	if err != nil {
		return storageError("list log dir", err)
	}
	l.mu.txnIndexRebuildFrom = noTxnIndexRebuild
	logs := map[int64]bool{}
	var swaps, snapshots, txnSwaps []int64
	var indexes []string
	for _, e := range entries {
		name := e.Name()
		if e.IsDir() {
			continue
		}
		path := filepath.Join(l.dir, name)
		switch {
		case strings.HasSuffix(name, TmpFileSuffix),
			strings.HasSuffix(name, DeletedFileSuffix),
			strings.HasSuffix(name, CleanedFileSuffix):
			// Interrupted writes, deletions waiting for their delay and
			// unfinished cleaner output: Kafka removes them all at load.
			if err := l.fs.Remove(path); err != nil && !errors.Is(err, fs.ErrNotExist) {
				return storageError("remove leftover", err)
			}
			continue
		}
		base, suffix, ok := parseSegmentFileName(name)
		if !ok {
			continue // leader-epoch-checkpoint, partition.metadata, ...
		}
		switch suffix {
		case LogFileSuffix:
			logs[base] = true
		case LogFileSuffix + SwapFileSuffix:
			swaps = append(swaps, base)
		case IndexFileSuffix, TimeIndexFileSuffix, TxnIndexFileSuffix:
			indexes = append(indexes, path)
		case TxnIndexFileSuffix + SwapFileSuffix:
			txnSwaps = append(txnSwaps, base)
		case ProducerSnapshotFileSuffix:
			snapshots = append(snapshots, base)
		case IndexFileSuffix + SwapFileSuffix, TimeIndexFileSuffix + SwapFileSuffix:
			// Indexes of a swap segment are rebuilt from its .log.
			if err := l.fs.Remove(path); err != nil && !errors.Is(err, fs.ErrNotExist) {
				return storageError("remove swap index", err)
			}
		}
	}
	for _, p := range indexes {
		base, _, _ := parseSegmentFileName(filepath.Base(p))
		if !logs[base] && !containsInt64(swaps, base) {
			// An index without its .log (Kafka deletes these as orphans).
			if err := l.fs.Remove(p); err != nil && !errors.Is(err, fs.ErrNotExist) {
				return storageError("remove orphan index", err)
			}
		}
	}
	if err := l.completeSwapsLocked(swaps, logs); err != nil {
		return err
	}
	if err := l.completeTxnIndexSwapsLocked(txnSwaps, logs); err != nil {
		return err
	}

	bases := make([]int64, 0, len(logs))
	for b := range logs {
		bases = append(bases, b)
	}
	sort.Slice(bases, func(i, j int) bool { return bases[i] < bases[j] })
	cfg := l.Config()
	now := l.now()
	segs := make([]*Segment, 0, len(bases)+1)
	l.segments.Store(&segs)
	for i, base := range bases {
		active := i == len(bases)-1
		hadIndexes := l.indexFilesExist(base)
		s, err := openSegment(l.fs, l.dir, base, segmentOptionsFor(cfg), active, now)
		if err != nil {
			return err
		}
		segs = append(segs, s)
		l.segments.Store(&segs)
		if s.txnIndexCorrupt != nil {
			l.logger.WithError(s.txnIndexCorrupt).WithField("segment", s.logPath).Warn("storage: rebuilding corrupt transaction index")
			l.noteTxnIndexResetLocked(s)
		}
		if !hadIndexes || !s.indexesConsistent() {
			l.logger.WithField("segment", s.logPath).Info("storage: rebuilding indexes of segment")
			l.noteTxnIndexResetLocked(s)
			dropped, err := recoverSegmentLocked(s, active, l.logger)
			if err != nil {
				return err
			}
			if dropped > 0 && !active {
				// Later segments would follow a hole: drop them, as
				// recovery does.
				if err := l.dropSegmentFilesAfterLocked(s, bases[i+1:]); err != nil {
					return err
				}
				break
			}
		}
	}
	recovered := false
	if !opts.CleanShutdown && len(segs) > 0 {
		var err error
		segs, err = l.recoverLocked(segs, opts.RecoveryPoint)
		if err != nil {
			return err
		}
		recovered = true
	}
	if len(segs) == 0 {
		s, err := openSegment(l.fs, l.dir, max(opts.LogStartOffset, 0), segmentOptionsFor(cfg), true, now)
		if err != nil {
			return err
		}
		segs = append(segs, s)
		l.mu.dirDirty = true
	}
	for i := 0; i < len(segs); i++ {
		s := segs[i]
		err := s.loadTimestampsLocked()
		if err == nil && i == len(segs)-1 {
			_, err = s.readNextOffset()
		}
		if err == nil {
			continue
		}
		if !errors.Is(err, ErrCorrupt) {
			return err
		}
		// A tail that does not parse although the shutdown was clean (a
		// lying disk, a copied directory): recover this segment rather
		// than take the whole log dir offline.
		l.logger.WithError(err).WithField("segment", s.logPath).Warn("storage: unreadable segment tail after a clean shutdown; recovering it")
		active := i == len(segs)-1
		l.noteTxnIndexResetLocked(s)
		dropped, rerr := recoverSegmentLocked(s, active, l.logger)
		if rerr != nil {
			return rerr
		}
		if dropped > 0 && !active {
			later := make([]int64, 0, len(segs)-i-1)
			for _, ls := range segs[i+1:] {
				ls.closeHandles()
				later = append(later, ls.base)
			}
			if err := l.dropSegmentFilesAfterLocked(s, later); err != nil {
				return err
			}
			segs = segs[:i+1]
		}
		if err := s.loadTimestampsLocked(); err != nil {
			return err
		}
	}
	for _, s := range segs[:len(segs)-1] {
		if err := s.evictIndexes(); err != nil {
			return err
		}
	}
	l.publishSegmentsLocked(segs)
	next, err := l.activeLocked().readNextOffset()
	if err != nil {
		return err
	}
	l.end.Store(&logEnd{offset: next, seg: l.activeLocked(), pos: l.activeLocked().Size()})
	l.logStartOffset.Store(min(max(opts.LogStartOffset, segs[0].base), next))
	l.highWatermark.Store(min(max(opts.HighWatermark, l.logStartOffset.Load()), next))
	rp := min(max(opts.RecoveryPoint, 0), next)
	if recovered {
		rp = next // everything on disk was just read back and checked
	}
	l.recoveryPoint.Store(rp)
	// Kafka trims the epoch cache to the loaded log (Log.loadSegments); in
	// memory only, see trimAtLoad.
	l.epochs.trimAtLoad(l.logStartOffset.Load(), next)
	if err := l.loadProducerStateLocked(opts.CleanShutdown, snapshots); err != nil {
		return err
	}
	l.logger.WithFields(logrus.Fields{
		"log_start_offset": l.logStartOffset.Load(), "log_end_offset": next,
		"segments": len(segs), "recovered": recovered,
	}).Debug("storage: loaded log")
	return nil
}

// dropSegmentFilesAfterLocked deletes the files of the (unopened)
// segments at bases, which followed the truncated segment s, and makes s
// the active segment.
func (l *Log) dropSegmentFilesAfterLocked(s *Segment, bases []int64) error {
	for _, b := range bases {
		l.logger.WithField("segment", segmentFileName(l.dir, b, LogFileSuffix)).
			Warn("storage: deleting segment after a truncated one")
		for _, suf := range []string{LogFileSuffix, IndexFileSuffix, TimeIndexFileSuffix, TxnIndexFileSuffix} {
			if err := l.fs.Remove(segmentFileName(l.dir, b, suf)); err != nil && !errors.Is(err, fs.ErrNotExist) {
				return storageError("remove segment", err)
			}
		}
	}
	l.mu.dirDirty = true
	return errors.Join(s.offsetIndex.x.resize(true), s.timeIndex.x.resize(true))
}

func containsInt64(xs []int64, x int64) bool {
	for _, v := range xs {
		if v == x {
			return true
		}
	}
	return false
}

// indexFilesExist reports whether both index files of base are present.
func (l *Log) indexFilesExist(base int64) bool {
	for _, suf := range []string{IndexFileSuffix, TimeIndexFileSuffix} {
		if _, err := l.fs.Stat(segmentFileName(l.dir, base, suf)); err != nil {
			return false
		}
	}
	return true
}

// indexesConsistent is Kafka's index sanity check: every offset entry
// points inside the .log and the time index does not name offsets before
// the base.
func (s *Segment) indexesConsistent() bool {
	size := s.size.Load()
	if s.offsetIndex.Entries() > 0 && int64(s.offsetIndex.LastEntry().Position) >= size {
		return false
	}
	if s.timeIndex.Entries() > 0 && s.timeIndex.LastEntry().Offset < s.base {
		return false
	}
	if s.offsetIndex.Entries() > 0 && size == 0 {
		return false
	}
	return true
}

// recoverLocked re-reads every segment from the one holding recoveryPoint
// (Kafka's Log.recoverLog). When a segment had to be truncated, every later
// segment is deleted: its data would follow a hole.
func (l *Log) recoverLocked(segs []*Segment, recoveryPoint int64) ([]*Segment, error) {
	first := 0
	for i, s := range segs {
		if s.base <= recoveryPoint {
			first = i
		}
	}
	for i := first; i < len(segs); i++ {
		s := segs[i]
		active := i == len(segs)-1
		// Kafka's LogLoader logs each one at INFO too.
		l.logger.WithFields(logrus.Fields{"segment": s.logPath, "recovery_point": recoveryPoint}).
			Info("storage: recovering segment past the recovery point")
		l.noteTxnIndexResetLocked(s)
		dropped, err := recoverSegmentLocked(s, active, l.logger)
		if err != nil {
			return nil, err
		}
		if dropped == 0 || active {
			continue
		}
		for _, later := range segs[i+1:] {
			l.logger.WithField("segment", later.logPath).Warn("storage: deleting segment after a truncated one during recovery")
			if err := later.deleteFiles(); err != nil {
				return nil, err
			}
		}
		segs = segs[:i+1]
		// The truncated segment is now the active one.
		if err := s.offsetIndex.x.resize(true); err != nil {
			return nil, err
		}
		if err := s.timeIndex.x.resize(true); err != nil {
			return nil, err
		}
		break
	}
	l.mu.dirDirty = true
	return segs, nil
}

// completeTxnIndexSwapsLocked renames the ".txnindex.swap" of a swap whose
// .log was already renamed into place (a crash between the two renames);
// one without its .log is an orphan and removed.
func (l *Log) completeTxnIndexSwapsLocked(bases []int64, logs map[int64]bool) error {
	for _, b := range bases {
		swap := segmentFileName(l.dir, b, TxnIndexFileSuffix) + SwapFileSuffix
		var err error
		if logs[b] {
			err = l.fs.Rename(swap, segmentFileName(l.dir, b, TxnIndexFileSuffix))
		} else {
			err = l.fs.Remove(swap)
		}
		if err != nil && !errors.Is(err, fs.ErrNotExist) {
			return storageError("complete transaction index swap", err)
		}
		l.mu.dirDirty = true
	}
	return nil
}
