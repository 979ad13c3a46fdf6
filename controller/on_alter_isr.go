package controller

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"slices"

	"github.com/sirupsen/logrus"

	"samsa/kafka"
)

// AlterIsr (API 56, Kafka 2.7+ with IBP >= 2.7-IV2, reference §2.4): partition leaders ask
// the controller to write their ISR changes instead of writing /state themselves.

// Per-partition errors of AlterIsr; the broker maps them to Kafka codes.
var (
	// ErrFencedLeaderEpoch: the request's leader epoch is older than the controller's
	// (FENCED_LEADER_EPOCH).
	ErrFencedLeaderEpoch = errors.New("controller: fenced leader epoch")
	// ErrInvalidUpdateVersion: the request's ISR version (zkVersion) is not the current one
	// (INVALID_UPDATE_VERSION).
	ErrInvalidUpdateVersion = errors.New("controller: invalid update version")
)

// IsrChange is one partition of an AlterIsr request.
type IsrChange struct {
	LeaderEpoch int32
	Isr         []int32
	ZkVersion   int32 // CurrentIsrVersion: the state znode version the leader knows
}

// IsrResult is one partition of an AlterIsr response: the partition's state after the
// request (when Err is nil) or its error.
type IsrResult struct {
	State LeaderAndIsr
	Err   error
}

type alterIsrResult struct {
	results map[kafka.TopicPartition]IsrResult
	err     error
}

// AlterIsr applies a leader's ISR changes (Kafka's processAlterIsr): the broker must be live
// with exactly brokerEpoch (else ErrStaleBrokerEpoch); per partition, an older leader epoch
// is ErrFencedLeaderEpoch, an unknown partition ErrUnknownTopicOrPartition, a stale
// ZkVersion ErrInvalidUpdateVersion; a request equal to the current state returns it
// unchanged. Accepted changes are written (fenced, conditional on ZkVersion) and announced
// with UpdateMetadata to every broker. Errors: ErrNotController, ErrStaleBrokerEpoch, ctx's.
func (c *Controller) AlterIsr(ctx context.Context, brokerID int32, brokerEpoch int64, changes map[kafka.TopicPartition]IsrChange) (map[kafka.TopicPartition]IsrResult, error) {
	reply := make(chan alterIsrResult, 1)
	c.enqueue(alterIsrEvent{brokerID: brokerID, brokerEpoch: brokerEpoch, changes: changes, reply: reply})
	r, err := awaitReply(ctx, c, reply)
	if err != nil {
		return nil, err
	}
	return r.results, r.err
}

func (c *Controller) processAlterIsr(e alterIsrEvent) error {
	if !c.active.Load() {
		e.reply <- alterIsrResult{err: ErrNotController}
		return nil
	}
	cc := c.cc
	b, ok := cc.liveBrokers[e.brokerID]
	if !ok || b.Epoch != e.brokerEpoch {
		e.reply <- alterIsrResult{err: fmt.Errorf("%w: broker %d epoch %d", ErrStaleBrokerEpoch, e.brokerID, e.brokerEpoch)}
		return nil
	}
	results := make(map[kafka.TopicPartition]IsrResult, len(e.changes))
	toWrite := make(map[kafka.TopicPartition]LeaderAndIsr)
	for _, tp := range slices.SortedFunc(maps.Keys(e.changes), kafka.ComparePartitions) {
		ch := e.changes[tp]
		cur, ok := cc.leadership[tp]
		switch {
		case !ok:
			results[tp] = IsrResult{Err: ErrUnknownTopicOrPartition}
		case ch.LeaderEpoch < cur.LeaderEpoch:
			results[tp] = IsrResult{Err: ErrFencedLeaderEpoch}
		case e.brokerID == cur.Leader && ch.LeaderEpoch == cur.LeaderEpoch && slices.Equal(ch.Isr, cur.Isr):
			results[tp] = IsrResult{State: cur.clone()} // already so
		default:
			toWrite[tp] = LeaderAndIsr{Leader: e.brokerID, LeaderEpoch: ch.LeaderEpoch, Isr: slices.Clone(ch.Isr),
				ControllerEpoch: cc.epoch, ZkVersion: ch.ZkVersion}
		}
	}
	var written []kafka.TopicPartition
	if len(toWrite) > 0 {
		res, err := c.store.UpdatePartitionStates(cc.epochZkVersion, toWrite)
		if err != nil {
			e.reply <- alterIsrResult{err: ErrNotController}
			return fmt.Errorf("controller: write ISR changes: %w", err)
		}
		for _, tp := range slices.SortedFunc(maps.Keys(toWrite), kafka.ComparePartitions) {
			r, ok := res[tp]
			switch {
			case ok && r.Err == nil:
				nl := toWrite[tp]
				nl.ZkVersion = r.ZkVersion
				cc.leadership[tp] = nl
				results[tp] = IsrResult{State: nl.clone()}
				written = append(written, tp)
				c.stateLog(tp).WithFields(logrus.Fields{"leader": nl.Leader, "leader_epoch": nl.LeaderEpoch, "isr": nl.Isr}).
					Info("controller: ISR changed by AlterIsr")
			case ok && isZkVersionConflict(r.Err):
				results[tp] = IsrResult{Err: ErrInvalidUpdateVersion}
			default:
				results[tp] = IsrResult{Err: fmt.Errorf("controller: write ISR of %s: %w", tp, r.Err)}
			}
		}
	}
	c.batch.addUpdateMetadata(cc.liveBrokerIDs(), slices.SortedFunc(maps.Keys(e.changes), kafka.ComparePartitions))
	e.reply <- alterIsrResult{results: results}
	for _, tp := range written {
		if err := c.maybeCompleteReassignment(tp); err != nil {
			return err
		}
	}
	return nil
}
