package storage

import (
	"fmt"

	"samsa/broker/record"
	"samsa/kafka"
)

// The KIP-890 part 1 verification guard (Kafka 3.6's VerificationStateEntry
// and VerificationGuard in ProducerStateManager). The broker asks the
// transaction coordinator whether this partition is in a producer's
// ongoing transaction before the producer's first transactional batch of
// a transaction is appended. The answer can be stale by the time of the
// append: a marker (the coordinator timing the transaction out, say) may
// land in between, and the append would then open a transaction no
// marker will close. So the leader's producer state keeps one entry per
// producer under verification: StartTxnVerification creates it with a
// fresh guard, CompleteTxnVerification marks it verified only if that
// guard is still current, a marker ends it, and an append that would open
// a transaction for the producer is refused with ErrInvalidTxnState
// while the producer's entry for the batch's epoch exists unverified
// (started and not answered yet, refused, or ended by a marker). All of
// it runs under Log.mu, so the check and the append are one step.
//
// Entries live in memory only, on the leader (a new leader starts
// without, and its broker verifies afresh: an absent entry checks
// nothing, as for logs whose appends the broker never verifies, such as
// the group coordinator's transactional offset commits). A refused or
// failed verification removes its entry; verified and ended entries go
// with their producer's expiry. Guards are never reused (a counter per
// log).

// verifyEntry is one producer's verification state in this partition.
type verifyEntry struct {
	epoch    int16
	guard    uint64
	verified bool
}

// StartTxnVerification records that the broker is about to verify
// producer pid at epoch with the coordinator and returns the guard
// CompleteTxnVerification must present. An entry already verified for the
// same epoch is kept (its guard returned): the answer is still good until
// a marker ends it.
func (l *Log) StartTxnVerification(pid int64, epoch int16) uint64 {
	l.mu.Lock()
	defer l.mu.Unlock()
	ps := l.mu.producers
	if ps == nil {
		return 0
	}
	if e := ps.verify[pid]; e != nil && e.verified && e.epoch == epoch {
		return e.guard
	}
	if ps.verify == nil {
		ps.verify = map[int64]*verifyEntry{}
	}
	ps.verifyGuards++
	ps.verify[pid] = &verifyEntry{epoch: epoch, guard: ps.verifyGuards}
	return ps.verifyGuards
}

// CompleteTxnVerification records the coordinator's answer for the
// verification that got guard: ok marks the entry verified if it is still
// that verification's (no marker or newer verification replaced it);
// otherwise the entry is removed.
func (l *Log) CompleteTxnVerification(pid int64, guard uint64, ok bool) {
	l.mu.Lock()
	defer l.mu.Unlock()
	ps := l.mu.producers
	if ps == nil {
		return
	}
	e := ps.verify[pid]
	if e == nil || e.guard != guard {
		return
	}
	if ok {
		e.verified = true
	} else {
		delete(ps.verify, pid)
	}
}

// endVerification is called for every marker of pid appended as leader:
// the transaction the entry verified is over, so a batch that still
// carries its answer is refused.
func (ps *producerState) endVerification(pid int64) {
	if e := ps.verify[pid]; e != nil {
		// Guard 0 is never handed out: an answer still in flight for
		// the ended verification cannot mark it verified either.
		e.verified, e.guard = false, 0
	}
}

// checkVerified refuses a transactional data batch h that would open a
// transaction for its producer (cur has none open) while the producer's
// verification entry for the batch's epoch is unverified.
func (ps *producerState) checkVerified(tp kafka.TopicPartition, cur *ProducerEntry, h record.BatchHeader) error {
	if !h.IsTransactional() || cur.CurrentTxnFirstOffset >= 0 {
		return nil
	}
	e := ps.verify[h.ProducerID]
	if e == nil || e.epoch != h.ProducerEpoch || e.verified {
		return nil
	}
	return fmt.Errorf("%w: producer %d epoch %d in %s: no current verification with the transaction coordinator (a marker ended the verified transaction, or the answer is pending or negative)",
		ErrInvalidTxnState, h.ProducerID, h.ProducerEpoch, tp)
}
