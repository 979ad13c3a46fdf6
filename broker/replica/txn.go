package replica

import (
	"fmt"

	"samsa/broker/record"
	"samsa/broker/storage"
	"samsa/kafka"
)

// readCommitted serves a read_committed consumer read of l (Kafka's
// readRecords with FetchTxnCommitted): up to the last stable offset, with
// the aborted transactions the returned batches overlap. res carries the
// offsets already read.
func readCommitted(l *storage.Log, rp ReadParams, res ReadResult) (ReadResult, bool, bool, error) {
	rr, lso, aborted, err := l.ReadCommitted(rp.FetchOffset, rp.MaxBytes, rp.MinOneBatch)
	res.LastStableOffset = lso
	res.AbortedTransactions = aborted
	if err != nil {
		return res, false, false, err
	}
	res.Records = rr.Regions
	return res, false, false, nil
}

// TxnMarker is one WriteTxnMarkers entry for one partition.
type TxnMarker struct {
	ProducerID       int64
	ProducerEpoch    int16
	Commit           bool
	CoordinatorEpoch int32
}

// AppendTxnMarker appends a COMMIT or ABORT control batch to tp as its
// leader (Kafka's appendRecords with AppendOrigin.Coordinator and acks -1,
// for WriteTxnMarkers): min.insync.replicas is checked first
// (ErrNotEnoughReplicas); the caller waits with WaitReplicated. Errors:
// ErrUnknownPartition, ErrNotLeader, ErrNotEnoughReplicas,
// storage.ErrInvalidProducerEpoch, storage.ErrTransactionCoordinatorFenced,
// storage errors.
func (m *Manager) AppendTxnMarker(tp kafka.TopicPartition, mk TxnMarker) (AppendResult, error) {
	p, err := m.getPartition(tp)
	if err != nil {
		return AppendResult{}, err
	}
	res, hwMoved, err := p.appendTxnMarker(mk)
	if err != nil {
		return res, err
	}
	m.Fetch.Notify(tp)
	if hwMoved {
		m.Produce.Notify(tp)
	}
	return res, nil
}

func (p *Partition) appendTxnMarker(mk TxnMarker) (AppendResult, bool, error) {
	p.mu.RLock()
	defer p.mu.RUnlock()
	if !p.isLeaderLocked() {
		return AppendResult{}, false, fmt.Errorf("%w: %s (leader %d)", ErrNotLeader, p.tp, p.mu.leader)
	}
	if len(p.mu.isr) < p.mu.minISR {
		return AppendResult{}, false, fmt.Errorf("%w: %s: ISR %v, min.insync.replicas %d",
			ErrNotEnoughReplicas, p.tp, p.mu.isr, p.mu.minISR)
	}
	info, err := p.mu.data.AppendEndTxnMarker(mk.ProducerID, mk.ProducerEpoch,
		record.EndTxnMarker{Commit: mk.Commit, CoordinatorEpoch: mk.CoordinatorEpoch}, p.mu.leaderEpoch)
	if err != nil {
		return AppendResult{}, false, err
	}
	res := AppendResult{BaseOffset: info.FirstOffset, LastOffset: info.LastOffset, LogAppendTime: -1,
		LogStartOffset: info.LogStartOffset}
	return res, p.maybeIncrementHighWatermarkLocked(), nil
}

// ProducerStates returns tp's producer table from this replica's log,
// leader or follower (DescribeProducers is answered by any replica, KIP-664).
// Errors: ErrUnknownPartition, ErrNotLeader (no local log).
func (m *Manager) ProducerStates(tp kafka.TopicPartition) ([]storage.ProducerEntry, error) {
	p, err := m.getPartition(tp)
	if err != nil {
		return nil, err
	}
	p.mu.RLock()
	defer p.mu.RUnlock()
	if p.mu.data == nil {
		return nil, fmt.Errorf("%w: %s (no local log)", ErrNotLeader, tp)
	}
	return p.mu.data.ProducerStates(), nil
}
