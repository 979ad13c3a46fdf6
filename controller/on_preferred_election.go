package controller

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/sirupsen/logrus"

	"samsa/kafka"
)

// Preferred-replica and admin-triggered leader elections (reference §3.10): the
// /admin/preferred_replica_election znode, the ElectLeaders API (key 43) and the automatic
// leader rebalance.

// ElectionType is ElectLeaders' election type (Kafka's ElectionType).
type ElectionType int8

// Election types.
const (
	ElectionPreferred ElectionType = 0 // move leadership to the preferred (first) replica
	ElectionUnclean   ElectionType = 1 // elect a leader for leaderless partitions, uncleanly if needed
)

// Per-partition errors of ElectLeaders; the broker maps them to Kafka codes.
var (
	ErrUnknownTopicOrPartition     = errors.New("controller: unknown topic or partition")                     // UNKNOWN_TOPIC_OR_PARTITION
	ErrTopicBeingDeleted           = errors.New("controller: the topic is being deleted")                     // INVALID_TOPIC_EXCEPTION
	ErrElectionNotNeeded           = errors.New("controller: leader election not needed")                     // ELECTION_NOT_NEEDED
	ErrPreferredLeaderNotAvailable = errors.New("controller: preferred leader not available")                 // PREFERRED_LEADER_NOT_AVAILABLE
	ErrEligibleLeadersNotAvailable = errors.New("controller: eligible topic partition leaders not available") // ELIGIBLE_LEADERS_NOT_AVAILABLE
)

// autoRebalanceDelay is the first auto-rebalance check after failover (Kafka: 5 s).
const autoRebalanceDelay = 5 * time.Second

type electLeadersResult struct {
	results map[kafka.TopicPartition]error
	err     error
}

// ElectLeaders runs an admin leader election (ElectLeaders API) for tps, or for every
// partition when tps is nil, and returns one entry per partition: nil for an elected leader,
// or ErrUnknownTopicOrPartition, ErrTopicBeingDeleted, ErrElectionNotNeeded,
// ErrPreferredLeaderNotAvailable, ErrEligibleLeadersNotAvailable. The error is
// ErrNotController or ctx's. It blocks until the event goroutine has handled the request.
func (c *Controller) ElectLeaders(ctx context.Context, typ ElectionType, tps []kafka.TopicPartition) (map[kafka.TopicPartition]error, error) {
	reply := make(chan electLeadersResult, 1)
	c.enqueue(electLeadersEvent{typ: typ, tps: tps, reply: reply})
	r, err := awaitReply(ctx, c, reply)
	if err != nil {
		return nil, err
	}
	return r.results, r.err
}

// processElectLeaders answers an ElectLeaders request on the event goroutine.
func (c *Controller) processElectLeaders(e electLeadersEvent) error {
	if !c.active.Load() {
		e.reply <- electLeadersResult{err: ErrNotController}
		return nil
	}
	tps := e.tps
	if tps == nil {
		tps = c.cc.allPartitions()
	}
	results, err := c.electLeadersFor(tps, e.typ)
	if err != nil {
		e.reply <- electLeadersResult{err: ErrNotController}
		return err
	}
	e.reply <- electLeadersResult{results: results}
	return nil
}

// electLeadersFor is Kafka's onReplicaElection after its validation (processReplicaLeaderElection).
func (c *Controller) electLeadersFor(tps []kafka.TopicPartition, typ ElectionType) (map[kafka.TopicPartition]error, error) {
	cc := c.cc
	results := make(map[kafka.TopicPartition]error, len(tps))
	var electable []kafka.TopicPartition
	for _, tp := range tps {
		replicas := cc.replicas(tp)
		l, hasLeader := cc.leadership[tp]
		switch {
		case len(replicas) == 0: // unknown, or an empty assignment read from ZooKeeper
			results[tp] = ErrUnknownTopicOrPartition
		case cc.isQueuedForDeletion(tp.Topic):
			results[tp] = ErrTopicBeingDeleted
		case typ == ElectionPreferred && hasLeader && l.Leader == replicas[0]:
			results[tp] = ErrElectionNotNeeded
		case typ == ElectionUnclean && hasLeader && cc.isReplicaOnline(l.Leader, tp):
			results[tp] = ErrElectionNotNeeded
		case !hasLeader:
			results[tp] = ErrEligibleLeadersNotAvailable // never initialized (no live replica at creation)
		default:
			electable = append(electable, tp)
		}
	}
	kind, failure := electPreferred, ErrPreferredLeaderNotAvailable
	if typ == ElectionUnclean {
		kind, failure = electOfflineUnclean, ErrEligibleLeadersNotAvailable
	}
	for _, tp := range electable {
		if cc.partitionStates[tp] == OnlinePartition && typ == ElectionUnclean {
			// An Online partition whose leader died: make the Offline → Online move valid.
			c.setPartitionState(tp, OfflinePartition)
		}
	}
	done, err := c.handlePartitionStateChanges(electable, OnlinePartition, kind)
	if err != nil {
		return nil, err
	}
	for _, tp := range electable {
		results[tp] = failure
	}
	for _, tp := range done {
		results[tp] = nil
	}
	return results, nil
}

// processPreferredReplicaElection handles the /admin/preferred_replica_election znode
// (kafka-preferred-replica-election.sh): elect the preferred leaders it lists, then delete it.
func (c *Controller) processPreferredReplicaElection() error {
	cc := c.cc
	tps, err := c.store.PreferredReplicaElection()
	if err != nil {
		return fmt.Errorf("controller: read preferred replica election: %w", err)
	}
	if tps == nil {
		return nil
	}
	results, err := c.electLeadersFor(tps, ElectionPreferred)
	if err != nil {
		return err
	}
	for _, tp := range tps {
		if rerr := results[tp]; rerr != nil && !errors.Is(rerr, ErrElectionNotNeeded) {
			c.stateLog(tp).WithError(rerr).Warn("controller: preferred replica election failed")
		}
	}
	return c.store.DeletePreferredReplicaElection(cc.epochZkVersion)
}

// scheduleAutoRebalance arms the leader-imbalance timer of the current tenure.
func (c *Controller) scheduleAutoRebalance(after time.Duration) {
	if !c.cfg.AutoLeaderRebalanceEnable || !c.active.Load() {
		return
	}
	tenure := c.tenure
	c.stopRebalance = c.cfg.AfterFunc(after, func() { c.enqueue(autoRebalanceEvent{tenure: tenure}) })
}

// processAutoRebalance is Kafka's checkAndTriggerAutoLeaderRebalance.
func (c *Controller) processAutoRebalance(tenure uint64) error {
	if tenure != c.tenure {
		return nil // timer of an earlier tenure
	}
	defer c.scheduleAutoRebalance(c.cfg.LeaderImbalanceCheckInterval)
	cc := c.cc
	assignments := make(map[kafka.TopicPartition][]int32)
	leaders := make(map[kafka.TopicPartition]int32)
	for _, tp := range cc.allPartitions() {
		if cc.isQueuedForDeletion(tp.Topic) {
			continue
		}
		assignments[tp] = cc.replicas(tp)
		if l, ok := cc.leadership[tp]; ok {
			leaders[tp] = l.Leader
		}
	}
	if len(cc.adding)+len(cc.removing) > 0 {
		return nil // Kafka rebalances only when no reassignment is in progress
	}
	var candidates []kafka.TopicPartition
	for _, tp := range PreferredLeaderImbalance(assignments, leaders, c.cfg.LeaderImbalancePerBrokerPercentage) {
		preferred := assignments[tp][0]
		if cc.isReplicaOnline(preferred, tp) && contains(cc.leadership[tp].Isr, preferred) {
			candidates = append(candidates, tp)
		}
	}
	if len(candidates) == 0 {
		return nil
	}
	c.log.WithFields(logrus.Fields{"partitions": len(candidates), "controller_epoch": cc.epoch}).
		Info("controller: leader imbalance above threshold; electing preferred leaders")
	_, err := c.electLeadersFor(candidates, ElectionPreferred)
	return err
}
