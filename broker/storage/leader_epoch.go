package storage

import (
	"errors"
	"fmt"
	"path/filepath"
	"sync"

	"github.com/sirupsen/logrus"
)

// UndefinedEpoch and UndefinedEpochOffset are Kafka's
// OffsetsForLeaderEpochResponse.UNDEFINED_EPOCH and UNDEFINED_EPOCH_OFFSET:
// "no epoch" and "no end offset known".
const (
	UndefinedEpoch       int32 = -1
	UndefinedEpochOffset int64 = -1
)

// ErrInvalidEpochEntry is returned by Assign for a negative epoch or start
// offset (Kafka throws IllegalArgumentException there).
var ErrInvalidEpochEntry = errors.New("storage: invalid leader epoch entry")

// LeaderEpochCache maps each leader epoch of one partition to the first
// offset written in it (KIP-101, KIP-279; Kafka LeaderEpochFileCache) and
// persists the map to leader-epoch-checkpoint in the partition directory.
//
// Invariant: entries are sorted by epoch, and both epochs and start offsets
// strictly increase.
//
// When the file is written (Kafka 3.7, KAFKA-15046, rather than 2.8, which
// fsyncs the file on every new epoch inside the append):
//   - Assign (a new epoch, from an append or a new leadership) changes only
//     memory and marks the cache dirty. The log writes a dirty cache with
//     Flush before its recovery point moves (Log.Flush, the flush.messages
//     path, the end of a recovery, Close), so the file is durable for every
//     epoch that starts below the recovery point; every epoch starting at or
//     past it has batches past it, which recovery reads and assigns again
//     (recoverLocked). A crash thus loses only entries that recovery
//     rebuilds, or that name an epoch which wrote no batch.
//   - Truncations (TruncateFromEnd, TruncateFromStart, Clear) write and
//     fsync the file before they return, as in Kafka 2.8: they remove
//     entries that recovery would not remove again.
//
// When the Manager flushes many logs at once (Close, the flusher), each
// dirty cache's write is staged in its log dir's checkpointBatch
// (checkpoint_batch.go, stageFlush) and made durable with the others, not
// with fsyncs of its own; the log's recovery point moves only after that.
//
// All methods are safe for concurrent use. Writes happen while holding the
// cache's lock (a staged write holds only the file's write lock from the
// temp file to the rename); if one fails, the in-memory change stays (and the cache
// stays dirty) and the error (wrapping ErrStorage) is returned, so the
// caller can take the log dir offline.
type LeaderEpochCache struct {
	fs  FS                 // immutable after NewLeaderEpochCache
	log logrus.FieldLogger // immutable after NewLeaderEpochCache

	mu struct {
		sync.RWMutex
		file    *CheckpointFile // guarded by mu
		entries []EpochEntry    // guarded by mu
		// dirty is set when entries differ from what the file holds
		// because of an Assign or a recovery (guarded by mu).
		dirty bool
		// gen counts the changes that made the cache dirty, so a write
		// staged in a checkpointBatch marks the cache clean only if
		// nothing changed since it was staged (guarded by mu).
		gen uint64
		// recovering is set, and loaded holds the entries as loaded from
		// the file, while a log recovery rebuilds the cache
		// (leader_epoch_recovery.go; guarded by mu).
		recovering bool
		loaded     []EpochEntry
	}
}

// NewLeaderEpochCache loads dir/leader-epoch-checkpoint (a missing file is
// an empty cache) and returns the cache. Entries in the file that break
// monotonicity are dropped on load the way Kafka's assign drops them. A
// malformed file returns a *CheckpointError; log may be nil.
func NewLeaderEpochCache(fsys FS, dir string, log logrus.FieldLogger) (*LeaderEpochCache, error) {
	if log == nil {
		log = discardLogger()
	}
	c := &LeaderEpochCache{fs: fsys, log: log.WithField("component", "storage")}
	c.mu.file = NewCheckpointFile(fsys, filepath.Join(dir, LeaderEpochCheckpointFile))
	loaded, err := readLeaderEpochFile(c.mu.file)
	if err != nil {
		return nil, err
	}
	for _, e := range loaded {
		c.assignLocked(e)
	}
	return c, nil
}

// Assign records that epoch starts at startOffset. It follows Kafka 2.8's
// LeaderEpochFileCache.assign:
//   - an entry for the latest epoch with a start offset at or after the
//     latest entry's is ignored (the epoch has already started);
//   - otherwise every trailing entry whose epoch is >= epoch or whose start
//     offset is >= startOffset is removed first (they conflict with the new
//     entry), and the entry is appended.
//
// Older Kafka (before 2.6) ignored any non-increasing epoch or offset
// instead; 2.8's rule keeps the cache consistent with a log that was
// truncated and rewritten. A change is made in memory only and marks the
// cache dirty (see the type's comment for when it is written); Assign does
// no I/O and its only error is ErrInvalidEpochEntry, for a negative epoch
// or offset. Append paths call this for every batch, so the common
// no-change case takes only the read lock.
func (c *LeaderEpochCache) Assign(epoch int32, startOffset int64) error {
	e := EpochEntry{Epoch: epoch, StartOffset: startOffset}
	if epoch < 0 || startOffset < 0 {
		return fmt.Errorf("%w: %v", ErrInvalidEpochEntry, e)
	}
	c.mu.RLock()
	needed := c.updateNeededLocked(e)
	c.mu.RUnlock()
	if !needed {
		return nil
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if !c.assignLocked(e) {
		return nil
	}
	c.markDirtyLocked()
	c.log.WithField("leader_epoch", epoch).Debugf("appended %v; cache has %d entries", e, len(c.mu.entries))
	return nil
}

// Flush writes the checkpoint (temp file, fsync, rename, directory fsync)
// when an Assign changed the cache since the file was last written, and
// blocks until it is durable. A clean cache costs no I/O. On error the
// cache stays dirty and the error wraps ErrStorage.
func (c *LeaderEpochCache) Flush() error {
	c.mu.Lock()
	defer c.mu.Unlock()
	if !c.mu.dirty {
		return nil
	}
	return c.flushLocked()
}

// Dirty reports whether the cache holds entries (or lacks removed ones)
// that its file does not yet reflect.
func (c *LeaderEpochCache) Dirty() bool {
	c.mu.RLock()
	defer c.mu.RUnlock()
	return c.mu.dirty
}

// updateNeededLocked reports whether assigning e changes the cache.
func (c *LeaderEpochCache) updateNeededLocked(e EpochEntry) bool {
	n := len(c.mu.entries)
	if n == 0 {
		return true
	}
	last := c.mu.entries[n-1]
	return e.Epoch != last.Epoch || e.StartOffset < last.StartOffset
}

// assignLocked applies Assign's rule in memory and reports whether the
// cache changed.
func (c *LeaderEpochCache) assignLocked(e EpochEntry) bool {
	if e.Epoch < 0 || e.StartOffset < 0 || !c.updateNeededLocked(e) {
		return false
	}
	i := len(c.mu.entries)
	for i > 0 && (c.mu.entries[i-1].Epoch >= e.Epoch || c.mu.entries[i-1].StartOffset >= e.StartOffset) {
		i--
	}
	removed := c.mu.entries[i:]
	if len(removed) > 1 || (len(removed) == 1 && removed[0].StartOffset != e.StartOffset) {
		// Only non-trivial removals are worth a warning: replacing an
		// epoch that wrote nothing is expected (Kafka does the same).
		c.log.Warnf("new epoch entry %v caused truncation of conflicting entries %v", e, append([]EpochEntry(nil), removed...))
	}
	c.mu.entries = append(c.mu.entries[:i], e)
	return true
}

// LatestEpoch returns the newest epoch in the cache, or UndefinedEpoch when
// it is empty.
func (c *LeaderEpochCache) LatestEpoch() int32 {
	c.mu.RLock()
	defer c.mu.RUnlock()
	if n := len(c.mu.entries); n > 0 {
		return c.mu.entries[n-1].Epoch
	}
	return UndefinedEpoch
}

// LatestEntry returns the newest entry; ok is false when the cache is empty.
func (c *LeaderEpochCache) LatestEntry() (e EpochEntry, ok bool) {
	c.mu.RLock()
	defer c.mu.RUnlock()
	if n := len(c.mu.entries); n > 0 {
		return c.mu.entries[n-1], true
	}
	return EpochEntry{}, false
}

// EarliestEntry returns the oldest entry; ok is false when the cache is empty.
func (c *LeaderEpochCache) EarliestEntry() (e EpochEntry, ok bool) {
	c.mu.RLock()
	defer c.mu.RUnlock()
	if len(c.mu.entries) > 0 {
		return c.mu.entries[0], true
	}
	return EpochEntry{}, false
}

// Entries returns a copy of the cache's entries in epoch order.
func (c *LeaderEpochCache) Entries() []EpochEntry {
	c.mu.RLock()
	defer c.mu.RUnlock()
	return append([]EpochEntry(nil), c.mu.entries...)
}

// EndOffsetFor answers OffsetsForLeaderEpoch for requestedEpoch, with
// Kafka's LeaderEpochFileCache.endOffsetFor semantics:
//   - requestedEpoch == UndefinedEpoch: (UndefinedEpoch, UndefinedEpochOffset);
//   - requestedEpoch is the latest epoch: (requestedEpoch, logEndOffset);
//   - no epoch above requestedEpoch is known (including an empty cache):
//     (UndefinedEpoch, UndefinedEpochOffset);
//   - requestedEpoch is below every known epoch: (requestedEpoch, start
//     offset of the first epoch);
//   - otherwise: (largest epoch <= requestedEpoch, start offset of the
//     smallest epoch > requestedEpoch).
func (c *LeaderEpochCache) EndOffsetFor(requestedEpoch int32, logEndOffset int64) (epoch int32, endOffset int64) {
	if requestedEpoch == UndefinedEpoch {
		// A bootstrapping follower, or one on a message format without epochs.
		return UndefinedEpoch, UndefinedEpochOffset
	}
	c.mu.RLock()
	defer c.mu.RUnlock()
	es := c.mu.entries
	if n := len(es); n > 0 && es[n-1].Epoch == requestedEpoch {
		// The latest epoch is still being written to: it ends at the log end.
		return requestedEpoch, logEndOffset
	}
	higher := len(es) // index of the smallest epoch > requestedEpoch
	for i, e := range es {
		if e.Epoch > requestedEpoch {
			higher = i
			break
		}
	}
	if higher == len(es) {
		return UndefinedEpoch, UndefinedEpochOffset
	}
	if higher == 0 {
		// Older epochs were removed with their data; the follower should
		// replicate from the first epoch we know.
		return requestedEpoch, es[0].StartOffset
	}
	return es[higher-1].Epoch, es[higher].StartOffset
}

// TruncateFromEnd removes every entry whose start offset is >= endOffset
// (the log was truncated to endOffset) and persists the cache if that
// changed it. A negative endOffset does nothing.
func (c *LeaderEpochCache) TruncateFromEnd(endOffset int64) error {
	c.mu.Lock()
	defer c.mu.Unlock()
	if !c.truncateFromEndLocked(endOffset) {
		return nil
	}
	return c.flushLocked()
}

// truncateFromEndLocked is TruncateFromEnd without persisting; it reports
// whether the cache changed.
func (c *LeaderEpochCache) truncateFromEndLocked(endOffset int64) bool {
	n := len(c.mu.entries)
	if endOffset < 0 || n == 0 || c.mu.entries[n-1].StartOffset < endOffset {
		return false
	}
	i := n
	for i > 0 && c.mu.entries[i-1].StartOffset >= endOffset {
		i--
	}
	c.mu.entries = c.mu.entries[:i]
	c.log.Debugf("removed %d leader epoch entries after truncating to end offset %d", n-i, endOffset)
	return true
}

// trimAtLoad trims the cache to the loaded log, [startOffset, endOffset)
// (Kafka's LogLoader calls truncateFromEnd and truncateFromStart), in
// memory only. Kafka rewrites and fsyncs the file when that changes it; a
// broker restarting with 10,000 empty partitions (each has its epoch entry
// at the log end, which truncateFromEnd removes) spent most of its log
// load on those fsyncs. Not writing is safe: the trim depends only on the
// log, so after a crash the next load trims the same entries again, and
// every later write of the cache rewrites the whole file from memory. It
// also ends a recovery begun by startRecovery (finishRecoveryLocked).
func (c *LeaderEpochCache) trimAtLoad(startOffset, endOffset int64) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.mu.recovering {
		c.finishRecoveryLocked(endOffset)
	}
	c.truncateFromEndLocked(endOffset)
	c.truncateFromStartLocked(startOffset)
}

// TruncateFromStart drops entries wholly before startOffset (the log start
// moved to startOffset): every entry with start offset <= startOffset is
// removed and the last of them is put back starting at startOffset, so the
// epoch that covers startOffset is kept. It persists the cache if that
// changed it. Like Kafka this is exclusive: TruncateFromStart(6) keeps an
// entry at offset 6 (as the first entry, starting at 6).
func (c *LeaderEpochCache) TruncateFromStart(startOffset int64) error {
	c.mu.Lock()
	defer c.mu.Unlock()
	if !c.truncateFromStartLocked(startOffset) {
		return nil
	}
	return c.flushLocked()
}

// truncateFromStartLocked is TruncateFromStart without persisting; it
// reports whether the cache changed (a first entry already starting at
// startOffset is no change, as in Kafka's truncateFromStart).
func (c *LeaderEpochCache) truncateFromStartLocked(startOffset int64) bool {
	i := 0
	for i < len(c.mu.entries) && c.mu.entries[i].StartOffset <= startOffset {
		i++
	}
	if i == 0 || (i == 1 && c.mu.entries[0].StartOffset == startOffset) {
		return false
	}
	first := EpochEntry{Epoch: c.mu.entries[i-1].Epoch, StartOffset: startOffset}
	rest := c.mu.entries[i:]
	entries := make([]EpochEntry, 0, 1+len(rest))
	c.mu.entries = append(append(entries, first), rest...)
	c.log.Debugf("removed %d leader epoch entries before start offset %d; first entry now %v", i, startOffset, first)
	return true
}

// Clear removes every entry and persists the empty cache (Kafka
// clearAndFlush), for example when the log is truncated fully.
func (c *LeaderEpochCache) Clear() error {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.mu.entries = nil
	return c.flushLocked()
}

// renameDir points the cache at dir/leader-epoch-checkpoint after the
// partition directory was renamed (for example to its -delete name). It
// writes nothing.
func (c *LeaderEpochCache) renameDir(dir string) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.mu.file = NewCheckpointFile(c.fs, filepath.Join(dir, LeaderEpochCheckpointFile))
}

// markDirtyLocked records that the entries changed since the file was
// last written.
func (c *LeaderEpochCache) markDirtyLocked() {
	c.mu.dirty = true
	c.mu.gen++
}

// flushLocked writes the entries to the checkpoint file and, once that
// is durable, marks the cache clean. The truncations call it right after
// changing the entries, so it first marks the cache dirty: a failed write
// leaves it dirty, and a write staged earlier (stageFlush) of the entries
// before the change does not mark it clean.
func (c *LeaderEpochCache) flushLocked() error {
	c.markDirtyLocked()
	if err := writeLeaderEpochFile(c.mu.file, c.mu.entries); err != nil {
		return err
	}
	c.mu.dirty = false
	return nil
}

// stageFlush is Flush with the write staged in b (checkpoint_batch.go):
// a dirty cache writes its temp file and reports true; b's commit makes
// the file durable, then marks the cache clean unless it changed
// meanwhile, then calls done with the outcome. A clean cache stages
// nothing and reports false. An error writing the temp file is returned
// (done is not called) and leaves the cache dirty.
func (c *LeaderEpochCache) stageFlush(b *checkpointBatch, done func(error)) (bool, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if !c.mu.dirty {
		return false, nil
	}
	data, err := EncodeLeaderEpochCheckpoint(c.mu.entries)
	if err != nil {
		return false, err
	}
	gen := c.mu.gen
	// Lock order: c.mu, then the file's write lock (as flushLocked); the
	// write lock stays held until b renames the file, so a later write of
	// newer entries waits for it.
	err = b.stage(c.mu.file, data, func(err error) {
		if err == nil {
			c.mu.Lock()
			if c.mu.gen == gen {
				c.mu.dirty = false
			}
			c.mu.Unlock()
		}
		done(err)
	})
	return err == nil, err
}
