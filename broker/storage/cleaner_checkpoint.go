package storage

import (
	"path/filepath"

	"samsa/kafka"
)

// The cleaner checkpoint and truncation.
//
// cleaner-offset-checkpoint holds, per partition, the first dirty offset:
// everything below it was cleaned. A follower truncation (Log.TruncateTo,
// Log.TruncateFullyAndStartAt) removes records and the follower fetches
// new ones at the same offsets, so the checkpoint must come down with the
// log end, or the new records would be taken as clean (Kafka's
// LogManager.truncateTo calls maybeTruncateCheckpoint). The Log calls
// OnTruncate → Manager.onTruncate → Cleaner.logTruncated under Log.mu,
// after counting the truncation and before changing any file.
//
// Kafka also pauses cleaning of the partition for the truncation and waits
// for a pass in progress (abortAndPauseCleaning). Samsa does not wait, so
// a truncation never blocks on cleaner I/O; a pass in progress is only
// told to stop (abort flag), and these rules keep its results out:
//
//  1. A pass takes the log's truncation count under Log.mu (so never in
//     the middle of a truncation) before it reads the checkpoint. If a
//     truncation came before, its lowered checkpoint is what the pass
//     reads.
//  2. Every swap compares the count under Log.mu (swapCleanedSegment): a
//     segment computed from data read before a truncation is never swapped
//     in, and its .cleaned files are removed.
//  3. The new first dirty offset is written under ckptMu only if the count
//     is unchanged (updateCheckpoint). The truncation raises the count
//     before it takes ckptMu to lower the checkpoint, so either the pass
//     writes first and the truncation lowers afterwards, or the pass sees
//     the new count and writes nothing.
//  4. An error in a pass whose log was truncated meanwhile (it read a
//     segment as it was being cut) is an abort, not a data error: the log
//     is not marked uncleanable.
//
// Lock order: Log.mu → ckptMu → Manager.mu (read, through Logs) and
// Log.mu → Cleaner.mu (the abort flag). Nothing that holds ckptMu or
// Cleaner.mu takes a Log's lock.

// truncationListener is implemented by a ManagedService that must hear of
// truncations and deletions (the cleaner's); the Manager forwards its logs'
// OnTruncate and its DeleteLog to it.
type truncationListener interface {
	// logTruncated runs under l's lock; see Cleaner.logTruncated.
	logTruncated(l *Log, keep int64) error
	// logDeleted runs after l left the Manager; see Cleaner.logDeleted.
	logDeleted(l *Log) error
}

func (s cleanerService) logTruncated(l *Log, keep int64) error { return s.c.logTruncated(l, keep) }
func (s cleanerService) logDeleted(l *Log) error               { return s.c.logDeleted(l) }

// logTruncated is called under l's lock when l is about to lose its
// records from keep on: it stops a pass in progress on l (without waiting)
// and lowers the checkpoint to keep. Callers hold no Cleaner lock.
func (c *Cleaner) logTruncated(l *Log, keep int64) error {
	c.abortInProgress(l)
	return c.MaybeTruncateCheckpoint(l, keep)
}

// logDeleted forgets l: a pass in progress is told to stop and l's
// checkpoint entry is dropped, so a partition created again with the same
// name starts dirty (Kafka's LogManager.deleteLog).
func (c *Cleaner) logDeleted(l *Log) error {
	c.abortInProgress(l)
	return c.RemoveCheckpoint(l)
}

// abortInProgress sets the abort flag of a pass on l, if any.
func (c *Cleaner) abortInProgress(l *Log) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if st := c.mu.inProgress[l]; st != nil {
		st.abort.Store(true)
	}
}

// checkpointPathFor returns the cleaner-offset-checkpoint of l's log dir.
func checkpointPathFor(l *Log) string {
	return filepath.Join(filepath.Dir(l.dir), CleanerOffsetCheckpointFile)
}

// readCheckpoint returns (a copy of) one log dir's cleaner checkpoint.
func (c *Cleaner) readCheckpoint(path string) (map[kafka.TopicPartition]int64, error) {
	c.ckptMu.Lock()
	defer c.ckptMu.Unlock()
	m, err := c.loadCheckpointLocked(path)
	if err != nil {
		return nil, err
	}
	out := make(map[kafka.TopicPartition]int64, len(m))
	for tp, off := range m {
		out[tp] = off
	}
	return out, nil
}

// loadCheckpointLocked returns the cached contents of the checkpoint at
// path, reading the file the first time. Only the Cleaner writes the file,
// so the cache stays exact; it is dropped when a write fails. Callers hold
// ckptMu and must not keep the map past it.
func (c *Cleaner) loadCheckpointLocked(path string) (map[kafka.TopicPartition]int64, error) {
	if m, ok := c.ckptCache[path]; ok {
		return m, nil
	}
	m, err := NewOffsetCheckpointFile(c.fs, path).Read()
	if err != nil {
		return nil, err
	}
	if c.ckptCache == nil {
		c.ckptCache = make(map[string]map[kafka.TopicPartition]int64)
	}
	c.ckptCache[path] = m
	return m, nil
}

// updateCheckpoint sets l's entry in its log dir's cleaner checkpoint to
// offset and drops entries of partitions no longer in that dir (Kafka's
// LogCleanerManager.updateCheckpoints). truncations is l's truncation
// count when the pass read the old checkpoint: if l was truncated since, or
// is no longer one of the cleaner's logs (deleted), nothing is written and
// errCleaningAborted is returned (rule 3 above).
func (c *Cleaner) updateCheckpoint(l *Log, offset, truncations int64) error {
	aborted := false
	err := c.modifyCheckpoint(checkpointPathFor(l), func(m map[kafka.TopicPartition]int64, present map[kafka.TopicPartition]*Log) bool {
		if l.truncations.Load() != truncations || (present != nil && present[l.tp] != l) {
			aborted = true
			return false
		}
		m[l.tp] = offset
		return true
	})
	if err == nil && aborted {
		return errCleaningAborted
	}
	return err
}

// MaybeTruncateCheckpoint lowers l's cleaner checkpoint to offset if it is
// above it (Kafka's maybeTruncateCheckpoint), so records written again
// from offset on are seen as dirty. The file is rewritten only when the
// entry changes. The Log calls it, through the Manager, whenever it is
// truncated; callers must not hold ckptMu.
func (c *Cleaner) MaybeTruncateCheckpoint(l *Log, offset int64) error {
	return c.modifyCheckpoint(checkpointPathFor(l), func(m map[kafka.TopicPartition]int64, _ map[kafka.TopicPartition]*Log) bool {
		if cur, ok := m[l.tp]; ok && cur > offset {
			m[l.tp] = offset
			return true
		}
		return false
	})
}

// RemoveCheckpoint drops l's cleaner checkpoint entry (the log was deleted).
func (c *Cleaner) RemoveCheckpoint(l *Log) error {
	return c.modifyCheckpoint(checkpointPathFor(l), func(m map[kafka.TopicPartition]int64, _ map[kafka.TopicPartition]*Log) bool {
		_, ok := m[l.tp]
		delete(m, l.tp)
		return ok
	})
}

// modifyCheckpoint applies fn to the checkpoint at path under ckptMu and
// writes the result if fn reports a change (so a truncation that does not
// lower the entry costs no I/O: the contents are cached). fn also gets the
// cleaner's logs of that log dir by partition (nil before the logs are
// known); entries of partitions not among them are dropped when the file
// is written.
func (c *Cleaner) modifyCheckpoint(path string, fn func(m map[kafka.TopicPartition]int64, present map[kafka.TopicPartition]*Log) bool) error {
	c.ckptMu.Lock()
	defer c.ckptMu.Unlock()
	cached, err := c.loadCheckpointLocked(path)
	m := make(map[kafka.TopicPartition]int64, len(cached))
	if err != nil {
		// A corrupt checkpoint only costs a full re-clean; start afresh.
		c.logger.WithError(err).Warn("storage: discarding unreadable cleaner checkpoint")
	}
	for tp, off := range cached {
		m[tp] = off
	}
	var present map[kafka.TopicPartition]*Log
	if c.logs.Load() != nil {
		present = make(map[kafka.TopicPartition]*Log)
		dir := filepath.Dir(path)
		for _, l := range c.currentLogs() {
			if filepath.Dir(l.dir) == dir {
				present[l.tp] = l
			}
		}
	}
	if !fn(m, present) && err == nil {
		return nil
	}
	for tp := range m {
		if present != nil && present[tp] == nil {
			delete(m, tp)
		}
	}
	if err := NewOffsetCheckpointFile(c.fs, path).Write(m); err != nil {
		delete(c.ckptCache, path) // the file may hold either version now
		return err
	}
	if c.ckptCache == nil {
		c.ckptCache = make(map[string]map[kafka.TopicPartition]int64)
	}
	c.ckptCache[path] = m
	return nil
}
