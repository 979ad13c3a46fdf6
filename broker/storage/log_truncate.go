package storage

import (
	"errors"
	"fmt"
	"time"

	"github.com/sirupsen/logrus"
)

// TruncateTo removes every batch whose last offset is >= offset (Kafka's
// Log.truncateTo, used by followers after OffsetsForLeaderEpoch). Segments
// starting after offset are deleted; the log end offset becomes the end of
// the last batch kept, which equals offset when offset is a batch boundary
// (as it always is for leader-epoch end offsets). The high watermark and
// recovery point are clamped and the leader-epoch cache loses epochs that
// start at or after the new end. offset >= LogEndOffset is a no-op; offset
// below the log start truncates fully and restarts there, as Kafka does.
func (l *Log) TruncateTo(offset int64) error {
	if offset < 0 {
		return fmt.Errorf("storage: %s: truncate to negative offset %d: %w", l.tp, offset, ErrOffsetOutOfRange)
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	if err := l.checkWritableLocked(); err != nil {
		return err
	}
	if offset >= l.end.Load().offset {
		return nil
	}
	if offset < l.logStartOffset.Load() {
		return l.failLocked(l.truncateFullyLocked(offset))
	}
	l.logger.WithField("offset", offset).Info("storage: truncating log")
	if err := l.truncateToLocked(offset); err != nil {
		return l.failLocked(err)
	}
	if l.end.Load().offset < l.logStartOffset.Load() {
		// The batch holding the log start offset went too (offset and the
		// start both fell inside it): nothing readable is left, so restart
		// the log at offset, as Kafka's end offset would be.
		return l.failLocked(l.truncateFullyLocked(offset))
	}
	return nil
}

func (l *Log) truncateToLocked(offset int64) error {
	segs := *l.segments.Load()
	keep := segs[:0:0]
	var drop []*Segment
	for _, s := range segs {
		if s.base > offset || (s.base == offset && len(keep) > 0) {
			drop = append(drop, s)
		} else {
			keep = append(keep, s)
		}
	}
	active := keep[len(keep)-1]
	// Everything below the kept active segment's base stays as it is.
	if err := l.noteTruncationLocked(active.base); err != nil {
		return err
	}
	if len(drop) > 0 {
		// Readers must stop seeing the dropped segments first.
		l.end.Store(&logEnd{offset: active.base, seg: active, pos: 0})
		l.publishSegmentsLocked(keep)
		if err := l.deleteSegmentsLocked(drop, "truncation"); err != nil {
			return err
		}
		// The kept segment becomes active again: grow its indexes back.
		if err := active.offsetIndex.x.resize(true); err != nil {
			return err
		}
		if err := active.timeIndex.x.resize(true); err != nil {
			return err
		}
	}
	if _, err := active.truncateToLocked(offset, true); err != nil {
		return err
	}
	l.publishSegmentsLocked(keep)
	next, err := active.readNextOffset()
	if err != nil {
		return err
	}
	l.publishEndLocked(next)
	l.mu.dirDirty = true
	if err := l.epochs.TruncateFromEnd(next); err != nil {
		return err
	}
	return l.rebuildProducerStateLocked(next)
}

// noteTruncationLocked counts a truncation and then, before any file
// changes, calls OnTruncate with keep, the offset below which the data
// stays (the Manager lowers the cleaner checkpoint to it). The order
// matters to the cleaner (cleaner_checkpoint.go): a pass that checks the
// count after the checkpoint was lowered must already see the new count,
// and lowering the checkpoint before the files change means a crash in
// between cannot leave a checkpoint above re-fetched data.
func (l *Log) noteTruncationLocked(keep int64) error {
	l.truncations.Add(1)
	if l.onTruncate == nil {
		return nil
	}
	return l.onTruncate(l, keep)
}

// TruncateFullyAndStartAt deletes every segment and starts an empty log at
// offset, which becomes the log start, end and high watermark (Kafka's
// Log.truncateFullyAndStartAt: a follower that fell below the leader's log
// start). The leader-epoch cache is cleared.
func (l *Log) TruncateFullyAndStartAt(offset int64) error {
	if offset < 0 {
		return fmt.Errorf("storage: %s: restart at negative offset %d: %w", l.tp, offset, ErrOffsetOutOfRange)
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	if err := l.checkWritableLocked(); err != nil {
		return err
	}
	return l.failLocked(l.truncateFullyLocked(offset))
}

func (l *Log) truncateFullyLocked(offset int64) error {
	l.logger.WithField("offset", offset).Info("storage: truncating log fully")
	if err := l.noteTruncationLocked(offset); err != nil {
		return err
	}
	segs := *l.segments.Load()
	s, err := openSegment(l.fs, l.dir, offset, segmentOptionsFor(l.Config()), true, l.now())
	if err != nil {
		return err
	}
	var drop []*Segment
	for _, old := range segs {
		if old.base != offset {
			drop = append(drop, old)
			continue
		}
		// Same base: reuse its file names for the new empty segment.
		old.closeHandles()
	}
	if err := l.deleteSegmentsLocked(drop, "full truncation"); err != nil {
		s.closeHandles()
		return err
	}
	if err := s.log.Truncate(0); err != nil {
		return storageError("truncate segment", err)
	}
	if err := s.txnIndex.truncateToLocked(offset); err != nil {
		return err
	}
	s.size.Store(0)
	if err := errors.Join(s.offsetIndex.Reset(true), s.timeIndex.Reset(true), s.loadTimestampsLocked()); err != nil {
		return err
	}
	l.publishSegmentsLocked([]*Segment{s})
	l.setLogStartLocked(offset)
	l.publishEndLocked(offset)
	l.highWatermark.Store(offset)
	// The recovery point stays at or below its old value (publishEndLocked
	// clamped it), as Kafka's min(newOffset, recoveryPoint): the emptied
	// segment is not yet durable, so the next Flush must sync it.
	l.mu.dirDirty = true
	if err := l.onTruncateFullyProducerStateLocked(offset); err != nil {
		return err
	}
	return l.epochs.Clear()
}

// DeleteRecordsBefore moves the log start offset forward to offset
// (DeleteRecords, KIP-107) and deletes segments that lie wholly below it.
// offset above the high watermark returns ErrOffsetOutOfRange, as Kafka's
// maybeIncrementLogStartOffset does; a smaller offset than the current
// start is a no-op. It returns the new log start offset.
func (l *Log) DeleteRecordsBefore(offset int64) (int64, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if err := l.checkWritableLocked(); err != nil {
		return 0, err
	}
	if hw := l.highWatermark.Load(); offset > hw || offset < 0 {
		return 0, fmt.Errorf("storage: %s: cannot move log start to %d above high watermark %d: %w",
			l.tp, offset, hw, ErrOffsetOutOfRange)
	}
	if offset > l.logStartOffset.Load() {
		l.setLogStartLocked(offset)
		if err := l.epochs.TruncateFromStart(offset); err != nil {
			return 0, l.failLocked(err)
		}
		if _, err := l.deleteSegmentsBelowLocked(offset, "log start offset"); err != nil {
			return 0, l.failLocked(err)
		}
	}
	return l.logStartOffset.Load(), nil
}

// deleteSegmentsBelowLocked deletes the segments whose successor starts at
// or below offset (Kafka's deleteLogStartOffsetBreachedSegments). The
// active segment always stays.
func (l *Log) deleteSegmentsBelowLocked(offset int64, reason string) (int, error) {
	segs := *l.segments.Load()
	n := 0
	for n+1 < len(segs) && segs[n+1].base <= offset {
		n++
	}
	if n == 0 {
		return 0, nil
	}
	l.publishSegmentsLocked(append([]*Segment(nil), segs[n:]...))
	if err := l.deleteSegmentsLocked(segs[:n], reason); err != nil {
		return 0, err
	}
	if err := l.onSegmentsDeletedProducerStateLocked(); err != nil {
		return 0, err
	}
	return n, nil
}

// deleteSegmentsLocked renames segments "*.deleted" and removes them after
// file.delete.delay.ms (Kafka's Log.deleteSegmentFiles): reads already
// holding a region of them finish meanwhile. The caller removes them from
// the segment list.
func (l *Log) deleteSegmentsLocked(segs []*Segment, reason string) error {
	if len(segs) == 0 {
		return nil
	}
	for _, s := range segs {
		l.logger.WithFields(logrus.Fields{"segment": s.logPath, "reason": reason}).Info("storage: deleting segment")
		if err := s.renameSuffix(l.dir, DeletedFileSuffix); err != nil {
			return err
		}
	}
	l.mu.dirDirty = true
	doomed := append([]*Segment(nil), segs...)
	remove := func() {
		for _, s := range doomed {
			if err := s.deleteFiles(); err != nil {
				l.logger.WithError(err).WithField("segment", s.logPath).Warn("storage: removing deleted segment failed")
			}
		}
	}
	delay := time.Duration(l.Config().FileDeleteDelayMs) * time.Millisecond
	if l.scheduleDelete == nil || delay <= 0 {
		remove()
	} else {
		l.scheduleDelete(delay, remove)
	}
	return nil
}
