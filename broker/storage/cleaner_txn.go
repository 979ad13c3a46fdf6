package storage

import "samsa/broker/record"

// abortedRanges are the aborted transactions of a log by producer id, read
// from every segment's .txnindex once per cleaning pass (the part of
// Kafka's CleanedTransactionMetadata that decides which data is aborted).
type abortedRanges map[int64][]AbortedTxn

// collectAbortedRanges reads the .txnindex entries of segs.
func collectAbortedRanges(segs []*Segment) abortedRanges {
	var out abortedRanges
	for _, s := range segs {
		for _, e := range s.txnIndex.Entries() {
			if out == nil {
				out = abortedRanges{}
			}
			out[e.ProducerID] = append(out[e.ProducerID], e)
		}
	}
	return out
}

// isAborted reports whether b is data of an aborted transaction: a
// transactional data batch inside [first offset, marker] of an aborted
// transaction of its producer. Kafka's cleaner drops such records whatever
// their key (Cleaner.cleanInto with discardBatchRecords).
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

// cleanedTxnEntries returns the .txnindex entries of group, in order, for
// the segment that replaces it: markers always survive cleaning (Samsa
// does not yet remove them after delete.retention.ms), so every entry
// still describes data or a marker of the cleaned segment.
func cleanedTxnEntries(group []*Segment) []AbortedTxn {
	var out []AbortedTxn
	for _, s := range group {
		out = append(out, s.txnIndex.Entries()...)
	}
	return out
}
