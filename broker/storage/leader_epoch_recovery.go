package storage

import (
	"slices"

	"samsa/broker/record"
)

// epochRecovery rebuilds the leader epoch cache of a log being recovered
// (Kafka's LogSegment.recover assigns each recovered batch's epoch). The
// checkpoint is durable for every epoch starting below the recovery point
// (LeaderEpochCache's write rule), so the entries below it are kept and
// the rest are taken from the batches past it:
//
//   - entries starting at or after the recovery point are dropped first:
//     the file may lack newer ones (Assign writes no file) or still hold
//     ones that a later Assign replaced in memory before the crash;
//   - each batch whose base offset is at or after the recovery point then
//     goes through Assign's rule, in log order, as its append did.
//
// Batches before the recovery point (the recovered segments start at the
// one holding it) are already covered by the kept entries, and assigning
// them again would be wrong: Assign's rule would replace an epoch's entry
// with one at the batch's later offset. What is lost is only an entry for
// an epoch that wrote no batch past the recovery point (a leadership with
// no appends); the next leadership assigns a new epoch anyway.
type epochRecovery struct {
	c    *LeaderEpochCache
	from int64 // the recovery point
}

// startRecovery begins rebuilding c for a recovery from recoveryPoint; the
// log's trimAtLoad ends it. The caller holds the log's lock for the whole
// load.
func (c *LeaderEpochCache) startRecovery(recoveryPoint int64) *epochRecovery {
	c.mu.Lock()
	defer c.mu.Unlock()
	r := &epochRecovery{c: c, from: max(recoveryPoint, 0)}
	c.mu.recovering = true
	c.mu.loaded = slices.Clone(c.mu.entries)
	c.truncateFromEndLocked(r.from)
	return r
}

// batch assigns the epoch of one valid recovered batch.
func (r *epochRecovery) batch(h record.BatchHeader) {
	if h.BaseOffset < r.from || h.PartitionLeaderEpoch < 0 {
		return
	}
	r.c.mu.Lock()
	defer r.c.mu.Unlock()
	r.c.assignLocked(EpochEntry{Epoch: h.PartitionLeaderEpoch, StartOffset: h.BaseOffset})
}

// finishRecoveryLocked ends a recovery of a log that ends at end: the
// cache becomes dirty when its entries below end differ from the loaded
// ones (the log then writes it before its recovery point moves to end).
// Entries at or past end are not compared: every load trims them in
// memory (trimAtLoad), so a recovery that only drops those (an unclean
// restart of thousands of partitions, each with its leader's entry at the
// log end) writes nothing.
func (c *LeaderEpochCache) finishRecoveryLocked(end int64) {
	below := func(es []EpochEntry) []EpochEntry {
		i := 0
		for i < len(es) && es[i].StartOffset < end {
			i++
		}
		return es[:i]
	}
	if !slices.Equal(below(c.mu.loaded), below(c.mu.entries)) {
		c.markDirtyLocked()
	}
	c.mu.recovering, c.mu.loaded = false, nil
}
