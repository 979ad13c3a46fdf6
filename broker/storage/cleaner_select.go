package storage

import (
	"time"

	"samsa/broker/record"
)

// logToClean is one compacted log's cleaning state at a moment (Kafka's
// LogToClean plus LogCleanerManager.cleanableOffsets).
type logToClean struct {
	log  *Log
	segs []*Segment // snapshot, oldest first; the last is the active segment
	// truncations is the log's truncation count when segs was taken; a
	// swap is abandoned if it changed.
	truncations int64
	// firstDirty is the first offset not yet cleaned (from
	// cleaner-offset-checkpoint, reset to the log start when out of range).
	firstDirty int64
	// firstUncleanable is the first offset that may not be cleaned: the
	// smallest of the active segment's base, the high watermark and the
	// base of the first dirty segment younger than min.compaction.lag.ms.
	firstUncleanable int64
	cleanBytes       int64 // bytes of segments in [log start, firstDirty)
	dirtyBytes       int64 // bytes of segments in [firstDirty, firstUncleanable)
	// needCompactionNow: max.compaction.lag.ms has passed for the first
	// dirty segment (Kafka's maxCompactionDelay > 0).
	needCompactionNow bool
}

// ratio is the dirty share of the cleanable bytes (Kafka's cleanableRatio).
func (c *logToClean) ratio() float64 {
	if c.cleanBytes+c.dirtyBytes == 0 {
		return 0
	}
	return float64(c.dirtyBytes) / float64(c.cleanBytes+c.dirtyBytes)
}

// shouldClean is Kafka's grabFilthiestCompactedLog filter: a dirty ratio
// strictly above min.cleanable.dirty.ratio, or max.compaction.lag.ms
// passed with something to clean.
func (c *logToClean) shouldClean(cfg Config) bool {
	if c.firstUncleanable <= c.firstDirty || c.dirtyBytes == 0 {
		return false
	}
	return c.needCompactionNow || c.ratio() > cfg.MinCleanableRatio
}

// segmentsInRange returns the segments holding offsets in [from, to) as
// Kafka's Log.logSegments(from, to) does: from the segment containing from
// (the first segment if from is below it) through the last segment whose
// base is below to.
func segmentsInRange(segs []*Segment, from, to int64) []*Segment {
	if from >= to || len(segs) == 0 {
		return nil
	}
	start := 0
	for i, s := range segs {
		if s.base <= from {
			start = i
		}
	}
	end := start
	for end < len(segs) && segs[end].base < to {
		end++
	}
	return segs[start:end]
}

func segmentsSize(segs []*Segment) int64 {
	var n int64
	for _, s := range segs {
		n += s.Size()
	}
	return n
}

// segmentLastModified returns the .log file's modification time in ms
// (Kafka's LogSegment.lastModified), the clock tombstone expiry uses.
func segmentLastModified(s *Segment) (int64, error) {
	st, err := s.log.Stat()
	if err != nil {
		return 0, storageError("stat segment", err)
	}
	return st.ModTime().UnixMilli(), nil
}

// newLogToClean computes the cleanable range of l. truncations is l's
// truncation count taken before checkpoint was read (see
// cleaner_checkpoint.go); checkpoint is the cleaner-offset-checkpoint entry
// for l, or ok false when it has none.
func newLogToClean(l *Log, truncations, checkpoint int64, ok bool, now time.Time) (*logToClean, error) {
	c := &logToClean{log: l, truncations: truncations}
	c.segs = l.Segments()
	if len(c.segs) == 0 {
		return c, nil
	}
	cfg := l.Config()
	logStart := l.LogStartOffset()
	leo := l.LogEndOffset()
	// A checkpoint outside [log start, log end] (after truncation, retention
	// or a corrupt tail) means everything needs cleaning
	// (LogCleanerManager.cleanableOffsets).
	c.firstDirty = logStart
	if ok && checkpoint >= logStart && checkpoint <= leo {
		c.firstDirty = checkpoint
	}
	active := c.segs[len(c.segs)-1]
	// Kafka stops at the first unstable offset (an open or unreplicated
	// transaction) and the high watermark: replicas may still truncate
	// anything above it, and a transaction's fate is not known yet.
	c.firstUncleanable = min(active.base, l.HighWatermark())
	if fu, ok := l.FirstUnstableOffset(); ok {
		c.firstUncleanable = min(c.firstUncleanable, fu)
	}
	dirty := segmentsInRange(c.segs[:len(c.segs)-1], c.firstDirty, c.firstUncleanable)
	if lag := cfg.MinCompactionLagMs; lag > 0 {
		for _, s := range dirty {
			if s.LargestTimestamp() > now.UnixMilli()-lag {
				c.firstUncleanable = min(c.firstUncleanable, s.base)
				break
			}
		}
	}
	if len(dirty) > 0 && cfg.MaxCompactionLagMs > 0 && cfg.MaxCompactionLagMs < NoLimit {
		ts, err := firstBatchTimestamp(dirty[0])
		if err != nil {
			return nil, err
		}
		c.needCompactionNow = ts >= 0 && ts < now.UnixMilli()-cfg.MaxCompactionLagMs
	}
	c.cleanBytes = segmentsSize(segmentsInRange(c.segs, logStart, c.firstDirty))
	c.dirtyBytes = segmentsSize(segmentsInRange(c.segs, c.firstDirty, c.firstUncleanable))
	return c, nil
}

// firstBatchTimestamp returns the max timestamp of s's first batch, or -1
// for an empty segment (Kafka's LogSegment.getFirstBatchTimestamp).
func firstBatchTimestamp(s *Segment) (int64, error) {
	if s.Size() == 0 {
		return -1, nil
	}
	h, err := record.ReadHeaderAt(s.log, 0)
	if err != nil {
		return 0, s.corruptAt(0, err)
	}
	return h.MaxTimestamp, nil
}

// groupSegmentsBySize splits segs (consecutive, non-active) into runs that
// fit one cleaned segment: at most segment.bytes of data, index files
// within segment.index.bytes, and offsets within an int32 of the group's
// base (Kafka's Cleaner.groupSegmentsBySize). firstUncleanable bounds the
// last segment's offsets.
func groupSegmentsBySize(segs []*Segment, maxSize int64, maxIndexSize int64, firstUncleanable int64) [][]*Segment {
	var groups [][]*Segment
	for len(segs) > 0 {
		group := []*Segment{segs[0]}
		logSize := segs[0].Size()
		idxSize := int64(segs[0].offsetIndex.Entries()) * offsetIndexEntrySize
		tidxSize := int64(segs[0].timeIndex.Entries()) * timeIndexEntrySize
		segs = segs[1:]
		for len(segs) > 0 {
			next := segs[0]
			lastOffset := firstUncleanable - 1
			if len(segs) > 1 {
				lastOffset = segs[1].base - 1
			}
			nIdx := int64(next.offsetIndex.Entries()) * offsetIndexEntrySize
			nTidx := int64(next.timeIndex.Entries()) * timeIndexEntrySize
			if logSize+next.Size() > maxSize || idxSize+nIdx > maxIndexSize || tidxSize+nTidx > maxIndexSize ||
				lastOffset-group[0].base > maxRelativeOffset {
				break
			}
			group = append(group, next)
			logSize += next.Size()
			idxSize += nIdx
			tidxSize += nTidx
			segs = segs[1:]
		}
		groups = append(groups, group)
	}
	return groups
}

// maxRelativeOffset is the largest offset distance an index entry holds.
const maxRelativeOffset = 1<<31 - 1

// truncationCount returns how many truncations l has had; the cleaner
// compares it before and after a pass. It takes the log's lock so that the
// count is never read in the middle of a truncation: a count taken here
// means the truncation it counts has lowered the cleaner checkpoint
// already (noteTruncationLocked runs inside the same critical section).
func (l *Log) truncationCount() int64 {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.truncations.Load()
}
