package storage

import (
	"errors"
	"io/fs"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/sirupsen/logrus"
)

// loadLocked opens the segments found in the directory (Kafka's
// Log.loadSegments): it removes leftovers of interrupted operations,
// completes compaction swaps, rebuilds missing or inconsistent indexes,
// recovers the segments past the recovery point after an unclean shutdown,
// and sets the offsets. Each step below is its own function; the order is
// Kafka's and matters (swaps before opening, so a swap's indexes are rebuilt;
// recovery before the tail check, so a clean tail is not read twice).
func (l *Log) loadLocked(opts LogOptions) error {
	l.mu.txnIndexRebuildFrom = noTxnIndexRebuild
	// files and its map stay on this stack (a partition dir has a handful
	// of segments): the steps take a pointer and keep none.
	files := dirFiles{logs: map[int64]bool{}}
	if err := l.scanDirLocked(&files); err != nil {
		return err
	}
	if err := l.removeOrphanIndexesLocked(&files); err != nil {
		return err
	}
	if err := l.completeSwapsLocked(files.swaps, files.logs); err != nil {
		return err
	}
	if err := l.completeTxnIndexSwapsLocked(files.txnSwaps, files.logs); err != nil {
		return err
	}

	// segs is what l.segments points at for the whole load (the steps take
	// &segs), so when a step fails, Open's closeSegmentsLocked closes every
	// segment opened so far, including after recovery shortened the list.
	bases := files.sortedBases()
	segs := make([]*Segment, 0, len(bases)+1)
	l.segments.Store(&segs)
	now := l.now()
	if err := l.openSegmentsLocked(&segs, bases, now, &opts); err != nil {
		return err
	}
	recovered := false
	if !opts.CleanShutdown && len(segs) > 0 {
		var err error
		if segs, err = l.recoverLocked(segs, opts.RecoveryPoint); err != nil {
			return err
		}
		recovered = true
	}
	if len(segs) == 0 {
		// An empty directory (a new partition, or everything was dropped):
		// start at the log start offset.
		s, err := openSegment(l.fs, l.dir, max(opts.LogStartOffset, 0), segmentOptionsFor(l.Config()), true, now)
		if err != nil {
			return err
		}
		segs = append(segs, s)
		l.mu.dirDirty = true
	}
	if err := l.checkTailsLocked(&segs); err != nil {
		return err
	}
	next, err := l.publishLoadedLocked(segs, opts, recovered)
	if err != nil {
		return err
	}
	if err := l.loadProducerStateLocked(opts.CleanShutdown, files.snapshots); err != nil {
		return err
	}
	l.logger.WithFields(logrus.Fields{
		"log_start_offset": l.logStartOffset.Load(), "log_end_offset": next,
		"segments": len(segs), "recovered": recovered,
	}).Debug("storage: loaded log")
	return nil
}

// dirFiles is what scanDirLocked found in a partition directory, by kind.
type dirFiles struct {
	logs      map[int64]bool // bases with a .log
	swaps     []int64        // bases with a .log.swap (an interrupted compaction)
	txnSwaps  []int64        // bases with a .txnindex.swap
	snapshots []int64        // producer state snapshot offsets
	indexes   []string       // paths of .index, .timeindex and .txnindex files
}

// sortedBases returns the .log bases in offset order.
func (f *dirFiles) sortedBases() []int64 {
	bases := make([]int64, 0, len(f.logs))
	for b := range f.logs {
		bases = append(bases, b)
	}
	slices.Sort(bases) // not sort.Slice: its swapper costs an allocation per partition load
	return bases
}

// scanDirLocked lists the directory and sorts its files by kind into files. It removes
// at once what Kafka removes at load without looking: temporary files of
// interrupted writes, deletions waiting for their delay, unfinished cleaner
// output, and the indexes of a swap segment (rebuilt from its .log).
func (l *Log) scanDirLocked(files *dirFiles) error {
	entries, err := l.fs.ReadDir(l.dir)
	if err != nil {
		return storageError("list log dir", err)
	}
	files.indexes = make([]string, 0, len(entries)) // one allocation, not one per growth
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
			files.logs[base] = true
		case LogFileSuffix + SwapFileSuffix:
			files.swaps = append(files.swaps, base)
		case IndexFileSuffix, TimeIndexFileSuffix, TxnIndexFileSuffix:
			files.indexes = append(files.indexes, path)
		case TxnIndexFileSuffix + SwapFileSuffix:
			files.txnSwaps = append(files.txnSwaps, base)
		case ProducerSnapshotFileSuffix:
			files.snapshots = append(files.snapshots, base)
		case IndexFileSuffix + SwapFileSuffix, TimeIndexFileSuffix + SwapFileSuffix:
			if err := l.fs.Remove(path); err != nil && !errors.Is(err, fs.ErrNotExist) {
				return storageError("remove swap index", err)
			}
		}
	}
	return nil
}

// removeOrphanIndexesLocked deletes indexes whose .log (or .log.swap) is
// gone, as Kafka does: opening one would pair it with a future segment of
// the same base.
func (l *Log) removeOrphanIndexesLocked(files *dirFiles) error {
	for _, p := range files.indexes {
		base, _, _ := parseSegmentFileName(filepath.Base(p))
		if !files.logs[base] && !containsInt64(files.swaps, base) {
			if err := l.fs.Remove(p); err != nil && !errors.Is(err, fs.ErrNotExist) {
				return storageError("remove orphan index", err)
			}
		}
	}
	return nil
}

// openSegmentsLocked opens the segments at bases into *segs, rebuilding the
// indexes of a segment that holds data and lacks an index file, or whose
// indexes fail Kafka's sanity check (an empty segment without index files
// needs nothing: doc.go, "Lazy index files"). That rebuild reads the whole
// .log, so it can also find a torn tail: then the later segments would
// follow a hole and are dropped, as recovery does. A segment that
// recovery re-reads next anyway (recoveredAtLoad) is not rebuilt here:
// recovery resets and rebuilds its indexes itself, so a crashed log whose
// active segment never wrote an index file reads it once, not twice.
// *segs is stored in l.segments after each open (see loadLocked).
func (l *Log) openSegmentsLocked(segs *[]*Segment, bases []int64, now time.Time, opts *LogOptions) error {
	cfg := l.Config()
	for i, base := range bases {
		active := i == len(bases)-1
		s, err := openSegment(l.fs, l.dir, base, segmentOptionsFor(cfg), active, now)
		if err != nil {
			return err
		}
		*segs = append(*segs, s)
		l.segments.Store(segs)
		if s.txnIndexCorrupt != nil {
			l.logger.WithError(s.txnIndexCorrupt).WithField("segment", s.logPath).Warn("storage: rebuilding corrupt transaction index")
			l.noteTxnIndexResetLocked(s)
		}
		if recoveredAtLoad(bases, i, opts) || (s.indexesConsistent() && (s.Size() == 0 || s.indexFilesExist())) {
			continue
		}
		l.logger.WithField("segment", s.logPath).Info("storage: rebuilding indexes of segment")
		l.noteTxnIndexResetLocked(s)
		dropped, err := recoverSegmentLocked(s, active, l.logger)
		if err != nil {
			return err
		}
		if dropped > 0 && !active {
			return l.dropSegmentFilesAfterLocked(s, bases[i+1:])
		}
	}
	return nil
}

// recoveredAtLoad reports whether recoverLocked will re-read the segment
// at bases[i]: after an unclean shutdown, the one holding the recovery
// point and every later one.
func recoveredAtLoad(bases []int64, i int, opts *LogOptions) bool {
	return !opts.CleanShutdown && (i+1 == len(bases) || bases[i+1] > opts.RecoveryPoint)
}

// checkTailsLocked loads each segment's largest timestamp and reads the
// active segment's next offset. A tail that does not parse although the
// shutdown was clean (a lying disk, a copied directory) is recovered here
// rather than taking the whole log dir offline; if that truncates a segment
// that is not the last, the later ones are closed and deleted.
func (l *Log) checkTailsLocked(segs *[]*Segment) error {
	for i := 0; i < len(*segs); i++ {
		s := (*segs)[i]
		err := s.loadTimestampsLocked()
		if err == nil && i == len(*segs)-1 {
			_, err = s.readNextOffset()
		}
		if err == nil {
			continue
		}
		if !errors.Is(err, ErrCorrupt) {
			return err
		}
		l.logger.WithError(err).WithField("segment", s.logPath).Warn("storage: unreadable segment tail after a clean shutdown; recovering it")
		active := i == len(*segs)-1
		l.noteTxnIndexResetLocked(s)
		dropped, rerr := recoverSegmentLocked(s, active, l.logger)
		if rerr != nil {
			return rerr
		}
		if dropped > 0 && !active {
			later := make([]int64, 0, len(*segs)-i-1)
			for _, ls := range (*segs)[i+1:] {
				ls.closeHandles()
				later = append(later, ls.base)
			}
			if err := l.dropSegmentFilesAfterLocked(s, later); err != nil {
				return err
			}
			*segs = (*segs)[:i+1]
		}
		if err := s.loadTimestampsLocked(); err != nil {
			return err
		}
	}
	return nil
}

// publishLoadedLocked makes segs the log's segments and sets its offsets
// from what is on disk: the log end from the active segment, the log start
// and high watermark from opts clamped into the log, and the recovery point
// (the log end when everything was just recovered). Closed segments get the
// index files a rebuild left in memory only (materializeIndexes) and give
// their index memory back until a read needs it. It returns the log end.
func (l *Log) publishLoadedLocked(segs []*Segment, opts LogOptions, recovered bool) (int64, error) {
	for _, s := range segs[:len(segs)-1] {
		if err := errors.Join(s.materializeIndexes(), s.evictIndexes()); err != nil {
			return 0, err
		}
	}
	l.publishSegmentsLocked(segs)
	next, err := l.activeLocked().readNextOffset()
	if err != nil {
		return 0, err
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
	if recovered {
		// The recovery point is now the log end, so the epochs recovery
		// rebuilt past the old one must be durable first (a no-op when
		// recovery found the file complete).
		if err := l.epochs.Flush(); err != nil {
			return 0, err
		}
	}
	return next, nil
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

// indexFilesExist reports whether both index files of s are present (as
// found at open, or created since).
func (s *Segment) indexFilesExist() bool {
	return s.offsetIndex.x.exists() && s.timeIndex.x.exists()
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
// (Kafka's Log.recoverLog) and rebuilds the leader epochs past it from the
// batches read (epochRecovery). When a segment had to be truncated, every
// later segment is deleted: its data would follow a hole.
func (l *Log) recoverLocked(segs []*Segment, recoveryPoint int64) ([]*Segment, error) {
	epochs := l.epochs.startRecovery(recoveryPoint) // ended by trimAtLoad
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
		dropped, err := recoverSegmentVisitLocked(s, active, l.logger, epochs.batch)
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
