package txn

import "samsa/kafka"

// AddPartitionsToTxn requests of one producer epoch in flight together
// (franz-go sends one per partition leader, at once) are chained: a
// request arriving while another's Ongoing record is appended to the local
// log but not yet replicated decides from that record (as if applied),
// appends its own record after it and answers once its own record is
// replicated. The records replicate in the same follower fetches, so three
// requests cost about one replication instead of two in turn. The argument
// is the one for Complete* (doc.go): the later record is acknowledged only
// once replicated, which implies every earlier one is; each chained
// record holds every partition of the one it was decided from, so
// applying records in log order only (metadata.appliedNext) never loses a
// partition a request was answered NONE for. Only the latest decided
// record may be chained on, and only once it is in the local log
// (chainBase), so records reach the log in the order they were decided.
// The id stays pending (EndTxn, InitProducerId and the timers wait) until
// the last chained write ends, and the KIP-890 check and the readers see
// only applied, that is replicated, records.

// chainState is a metadata's AddPartitions chain; guarded by
// Coordinator.mu.
type chainState struct {
	inflight int      // Ongoing writes in flight
	decided  uint64   // number of the latest decided Ongoing write
	base     *transit // that write's transition once it is in the local log, else nil
	// appliedNext is the offset after the last applied record in this
	// tenure: a record below it is superseded (chain.go).
	appliedNext int64
}

// chainBaseLocked returns the transition an AddPartitions decides from
// and whether the id counts as pending for it: the latest chained record
// when one is in the local log, else the applied state.
func (md *metadata) chainBaseLocked() (transit, bool) {
	if md.pending == Ongoing && md.chain.base != nil {
		t := *md.chain.base
		t.partitions = append([]kafka.TopicPartition(nil), t.partitions...)
		return t, false
	}
	return md.snapshot(), md.pending != noState
}

// startAddLocked marks an Ongoing write decided (t.chain is its number).
func (md *metadata) startAddLocked(t *transit) {
	md.pending = Ongoing
	md.chain.inflight++
	md.chain.decided++
	md.chain.base = nil
	t.chain = md.chain.decided
}

// appendedLocked records that write t is in the local log up to next:
// if it is still the latest decided one, later requests may chain on it.
func (md *metadata) appendedLocked(t transit) {
	if t.chain != 0 && t.chain == md.chain.decided {
		tt := t
		md.chain.base = &tt
		md.notifyLocked()
	}
}

// endWriteLocked ends write t's share of md's pending state: an Ongoing
// write leaves the id pending while chained ones are still in flight.
func (md *metadata) endWriteLocked(t transit) {
	if t.chain != 0 && md.chain.inflight > 0 {
		md.chain.inflight--
		if md.chain.inflight > 0 {
			return
		}
	}
	md.pending = noState
	md.chain.base = nil
}
