package storage

import (
	"errors"
	"fmt"
	"math"
	"sort"

	"samsa/broker/record"
	"samsa/kafka"
)

// Errors of idempotent appends (Kafka 2.8 ProducerAppendInfo). The broker
// maps them to OUT_OF_ORDER_SEQUENCE_NUMBER, INVALID_PRODUCER_EPOCH and
// UNKNOWN_PRODUCER_ID.
var (
	// ErrOutOfOrderSequence: a batch's first sequence does not follow the
	// producer's last appended sequence (OutOfOrderSequenceException).
	ErrOutOfOrderSequence = errors.New("storage: out of order sequence number")
	// ErrInvalidProducerEpoch: a batch carries an epoch older than the
	// producer's current one (InvalidProducerEpochException, Kafka 2.7+).
	ErrInvalidProducerEpoch = errors.New("storage: invalid producer epoch")
	// ErrUnknownProducerID: the partition has no state for the producer and
	// the batch does not start a sequence (UnknownProducerIdException), for
	// example after the producer's data left the log and its state expired.
	ErrUnknownProducerID = errors.New("storage: unknown producer id")
)

// producerBatchesRetained is how many batches per producer the state keeps
// for duplicate detection (Kafka's ProducerStateEntry.NumBatchesToRetain;
// the producer's max.in.flight.requests.per.connection may not exceed it).
const producerBatchesRetained = 5

// ProducerBatch is the metadata of one batch an idempotent producer
// appended (Kafka's BatchMetadata).
type ProducerBatch struct {
	FirstSeq, LastSeq       int32
	FirstOffset, LastOffset int64
	Timestamp               int64 // the batch's max timestamp
}

// ProducerEntry is the state of one producer id in one partition (Kafka's
// ProducerStateEntry): its epoch and its last batches, oldest first.
type ProducerEntry struct {
	ProducerID int64
	Epoch      int16
	// Batches holds at most 5 batches of the current epoch, oldest first.
	Batches []ProducerBatch
	// CoordinatorEpoch is the coordinator epoch of the producer's last
	// transaction marker (-1: none); CurrentTxnFirstOffset the first offset
	// of its open transaction (-1: none).
	CoordinatorEpoch      int32
	CurrentTxnFirstOffset int64
	// LastTimestamp is the max timestamp of the producer's last batch (or
	// marker); expiry compares it with the clock.
	LastTimestamp int64
}

func newProducerEntry(pid int64) *ProducerEntry {
	return &ProducerEntry{ProducerID: pid, Epoch: record.NoProducerEpoch, CoordinatorEpoch: -1,
		CurrentTxnFirstOffset: -1, LastTimestamp: -1}
}

// lastSeq returns the last sequence appended, or NoSequence.
func (e *ProducerEntry) lastSeq() int32 {
	if len(e.Batches) == 0 {
		return record.NoSequence
	}
	return e.Batches[len(e.Batches)-1].LastSeq
}

// lastDataOffset returns the last offset of the last batch, or -1.
func (e *ProducerEntry) lastDataOffset() int64 {
	if len(e.Batches) == 0 {
		return -1
	}
	return e.Batches[len(e.Batches)-1].LastOffset
}

// maybeUpdateEpoch switches to epoch, forgetting the batches of the old
// one (Kafka's maybeUpdateProducerEpoch).
func (e *ProducerEntry) maybeUpdateEpoch(epoch int16) {
	if e.Epoch != epoch {
		e.Batches = e.Batches[:0]
		e.Epoch = epoch
	}
}

// addBatch records an appended batch of epoch.
func (e *ProducerEntry) addBatch(epoch int16, b ProducerBatch) {
	e.maybeUpdateEpoch(epoch)
	if len(e.Batches) == producerBatchesRetained {
		copy(e.Batches, e.Batches[1:])
		e.Batches = e.Batches[:producerBatchesRetained-1]
	}
	e.Batches = append(e.Batches, b)
	e.LastTimestamp = b.Timestamp
}

// findDuplicate returns the retained batch with exactly the sequence range
// of h in h's epoch (Kafka's findDuplicateBatch).
func (e *ProducerEntry) findDuplicate(h record.BatchHeader) (ProducerBatch, bool) {
	if h.ProducerEpoch != e.Epoch {
		return ProducerBatch{}, false
	}
	first, last := h.BaseSequence, lastSequence(h)
	for _, b := range e.Batches {
		if b.FirstSeq == first && b.LastSeq == last {
			return b, true
		}
	}
	return ProducerBatch{}, false
}

func (e *ProducerEntry) clone() *ProducerEntry {
	c := *e
	c.Batches = append(make([]ProducerBatch, 0, producerBatchesRetained), e.Batches...)
	return &c
}

// lastSequence is record.Batch.LastSequence for a header: the base sequence
// plus the last offset delta, wrapping past MaxInt32 to 0.
func lastSequence(h record.BatchHeader) int32 {
	if h.BaseSequence == record.NoSequence {
		return record.NoSequence
	}
	if s := int64(h.BaseSequence) + int64(h.LastOffsetDelta); s > math.MaxInt32 {
		return int32(s - math.MaxInt32 - 1)
	}
	return h.BaseSequence + h.LastOffsetDelta
}

// checkProducerAppend validates a client batch against the producer's
// current entry cur (Kafka 2.8 ProducerAppendInfo.checkProducerEpoch and
// checkSequence). cur is a fresh entry (epoch -1) for an unknown producer.
func checkProducerAppend(tp kafka.TopicPartition, cur *ProducerEntry, h record.BatchHeader) error {
	pid, epoch, seq := h.ProducerID, h.ProducerEpoch, h.BaseSequence
	if epoch < cur.Epoch {
		return fmt.Errorf("%w: producer %d in %s sent epoch %d, older than the current epoch %d",
			ErrInvalidProducerEpoch, pid, tp, epoch, cur.Epoch)
	}
	if epoch != cur.Epoch {
		// A new (or first seen) epoch must start its sequence at 0.
		if seq == 0 {
			return nil
		}
		if cur.Epoch != record.NoProducerEpoch {
			return fmt.Errorf("%w: producer %d in %s starts epoch %d (current %d) at sequence %d, not 0",
				ErrOutOfOrderSequence, pid, tp, epoch, cur.Epoch, seq)
		}
		return fmt.Errorf("%w: no state for producer %d in %s and its batch starts at sequence %d; "+
			"its last data may have been removed by retention", ErrUnknownProducerID, pid, tp, seq)
	}
	last := cur.lastSeq()
	if last == record.NoSequence && seq != 0 {
		// Same epoch but no batch known (only a marker is left): Kafka
		// answers UNKNOWN_PRODUCER_ID so that the producer resets.
		return fmt.Errorf("%w: producer %d in %s has epoch %d but no known sequence; batch starts at %d",
			ErrUnknownProducerID, pid, tp, epoch, seq)
	}
	if !inSequence(last, seq) {
		return fmt.Errorf("%w: producer %d in %s sent sequence %d after %d",
			ErrOutOfOrderSequence, pid, tp, seq, last)
	}
	return nil
}

// inSequence reports whether next follows last, wrapping at MaxInt32.
func inSequence(last, next int32) bool {
	return int64(next) == int64(last)+1 || (next == 0 && last == math.MaxInt32)
}

// producerState is a partition's producer table (Kafka's
// ProducerStateManager). Guarded by Log.mu.
type producerState struct {
	producers map[int64]*ProducerEntry
	// unstable are the transactions holding the last stable offset back,
	// by first offset (producer_txn.go); the Log publishes a copy.
	unstable []unstableTxn
	// mapEndOffset is the offset up to which (exclusive) the table
	// reflects the log; lastSnapOffset the offset of the last snapshot
	// written or loaded.
	mapEndOffset   int64
	lastSnapOffset int64
	// verify is the KIP-890 verification state per producer (leader
	// only, in memory; txn_verify_guard.go); verifyGuards the last guard.
	verify       map[int64]*verifyEntry
	verifyGuards uint64
}

func newProducerState() *producerState {
	return &producerState{producers: map[int64]*ProducerEntry{}}
}

// reset empties the table and sets its end offset.
func (ps *producerState) reset(offset int64) {
	clear(ps.producers)
	ps.unstable = ps.unstable[:0]
	ps.mapEndOffset, ps.lastSnapOffset = offset, offset
}

// applyBatch updates the table with an appended batch without validation
// (every origin once checked: Kafka's ProducerAppendInfo.append). For a
// control batch, m is its end-transaction marker or nil (an emptied
// control batch or another control type: no effect, as in Kafka). It
// returns the transaction a marker completed, if any.
func (ps *producerState) applyBatch(h record.BatchHeader, m *record.EndTxnMarker) (completedTxn, bool) {
	if h.ProducerID < 0 {
		return completedTxn{}, false
	}
	if h.IsControl() && m == nil {
		return completedTxn{}, false
	}
	e := ps.producers[h.ProducerID]
	if e == nil {
		e = newProducerEntry(h.ProducerID)
		ps.producers[h.ProducerID] = e
	}
	if h.IsControl() {
		// A transaction marker ends the producer's transaction and may
		// bump its epoch (Kafka's appendEndTxnMarker).
		e.maybeUpdateEpoch(h.ProducerEpoch)
		e.CoordinatorEpoch = m.CoordinatorEpoch
		e.LastTimestamp = h.MaxTimestamp
		first := e.CurrentTxnFirstOffset
		e.CurrentTxnFirstOffset = -1
		if first < 0 {
			return completedTxn{}, false // no open transaction: no effect on LSO or index
		}
		ps.completeTxn(h.ProducerID, h.BaseOffset)
		return completedTxn{pid: h.ProducerID, first: first, last: h.BaseOffset, aborted: !m.Commit}, true
	}
	e.addBatch(h.ProducerEpoch, ProducerBatch{
		FirstSeq: h.BaseSequence, LastSeq: lastSequence(h),
		FirstOffset: h.BaseOffset, LastOffset: h.LastOffset(), Timestamp: h.MaxTimestamp,
	})
	if h.IsTransactional() && e.CurrentTxnFirstOffset < 0 {
		e.CurrentTxnFirstOffset = h.BaseOffset
		ps.beginTxn(h.ProducerID, h.BaseOffset)
	}
	return completedTxn{}, false
}

// removeExpired drops producers idle for at least expirationMs by their
// last batch's timestamp, except those with a transaction open (Kafka
// 2.8's isProducerExpired). It returns how many it dropped.
func (ps *producerState) removeExpired(nowMs, expirationMs int64) int {
	n := 0
	for pid, e := range ps.producers {
		if producerExpired(e, nowMs, expirationMs) {
			delete(ps.producers, pid)
			delete(ps.verify, pid)
			n++
		}
	}
	return n
}

func producerExpired(e *ProducerEntry, nowMs, expirationMs int64) bool {
	return e.CurrentTxnFirstOffset < 0 && nowMs-e.LastTimestamp >= expirationMs
}

// entries returns copies of the entries sorted by producer id.
func (ps *producerState) entries() []ProducerEntry {
	out := make([]ProducerEntry, 0, len(ps.producers))
	for _, e := range ps.producers {
		out = append(out, *e.clone())
	}
	sort.Slice(out, func(i, j int) bool { return out[i].ProducerID < out[j].ProducerID })
	return out
}

// producerCheck is the outcome of validating a leader append's batches.
type producerCheck struct {
	// duplicate is set when the (single) batch repeats one already
	// appended; nothing is appended then.
	duplicate *ProducerBatch
}

// checkLeaderBatches validates the idempotent batches of a client append
// against the table (Kafka's Log.analyzeAndValidateProducerState with
// AppendOrigin.Client). Entries are validated as updated by the earlier
// batches of the same append. A batch repeating one of the producer's last
// five batches makes the append a duplicate.
func (ps *producerState) checkLeaderBatches(tp kafka.TopicPartition, headers []record.BatchHeader) (producerCheck, error) {
	var pending map[int64]*ProducerEntry
	for i, h := range headers {
		if h.ProducerID < 0 {
			continue
		}
		if h.IsControl() {
			// A transaction marker is checked for fencing only (Kafka's
			// appendEndTxnMarker); it carries no sequence.
			if cur := ps.producers[h.ProducerID]; cur != nil && h.ProducerEpoch < cur.Epoch {
				return producerCheck{}, fmt.Errorf("%w: marker of producer %d in %s has epoch %d, older than %d",
					ErrInvalidProducerEpoch, h.ProducerID, tp, h.ProducerEpoch, cur.Epoch)
			}
			continue
		}
		cur := ps.producers[h.ProducerID]
		if cur != nil {
			if dup, ok := cur.findDuplicate(h); ok {
				d := new(ProducerBatch) // allocated on this path only
				*d = dup
				return producerCheck{duplicate: d}, nil
			}
		}
		if p := pending[h.ProducerID]; p != nil {
			cur = p
		} else if cur == nil {
			cur = newProducerEntry(h.ProducerID)
		}
		if err := checkProducerAppend(tp, cur, h); err != nil {
			return producerCheck{}, err
		}
		if err := ps.checkVerified(tp, cur, h); err != nil { // KIP-890 guard (txn_verify_guard.go)
			return producerCheck{}, err
		}
		if !h.IsTransactional() && cur.CurrentTxnFirstOffset >= 0 {
			// Kafka 2.8 appendDataBatch: "Expected transactional write".
			return producerCheck{}, fmt.Errorf("%w: non-transactional batch from producer %d in %s while its transaction from offset %d is open",
				ErrInvalidTxnState, h.ProducerID, tp, cur.CurrentTxnFirstOffset)
		}
		if !producerAppearsAfter(headers[i+1:], h.ProducerID) {
			continue // the common case: one batch per producer, nothing to stage
		}
		if pending == nil {
			pending = map[int64]*ProducerEntry{}
		}
		next := cur.clone()
		// Offsets are not assigned yet; only sequences and whether a
		// transaction is open matter here.
		next.addBatch(h.ProducerEpoch, ProducerBatch{FirstSeq: h.BaseSequence, LastSeq: lastSequence(h)})
		if h.IsTransactional() && next.CurrentTxnFirstOffset < 0 {
			next.CurrentTxnFirstOffset = 0
		}
		pending[h.ProducerID] = next
	}
	return producerCheck{}, nil
}

// producerAppearsAfter reports whether a header of rest has producer id pid.
func producerAppearsAfter(rest []record.BatchHeader, pid int64) bool {
	for _, h := range rest {
		if h.ProducerID == pid {
			return true
		}
	}
	return false
}

// validateProducerFields is Kafka's LogValidator check that a batch with a
// producer id carries a sequence number.
func validateProducerFields(h record.BatchHeader) error {
	if h.ProducerID >= 0 && !h.IsControl() && h.BaseSequence < 0 {
		return fmt.Errorf("%w: sequence number %d in a batch of producer %d",
			record.ErrInvalidRecord, h.BaseSequence, h.ProducerID)
	}
	return nil
}
