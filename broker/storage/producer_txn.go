package storage

import (
	"errors"
	"fmt"
	"sort"

	"samsa/broker/record"
	"samsa/kafka"
)

// Errors of transactional appends (Kafka 2.8 ProducerAppendInfo).
var (
	// ErrInvalidTxnState: a non-transactional batch from a producer whose
	// transaction is open in this partition (InvalidTxnStateException,
	// INVALID_TXN_STATE).
	ErrInvalidTxnState = errors.New("storage: invalid transaction state")
	// ErrTransactionCoordinatorFenced: a transaction marker carries an older
	// coordinator epoch than the producer's last marker
	// (TransactionCoordinatorFencedException, TRANSACTION_COORDINATOR_FENCED).
	ErrTransactionCoordinatorFenced = errors.New("storage: transaction coordinator fenced")
)

// unstableTxn is a transaction that holds the last stable offset back:
// open (last < 0), or completed by a marker at offset last that the high
// watermark has not passed yet (Kafka's ongoingTxns and unreplicatedTxns).
type unstableTxn struct {
	pid, first, last int64
}

// completedTxn is a transaction a marker just ended (Kafka's CompletedTxn).
type completedTxn struct {
	pid, first, last int64 // last: the marker's offset
	aborted          bool
}

// firstUnstable returns the first offset of the oldest transaction in list
// (sorted by first offset) that is open or whose marker is at or past hw,
// and whether there is one (Kafka's firstUnstableOffset, with the
// unreplicated set pruned at hw).
func firstUnstable(list []unstableTxn, hw int64) (int64, bool) {
	for i := range list {
		if t := &list[i]; t.last < 0 || t.last >= hw {
			return t.first, true
		}
	}
	return 0, false
}

// beginTxn records that pid opened a transaction at first (appends come in
// offset order, so the list stays sorted).
func (ps *producerState) beginTxn(pid, first int64) {
	ps.unstable = append(ps.unstable, unstableTxn{pid: pid, first: first, last: -1})
}

// completeTxn marks pid's open transaction as ended by the marker at last.
func (ps *producerState) completeTxn(pid, last int64) {
	for i := range ps.unstable {
		if t := &ps.unstable[i]; t.pid == pid && t.last < 0 {
			t.last = last
			return
		}
	}
}

// lastStableOffsetFor is the last_stable_offset of c's .txnindex entry
// (Kafka's ProducerStateManager.lastStableOffset): the first offset of the
// oldest transaction of another producer still open, else the marker's
// offset + 1.
func (ps *producerState) lastStableOffsetFor(c completedTxn) int64 {
	for _, t := range ps.unstable {
		if t.last < 0 && t.pid != c.pid {
			return t.first
		}
	}
	return c.last + 1
}

// rebuildUnstable recomputes the open transactions from the entries (after
// a snapshot load); completed-but-unreplicated ones are not in a snapshot.
func (ps *producerState) rebuildUnstable() {
	ps.unstable = ps.unstable[:0]
	for pid, e := range ps.producers {
		if e.CurrentTxnFirstOffset >= 0 {
			ps.unstable = append(ps.unstable, unstableTxn{pid: pid, first: e.CurrentTxnFirstOffset, last: -1})
		}
	}
	sort.Slice(ps.unstable, func(i, j int) bool { return ps.unstable[i].first < ps.unstable[j].first })
}

// pruneUnstable drops completed transactions whose marker is below hw.
func (ps *producerState) pruneUnstable(hw int64) {
	keep := ps.unstable[:0]
	for _, t := range ps.unstable {
		if t.last < 0 || t.last >= hw {
			keep = append(keep, t)
		}
	}
	clear(ps.unstable[len(keep):])
	ps.unstable = keep
}

// checkEndTxnMarker validates a marker from the transaction coordinator
// against the producer's entry (Kafka 2.8 appendEndTxnMarker with
// AppendOrigin.Coordinator): an older producer epoch is
// ErrInvalidProducerEpoch, an older coordinator epoch
// ErrTransactionCoordinatorFenced.
func (ps *producerState) checkEndTxnMarker(tp kafka.TopicPartition, pid int64, epoch int16, m record.EndTxnMarker) error {
	cur := ps.producers[pid]
	if cur == nil {
		return nil
	}
	if epoch < cur.Epoch {
		return fmt.Errorf("%w: marker of producer %d in %s has epoch %d, older than %d",
			ErrInvalidProducerEpoch, pid, tp, epoch, cur.Epoch)
	}
	if m.CoordinatorEpoch < cur.CoordinatorEpoch {
		return fmt.Errorf("%w: marker of producer %d in %s has coordinator epoch %d, older than %d",
			ErrTransactionCoordinatorFenced, pid, tp, m.CoordinatorEpoch, cur.CoordinatorEpoch)
	}
	return nil
}

// markerOf reads the end-transaction marker of the control batch h at pos
// in f; ok is false for an empty control batch (its transaction was
// cleaned away) or one of another control type, which Kafka ignores.
func markerOf(f File, pos int64, h record.BatchHeader) (m record.EndTxnMarker, ok bool, err error) {
	if h.NumRecords == 0 {
		return m, false, nil
	}
	// A marker batch is about 80 bytes; anything much larger is not one.
	if h.Size() > 64<<10 {
		return m, false, fmt.Errorf("%w: control batch of %d bytes at %d", record.ErrInvalidRecord, h.Size(), pos)
	}
	buf := make([]byte, h.Size())
	if n, rerr := f.ReadAt(buf, pos); n < len(buf) {
		return m, false, storageError("read control batch", rerr)
	}
	return batchMarker(record.Batch(buf))
}

// batchMarker decodes the marker of control batch b (see markerOf).
func batchMarker(b record.Batch) (m record.EndTxnMarker, ok bool, err error) {
	recs, err := b.Records(0)
	if err != nil || len(recs) == 0 {
		return m, false, err
	}
	typ, err := record.ParseControlKey(recs[0].Key)
	if err != nil {
		return m, false, err
	}
	if typ != record.ControlAbort && typ != record.ControlCommit {
		return m, false, nil
	}
	m, err = record.ParseEndTxnMarker(recs[0].Key, recs[0].Value)
	return m, err == nil, err
}
