package storage

import (
	"sort"

	"samsa/broker/record"
)

// cleanedTxns is the transaction state of one cleaning pass (Kafka 2.8's
// CleanedTransactionMetadata, shared by the pass's segment groups): the
// aborted transactions from every segment's .txnindex, consumed in order
// of first offset as the cleaner walks the log, the aborted transactions
// under way at the current batch, and the producers whose committed
// (non-aborted) transactional data the pass has seen since their last
// marker. It decides which data is aborted and which markers may go.
type cleanedTxns struct {
	queue          []AbortedTxn // by first offset; consumed from the front
	ongoingAborted map[int64]*abortedTxnSeen
	ongoingCommit  map[int64]bool
}

// abortedTxnSeen is an aborted transaction under way and whether the pass
// traversed a batch of it (Kafka's lastObservedBatchOffset).
type abortedTxnSeen struct {
	entry    AbortedTxn
	observed bool
}

// newCleanedTxns reads the .txnindex entries of segs.
func newCleanedTxns(segs []*Segment) *cleanedTxns {
	c := &cleanedTxns{ongoingAborted: map[int64]*abortedTxnSeen{}, ongoingCommit: map[int64]bool{}}
	for _, s := range segs {
		c.queue = append(c.queue, s.txnIndex.Entries()...)
	}
	sort.SliceStable(c.queue, func(i, j int) bool { return c.queue[i].FirstOffset < c.queue[j].FirstOffset })
	return c
}

// consumeUpTo starts the aborted transactions that begin at or before
// offset (Kafka's consumeAbortedTxnsUpTo).
func (c *cleanedTxns) consumeUpTo(offset int64) {
	for len(c.queue) > 0 && c.queue[0].FirstOffset <= offset {
		e := c.queue[0]
		c.queue = c.queue[1:]
		if _, ok := c.ongoingAborted[e.ProducerID]; !ok {
			c.ongoingAborted[e.ProducerID] = &abortedTxnSeen{entry: e}
		}
	}
}

// onDataBatch records a data batch and reports whether it is aborted data,
// which goes whatever its keys (Kafka's onBatchRead).
func (c *cleanedTxns) onDataBatch(b record.Batch) bool {
	c.consumeUpTo(b.LastOffset())
	if !b.IsTransactional() {
		return false
	}
	if a := c.ongoingAborted[b.ProducerID()]; a != nil {
		a.observed = true
		return true
	}
	c.ongoingCommit[b.ProducerID()] = true
	return false
}

// abortedRanges are the aborted transactions of a log by producer id, for
// building the offset map (which reads ahead of the cleaning, so it cannot
// use cleanedTxns' running state).
type abortedRanges map[int64][]AbortedTxn

func newAbortedRanges(entries []AbortedTxn) abortedRanges {
	var out abortedRanges
	for _, e := range entries {
		if out == nil {
			out = abortedRanges{}
		}
		out[e.ProducerID] = append(out[e.ProducerID], e)
	}
	return out
}

// isAborted reports whether b is data of an aborted transaction: a
// transactional data batch inside [first offset, marker] of an aborted
// transaction of its producer.
func (a abortedRanges) isAborted(b record.Batch) bool {
	if len(a) == 0 || !b.IsTransactional() || b.IsControl() {
		return false
	}
	for _, e := range a[b.ProducerID()] {
		if b.BaseOffset() >= e.FirstOffset && b.BaseOffset() <= e.LastOffset {
			return true
		}
	}
	return false
}

// lastRecord is what the cleaner keeps of an active producer (Kafka's
// LastRecord): the last offset of its last data batch (-1: its last write
// was a marker) and its current epoch.
type lastRecord struct {
	dataOffset int64
	epoch      int16
}

// retainsMarker reports whether control batch b must stay because it holds
// the state of a producer that is still active and whose last write was a
// marker: Kafka 2.8's isBatchLastRecordOfProducer case 3, every marker of
// the producer's current epoch (an older epoch's markers are cleaned as
// any other; so are all markers of a producer with a last data batch,
// which that batch's retention covers).
func retainsMarker(active map[int64]lastRecord, b record.Batch) bool {
	last, ok := active[b.ProducerID()]
	return ok && last.dataOffset < 0 && b.ProducerEpoch() == last.epoch
}

// onControlBatch records a marker and reports whether it may be removed
// once past the delete horizon (Kafka's onControlBatchRead): an ABORT whose
// transaction had no batch left in this pass, a COMMIT whose transaction
// had none, an emptied control batch. A kept ABORT returns its .txnindex
// entry for the cleaned segment.
func (c *cleanedTxns) onControlBatch(b record.Batch) (discardable bool, keepEntry *AbortedTxn) {
	c.consumeUpTo(b.LastOffset())
	m, ok, err := batchMarker(b)
	if err != nil {
		return false, nil // unreadable: keep it as it is
	}
	if !ok {
		return b.NumRecords() == 0, nil // emptied: safe to drop; other control types stay
	}
	pid := b.ProducerID()
	if !m.Commit {
		a := c.ongoingAborted[pid]
		delete(c.ongoingAborted, pid)
		if a != nil && a.observed {
			e := a.entry
			return false, &e
		}
		return true, nil
	}
	seen := c.ongoingCommit[pid]
	delete(c.ongoingCommit, pid)
	return !seen, nil
}
