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

// Partition reassignment, as Kafka 2.8 (KIP-455, reference §3.9). RS = replicas, ORS/TRS =
// original/target replicas, AR = adding = TRS − ORS, RR = removing = ORS − TRS.
//
//   - Phase U: write RS = TRS + (ORS − TRS), AR and RR to /brokers/topics/<t> (so that a new
//     controller can resume), then to memory; replicas a replaced reassignment was adding
//     and the new one does not want are stopped.
//   - Phase A (TRS ⊄ ISR): bump the leader epoch, LeaderAndIsr to RS (IsNew for AR), AR →
//     NewReplica. The partition's state znode is watched; ISR changes re-check completion.
//   - Phase B (TRS ⊆ ISR): AR → Online; RS = TRS; move the leader if it is not in TRS or is
//     dead (Reassign strategy), else bump the epoch; RR → Offline → deleted; write RS = TRS
//     with empty AR/RR; drop the partition from /admin/reassign_partitions; UpdateMetadata
//     to all; resume a topic deletion that waited for it.
//
// Triggers: the AlterPartitionReassignments API (Controller.AlterPartitionReassignments), the
// /admin/reassign_partitions znode (kafka-reassign-partitions.sh --zookeeper), failover
// (reassignments persisted in the topic znodes and the znode) and brokers starting.

// Errors of AlterPartitionReassignments; the broker maps them to Kafka codes.
var (
	// ErrInvalidReplicaAssignment: empty, duplicate or negative replicas, or a new replica
	// on a broker that is not alive (INVALID_REPLICA_ASSIGNMENT).
	ErrInvalidReplicaAssignment = errors.New("controller: invalid replica assignment")
	// ErrNoReassignmentInProgress: a cancellation for a partition that is not being
	// reassigned (NO_REASSIGNMENT_IN_PROGRESS).
	ErrNoReassignmentInProgress = errors.New("controller: no partition reassignment is in progress")
)

// Reassignment is an ongoing partition reassignment (ListPartitionReassignments).
type Reassignment struct {
	Replicas, Adding, Removing []int32
}

type alterReassignmentsResult struct {
	results map[kafka.TopicPartition]error
	err     error
}

type listReassignmentsResult struct {
	reassignments map[kafka.TopicPartition]Reassignment
	err           error
}

// AlterPartitionReassignments starts, replaces or (with a nil target) cancels reassignments
// (API key 45). The result has one entry per partition: nil, ErrUnknownTopicOrPartition,
// ErrInvalidReplicaAssignment or ErrNoReassignmentInProgress. The error is ErrNotController
// or ctx's. It returns once the reassignments have started, not when they complete.
func (c *Controller) AlterPartitionReassignments(ctx context.Context, targets map[kafka.TopicPartition][]int32) (map[kafka.TopicPartition]error, error) {
	reply := make(chan alterReassignmentsResult, 1)
	c.enqueue(alterReassignmentsEvent{targets: targets, reply: reply})
	r, err := awaitReply(ctx, c, reply)
	if err != nil {
		return nil, err
	}
	return r.results, r.err
}

// ListPartitionReassignments returns the reassignments in progress among tps (all when
// tps is nil) (API key 46). The error is ErrNotController or ctx's.
func (c *Controller) ListPartitionReassignments(ctx context.Context, tps []kafka.TopicPartition) (map[kafka.TopicPartition]Reassignment, error) {
	reply := make(chan listReassignmentsResult, 1)
	c.enqueue(listReassignmentsEvent{tps: tps, reply: reply})
	r, err := awaitReply(ctx, c, reply)
	if err != nil {
		return nil, err
	}
	return r.reassignments, r.err
}

func (c *Controller) processListReassignments(e listReassignmentsEvent) {
	if !c.active.Load() {
		e.reply <- listReassignmentsResult{err: ErrNotController}
		return
	}
	cc := c.cc
	tps := e.tps
	if tps == nil {
		tps = cc.allPartitions()
	}
	out := make(map[kafka.TopicPartition]Reassignment)
	for _, tp := range tps {
		if cc.isBeingReassigned(tp) {
			out[tp] = Reassignment{Replicas: slices.Clone(cc.replicas(tp)), Adding: slices.Clone(cc.adding[tp]), Removing: slices.Clone(cc.removing[tp])}
		}
	}
	e.reply <- listReassignmentsResult{reassignments: out}
}

func (c *Controller) processAlterReassignments(e alterReassignmentsEvent) error {
	if !c.active.Load() {
		e.reply <- alterReassignmentsResult{err: ErrNotController}
		return nil
	}
	results := make(map[kafka.TopicPartition]error, len(e.targets))
	plans := make(map[kafka.TopicPartition][]int32)
	for _, tp := range slices.SortedFunc(maps.Keys(e.targets), kafka.ComparePartitions) {
		target, err := c.buildReassignment(tp, e.targets[tp], e.targets[tp] == nil)
		if err != nil {
			results[tp] = err
			continue
		}
		plans[tp] = target
	}
	started, err := c.triggerReassignments(plans)
	maps.Copy(results, started)
	if err != nil {
		e.reply <- alterReassignmentsResult{err: ErrNotController}
		return err
	}
	e.reply <- alterReassignmentsResult{results: results}
	return nil
}

// buildReassignment validates a request and returns the target replica set (Kafka's
// validateReplicas and maybeBuildReassignment); cancel reverts to the original replicas.
func (c *Controller) buildReassignment(tp kafka.TopicPartition, target []int32, cancel bool) ([]int32, error) {
	cc := c.cc
	replicas := cc.replicas(tp)
	if len(replicas) == 0 || cc.isQueuedForDeletion(tp.Topic) {
		return nil, ErrUnknownTopicOrPartition
	}
	if cancel {
		if !cc.isBeingReassigned(tp) {
			return nil, ErrNoReassignmentInProgress
		}
		return OriginReplicas(replicas, cc.adding[tp]), nil
	}
	if len(target) == 0 {
		return nil, fmt.Errorf("%w: empty replica list", ErrInvalidReplicaAssignment)
	}
	for i, r := range target {
		if r < 0 || slices.Contains(target[:i], r) {
			return nil, fmt.Errorf("%w: %v", ErrInvalidReplicaAssignment, target)
		}
	}
	_, adding, _ := ReassignTo(OriginReplicas(replicas, cc.adding[tp]), target)
	for _, r := range adding {
		if !cc.isLive(r) {
			return nil, fmt.Errorf("%w: broker %d is not alive", ErrInvalidReplicaAssignment, r)
		}
	}
	return slices.Clone(target), nil
}

// triggerReassignments starts each planned reassignment (Kafka's
// maybeTriggerPartitionReassignment). Only ErrControllerMoved and ZooKeeper failures are
// returned as the error; per-partition outcomes are in the map.
func (c *Controller) triggerReassignments(plans map[kafka.TopicPartition][]int32) (map[kafka.TopicPartition]error, error) {
	results := make(map[kafka.TopicPartition]error, len(plans))
	for _, tp := range slices.SortedFunc(maps.Keys(plans), kafka.ComparePartitions) {
		if err := c.onPartitionReassignment(tp, plans[tp]); err != nil {
			if isControllerMoved(err) {
				return results, err
			}
			c.stateLog(tp).WithError(err).Error("controller: partition reassignment failed")
			results[tp] = err
			continue
		}
		results[tp] = nil
	}
	return results, nil
}

// onPartitionReassignment is Kafka's onPartitionReassignment for tp towards target (TRS).
func (c *Controller) onPartitionReassignment(tp kafka.TopicPartition, target []int32) error {
	cc := c.cc
	if cc.isQueuedForDeletion(tp.Topic) {
		cc.topicsIneligibleForDeletion[tp.Topic] = struct{}{} // resumed at completion
	}
	origin := OriginReplicas(cc.replicas(tp), cc.adding[tp])
	replicas, adding, removing := ReassignTo(origin, target)
	if err := c.updateCurrentReassignment(tp, replicas, adding, removing); err != nil {
		return err
	}
	complete, err := c.isReassignmentComplete(tp)
	if err != nil {
		return err
	}
	if !complete {
		// Phase A.
		if err := c.updateLeaderEpochAndSendRequest(tp); err != nil {
			return err
		}
		var added []PartitionReplica
		for _, r := range adding {
			added = append(added, PartitionReplica{tp, r})
		}
		return c.handleReplicaStateChanges(added, NewReplica)
	}
	// Phase B.
	var added []PartitionReplica
	for _, r := range adding {
		added = append(added, PartitionReplica{tp, r})
	}
	if err := c.handleReplicaStateChanges(added, OnlineReplica); err != nil {
		return err
	}
	cc.setAssignment(tp, target)
	cc.setReassignmentSets(tp, nil, nil)
	if err := c.moveReassignedPartitionLeaderIfRequired(tp, target); err != nil {
		return err
	}
	if err := c.stopRemovedReplicas(tp, removing); err != nil {
		return err
	}
	if err := c.store.SetTopicAssignment(cc.epochZkVersion, tp.Topic, cc.topicAssignment(tp.Topic)); err != nil {
		return fmt.Errorf("controller: write reassigned assignment: %w", err)
	}
	if cancel := c.reassignWatches[tp]; cancel != nil {
		cancel()
	}
	delete(c.reassignWatches, tp)
	if err := c.removeFromZkReassignment(func(x kafka.TopicPartition, replicas []int32) bool {
		return x == tp && slices.Equal(replicas, target)
	}); err != nil {
		return err
	}
	c.stateLog(tp).WithField("replicas", target).Info("controller: partition reassignment completed")
	c.batch.addUpdateMetadata(cc.liveBrokerIDs(), []kafka.TopicPartition{tp})
	if !cc.topicBeingReassigned(tp.Topic) {
		return c.resumeDeletionForTopics([]string{tp.Topic})
	}
	return nil
}

// updateCurrentReassignment is Phase U: persist the new sets, then record them, and stop
// replicas an earlier reassignment added that the new one drops.
func (c *Controller) updateCurrentReassignment(tp kafka.TopicPartition, replicas, adding, removing []int32) error {
	cc := c.cc
	current := cc.replicas(tp)
	if !slices.Equal(current, replicas) || !slices.Equal(cc.adding[tp], adding) || !slices.Equal(cc.removing[tp], removing) {
		unneeded := filter(current, func(r int32) bool { return !contains(replicas, r) })
		cc.setAssignment(tp, replicas)
		cc.setReassignmentSets(tp, adding, removing)
		if err := c.store.SetTopicAssignment(cc.epochZkVersion, tp.Topic, cc.topicAssignment(tp.Topic)); err != nil {
			return fmt.Errorf("controller: write reassignment: %w", err)
		}
		c.stateLog(tp).WithFields(logrus.Fields{"replicas": replicas, "adding": adding, "removing": removing}).
			Info("controller: partition reassignment started")
		if len(unneeded) > 0 {
			if err := c.stopRemovedReplicas(tp, unneeded); err != nil {
				return err
			}
		}
	}
	if _, ok := c.reassignWatches[tp]; !ok && cc.isBeingReassigned(tp) {
		c.reassignWatches[tp] = c.store.WatchPartitionState(tp, func() { c.enqueue(reassignmentIsrChangeEvent{tp: tp}) })
	}
	return nil
}

// isReassignmentComplete: no reassignment, or TRS ⊆ ISR as stored in ZooKeeper.
func (c *Controller) isReassignmentComplete(tp kafka.TopicPartition) (bool, error) {
	cc := c.cc
	if !cc.isBeingReassigned(tp) {
		return true, nil
	}
	states, err := c.store.PartitionStates([]kafka.TopicPartition{tp})
	if err != nil {
		return false, fmt.Errorf("controller: read partition state: %w", err)
	}
	st, ok := states[tp]
	if !ok {
		return false, nil
	}
	cc.leadership[tp] = st
	for _, r := range TargetReplicas(cc.replicas(tp), cc.removing[tp]) {
		if !contains(st.Isr, r) {
			return false, nil
		}
	}
	return true, nil
}

// updateLeaderEpochAndSendRequest bumps the leader epoch (same leader and ISR) and sends
// LeaderAndIsr to the origin replicas, and with IsNew to the adding ones.
func (c *Controller) updateLeaderEpochAndSendRequest(tp kafka.TopicPartition) error {
	cc := c.cc
	states, err := c.store.PartitionStates([]kafka.TopicPartition{tp})
	if err != nil {
		return fmt.Errorf("controller: read partition state: %w", err)
	}
	st, ok := states[tp]
	if !ok {
		return fmt.Errorf("controller: partition %s has no state", tp)
	}
	if st.ControllerEpoch > cc.epoch {
		return fmt.Errorf("controller: state of %s was written by a newer controller (epoch %d)", tp, st.ControllerEpoch)
	}
	nl := st.newLeaderAndIsr(st.Leader, st.Isr)
	nl.ControllerEpoch = cc.epoch
	results, err := c.store.UpdatePartitionStates(cc.epochZkVersion, map[kafka.TopicPartition]LeaderAndIsr{tp: nl})
	if err != nil {
		return fmt.Errorf("controller: update partition state: %w", err)
	}
	r := results[tp]
	if r.Err != nil {
		return fmt.Errorf("controller: bump leader epoch of %s: %w", tp, r.Err)
	}
	nl.ZkVersion = r.ZkVersion
	cc.leadership[tp] = nl
	c.stateLog(tp).WithFields(logrus.Fields{"leader": nl.Leader, "leader_epoch": nl.LeaderEpoch, "isr": nl.Isr}).
		Info("controller: bumped leader epoch for reassignment")
	replicas := cc.replicas(tp)
	c.batch.addLeaderAndIsr(cc, OriginReplicas(replicas, cc.adding[tp]), tp, nl, replicas, false)
	c.batch.addLeaderAndIsr(cc, cc.adding[tp], tp, nl, replicas, true)
	return nil
}

// moveReassignedPartitionLeaderIfRequired elects a leader among TRS when the current one is
// not in it or is dead; otherwise it bumps the leader epoch so that every replica learns the
// new replica set.
func (c *Controller) moveReassignedPartitionLeaderIfRequired(tp kafka.TopicPartition, target []int32) error {
	cc := c.cc
	l := cc.leadership[tp]
	if contains(target, l.Leader) && cc.isReplicaOnline(l.Leader, tp) {
		return c.updateLeaderEpochAndSendRequest(tp)
	}
	if cc.partitionStates[tp] == NewPartition {
		return nil
	}
	_, err := c.handlePartitionStateChanges([]kafka.TopicPartition{tp}, OnlinePartition, electReassign)
	return err
}

// stopRemovedReplicas takes removed replicas out: Offline (ISR shrink, StopReplica), then
// deletion (StopReplica delete=true), then forgotten (Kafka's
// stopRemovedReplicasOfReassignedPartition; it does not wait for the deletes).
func (c *Controller) stopRemovedReplicas(tp kafka.TopicPartition, removed []int32) error {
	var rs []PartitionReplica
	for _, r := range removed {
		rs = append(rs, PartitionReplica{tp, r})
	}
	for _, target := range []ReplicaState{OfflineReplica, ReplicaDeletionStarted, ReplicaDeletionSuccessful, NonExistentReplica} {
		if err := c.handleReplicaStateChanges(rs, target); err != nil {
			return err
		}
	}
	return nil
}

// maybeCompleteReassignment re-checks a reassigning partition after an ISR change.
func (c *Controller) maybeCompleteReassignment(tp kafka.TopicPartition) error {
	cc := c.cc
	if !cc.isBeingReassigned(tp) {
		return nil
	}
	complete, err := c.isReassignmentComplete(tp)
	if err != nil || !complete {
		return err
	}
	return c.onPartitionReassignment(tp, TargetReplicas(cc.replicas(tp), cc.removing[tp]))
}

// processZkPartitionReassignment handles /admin/reassign_partitions (Kafka's
// processZkPartitionReassignment): start each listed reassignment; entries that fail
// validation are removed from the znode.
func (c *Controller) processZkPartitionReassignment() (map[kafka.TopicPartition]bool, error) {
	cc := c.cc
	requested, err := c.store.PartitionReassignment()
	if err != nil {
		return nil, fmt.Errorf("controller: read partition reassignment: %w", err)
	}
	plans := make(map[kafka.TopicPartition][]int32)
	failed := make(map[kafka.TopicPartition]error)
	for tp, target := range requested {
		if cc.isBeingReassigned(tp) && slices.Equal(TargetReplicas(cc.replicas(tp), cc.removing[tp]), target) {
			// Already running. Kafka acts on the znode's creation only; zkutil's watch also
			// fires for our own rewrites as partitions complete, which must not restart them.
			continue
		}
		t, err := c.buildReassignment(tp, target, false)
		if err != nil {
			failed[tp] = err
			continue
		}
		plans[tp] = t
	}
	results, err := c.triggerReassignments(plans)
	if err != nil {
		return nil, err
	}
	started := make(map[kafka.TopicPartition]bool)
	for tp, rerr := range results {
		if rerr != nil {
			failed[tp] = rerr
		} else {
			started[tp] = true
		}
	}
	if len(failed) > 0 {
		c.log.WithFields(logrus.Fields{"failed": fmt.Sprint(failed), "controller_epoch": cc.epoch}).
			Warn("controller: failed reassignments through ZooKeeper; removing them from the znode")
		if err := c.removeFromZkReassignment(func(tp kafka.TopicPartition, _ []int32) bool { _, bad := failed[tp]; return bad }); err != nil {
			return nil, err
		}
	}
	return started, nil
}

// removeFromZkReassignment drops matching entries from /admin/reassign_partitions, deleting
// it when none is left.
func (c *Controller) removeFromZkReassignment(drop func(kafka.TopicPartition, []int32) bool) error {
	cc := c.cc
	current, err := c.store.PartitionReassignment()
	if err != nil {
		return fmt.Errorf("controller: read partition reassignment: %w", err)
	}
	if len(current) == 0 {
		return nil
	}
	changed := false
	for tp, replicas := range current {
		if drop(tp, replicas) {
			delete(current, tp)
			changed = true
		}
	}
	if !changed {
		return nil
	}
	return c.store.SetPartitionReassignment(cc.epochZkVersion, current)
}

// initializePartitionReassignments resumes reassignments at failover: the znode's first,
// then those persisted in the topic znodes (Kafka's initializePartitionReassignments).
func (c *Controller) initializePartitionReassignments() error {
	started, err := c.processZkPartitionReassignment()
	if err != nil {
		return err
	}
	return c.resumeReassignments(func(tp kafka.TopicPartition) bool { return !started[tp] })
}

// resumeReassignments restarts every reassignment in progress for which pick is true.
func (c *Controller) resumeReassignments(pick func(kafka.TopicPartition) bool) error {
	cc := c.cc
	plans := make(map[kafka.TopicPartition][]int32)
	for _, tp := range cc.allPartitions() {
		if cc.isBeingReassigned(tp) && pick(tp) {
			plans[tp] = TargetReplicas(cc.replicas(tp), cc.removing[tp])
		}
	}
	_, err := c.triggerReassignments(plans)
	return err
}
