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
	c      *LeaderEpochCache
	from   int64        // the recovery point
	before []EpochEntry // the entries as loaded, to tell whether the file must be rewritten
}

// startRecovery begins rebuilding c for a recovery from recoveryPoint.
// The caller holds the log's lock for the whole recovery.
func (c *LeaderEpochCache) startRecovery(recoveryPoint int64) *epochRecovery {
	c.mu.Lock()
	defer c.mu.Unlock()
	r := &epochRecovery{c: c, from: max(recoveryPoint, 0), before: slices.Clone(c.mu.entries)}
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

// finish marks the cache dirty when the rebuilt entries differ from the
// loaded ones; the log writes it before publishing its new recovery point.
func (r *epochRecovery) finish() {
	r.c.mu.Lock()
	defer r.c.mu.Unlock()
	if !slices.Equal(r.before, r.c.mu.entries) {
		r.c.mu.dirty = true
	}
}
