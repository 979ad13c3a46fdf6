package replica

import (
	"context"
	"errors"
	"fmt"
	"time"

	"samsa/broker/purgatory"
	"samsa/kafka"
)

// AppendResult is the outcome of a leader append.
type AppendResult struct {
	BaseOffset     int64
	LastOffset     int64
	LogAppendTime  int64 // -1 unless the topic uses LogAppendTime
	LogStartOffset int64
}

// AppendAsLeader validates and appends batches (record batches v2; older
// formats are converted by the caller; rewritten in place) to tp's log, assigning offsets
// (Kafka Partition.appendRecordsToLeader). With requiredAcks == -1 it
// first checks min.insync.replicas (ErrNotEnoughReplicas). It does not wait
// for replication; see WaitReplicated. Errors: ErrUnknownPartition,
// ErrNotLeader, ErrNotEnoughReplicas, record and storage validation errors.
func (m *Manager) AppendAsLeader(tp kafka.TopicPartition, batches []byte, requiredAcks int16) (AppendResult, error) {
	p, err := m.getPartition(tp)
	if err != nil {
		return AppendResult{}, err
	}
	res, hwMoved, err := p.appendAsLeader(batches, requiredAcks)
	if err != nil {
		return res, err
	}
	m.Fetch.Notify(tp) // new data for followers (and consumers if the HW moved)
	if hwMoved {
		m.Produce.Notify(tp)
	}
	return res, nil
}

func (p *Partition) appendAsLeader(batches []byte, requiredAcks int16) (AppendResult, bool, error) {
	p.mu.RLock()
	defer p.mu.RUnlock()
	if !p.isLeaderLocked() {
		return AppendResult{}, false, fmt.Errorf("%w: %s (leader %d)", ErrNotLeader, p.tp, p.mu.leader)
	}
	if requiredAcks == -1 && len(p.mu.isr) < p.mu.minISR {
		return AppendResult{}, false, fmt.Errorf("%w: %s: ISR %v, min.insync.replicas %d",
			ErrNotEnoughReplicas, p.tp, p.mu.isr, p.mu.minISR)
	}
	info, err := p.mu.data.AppendAsLeader(batches, p.mu.leaderEpoch)
	if err != nil {
		return AppendResult{}, false, err
	}
	res := AppendResult{
		BaseOffset:     info.FirstOffset,
		LastOffset:     info.LastOffset,
		LogAppendTime:  info.LogAppendTime,
		LogStartOffset: info.LogStartOffset,
	}
	return res, p.maybeIncrementHighWatermarkLocked(), nil
}

// WaitReplicated parks until tp's high watermark reaches requiredOffset
// (the produced batch's last offset + 1), for acks=all (Kafka
// DelayedProduce). It returns nil when replicated, ErrTimeout at deadline,
// ErrNotLeader if leadership moved away, ErrNotEnoughReplicasAfterAppend if
// the ISR fell below min.insync.replicas, or ctx's error.
func (m *Manager) WaitReplicated(ctx context.Context, tp kafka.TopicPartition, requiredOffset int64, deadline time.Time) error {
	var outcome error
	check := func() bool {
		p, err := m.getPartition(tp)
		if err != nil || m.closed.Load() {
			outcome = leaderGone(tp, err)
			return true
		}
		p.mu.RLock()
		defer p.mu.RUnlock()
		if !p.isLeaderLocked() {
			outcome = fmt.Errorf("%w: %s", ErrNotLeader, tp)
			return true
		}
		if p.mu.data.HighWatermark() >= requiredOffset {
			if len(p.mu.isr) < p.mu.minISR {
				outcome = fmt.Errorf("%w: %s", ErrNotEnoughReplicasAfterAppend, tp)
			}
			return true
		}
		return false
	}
	// The later partitions of a request are usually replicated by the time
	// the wait reaches them (they were appended together): one look
	// without registering spares the purgatory's lock and watch set. Only
	// when it fails does Wait register and look again, so no Notify is
	// lost.
	if check() {
		return outcome
	}
	err := m.Produce.Wait(ctx, deadline, []kafka.TopicPartition{tp}, check)
	switch {
	case errors.Is(err, purgatory.ErrTimeout):
		return fmt.Errorf("%w: %s waiting for offset %d", ErrTimeout, tp, requiredOffset)
	case err != nil:
		return err
	}
	return outcome
}
