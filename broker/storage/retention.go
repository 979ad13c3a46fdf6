package storage

// DeleteOldSegments applies retention (Kafka's Log.deleteOldSegments):
// with a delete cleanup policy, segments whose largest timestamp is older
// than retention.ms, then the oldest segments while the log exceeds
// retention.bytes; under any policy, segments wholly below the log start
// offset. A segment is deletable only when the whole of it is below the
// high watermark, and the active segment is never deleted. The log start
// offset moves to the first remaining segment. It returns the number of
// segments deleted. It also evicts the indexes of inactive segments that
// lookups loaded since the last pass.
func (l *Log) DeleteOldSegments() (int, error) {
	cfg := l.Config()
	now := l.now()
	l.mu.Lock()
	defer l.mu.Unlock()
	if err := l.checkWritableLocked(); err != nil {
		return 0, err
	}
	total := 0
	if cfg.CleanupPolicy.Deletes() {
		if cfg.RetentionMs >= 0 {
			n, err := l.deleteWhileLocked("retention.ms", func(s *Segment, _ int64) bool {
				return now.UnixMilli()-s.LargestTimestamp() > cfg.RetentionMs
			})
			total += n
			if err != nil {
				return total, l.failLocked(err)
			}
		}
		if cfg.RetentionBytes >= 0 {
			diff := l.Size() - cfg.RetentionBytes
			n, err := l.deleteWhileLocked("retention.bytes", func(s *Segment, _ int64) bool {
				if diff-s.Size() < 0 {
					return false
				}
				diff -= s.Size()
				return true
			})
			total += n
			if err != nil {
				return total, l.failLocked(err)
			}
		}
	}
	start := l.logStartOffset.Load()
	n, err := l.deleteWhileLocked("log start offset", func(_ *Segment, nextBase int64) bool {
		return nextBase <= start
	})
	total += n
	if err != nil {
		return total, l.failLocked(err)
	}
	// Producers idle past transactional.id.expiration.ms lose their state
	// (Kafka runs this every producer.id.expiration.check.interval.ms).
	l.removeExpiredProducersLocked()
	// Indexes that lookups loaded since the last pass leave memory again
	// (the retention pass is the periodic housekeeping of a log).
	segs := *l.segments.Load()
	for _, s := range segs[:len(segs)-1] {
		if err := s.evictIndexes(); err != nil {
			return total, l.failLocked(err)
		}
	}
	return total, nil
}

// deleteWhileLocked deletes the oldest segments while pred holds, stopping
// at the active segment and at the first segment not wholly below the high
// watermark (Kafka's deletableSegments).
func (l *Log) deleteWhileLocked(reason string, pred func(s *Segment, nextBase int64) bool) (int, error) {
	segs := *l.segments.Load()
	hw := l.highWatermark.Load()
	n := 0
	for n+1 < len(segs) {
		next := segs[n+1].base
		if hw < next || !pred(segs[n], next) {
			break
		}
		n++
	}
	if n == 0 {
		return 0, nil
	}
	// Readers must see the new start before the files go.
	rest := append([]*Segment(nil), segs[n:]...)
	l.publishSegmentsLocked(rest)
	if rest[0].base > l.logStartOffset.Load() {
		l.setLogStartLocked(rest[0].base)
		if err := l.epochs.TruncateFromStart(rest[0].base); err != nil {
			return n, err
		}
	}
	if err := l.deleteSegmentsLocked(segs[:n], reason); err != nil {
		return 0, err
	}
	if err := l.onSegmentsDeletedProducerStateLocked(); err != nil {
		return 0, err
	}
	return n, nil
}
