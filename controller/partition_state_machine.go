package controller

import (
	"fmt"
	"maps"
	"slices"

	"github.com/sirupsen/logrus"

	"samsa/kafka"
)

// electionKind selects the leader election strategy of an Online transition.
type electionKind int8

const (
	electOffline        electionKind = iota // OfflinePartitionLeaderElection (unclean per topic config)
	electOfflineUnclean                     // OfflinePartitionLeaderElection, unclean allowed (admin)
	electPreferred
	electControlledShutdown
	electReassign // ReassignPartitionLeaderElection over the target replicas
)

// maxStateWriteRounds bounds the re-read-and-retry loop after zkVersion conflicts.
const maxStateWriteRounds = 10

// stateLog returns the state-change logger for tp (Kafka's state.change.logger).
func (c *Controller) stateLog(tp kafka.TopicPartition) logrus.FieldLogger {
	epoch := int32(0)
	if c.cc != nil {
		epoch = c.cc.epoch
	}
	return c.log.WithFields(logrus.Fields{"controller_epoch": epoch, "topic": tp.Topic, "partition": tp.Partition})
}

// debugEnabled reports whether c.log writes DEBUG lines. The per-partition DEBUG lines
// (state transitions, ISR shrinks) are built only then: a controlled shutdown or failover at
// 10,000 partitions makes 20,000-30,000 of them, and building each one's fields only for the
// logger to drop it cost tens of milliseconds of the controller's event goroutine. A logger
// whose level it cannot see counts as enabled.
func (c *Controller) debugEnabled() bool {
	if e, ok := c.log.(*logrus.Entry); ok && e.Logger != nil {
		return e.Logger.IsLevelEnabled(logrus.DebugLevel)
	}
	return true
}

// setPartitionState records and logs a partition state transition.
func (c *Controller) setPartitionState(tp kafka.TopicPartition, to PartitionState) {
	from := c.cc.partitionStates[tp]
	if to == NonExistentPartition {
		delete(c.cc.partitionStates, tp)
	} else {
		c.cc.partitionStates[tp] = to
	}
	// DEBUG, as Kafka 2.8 logs these at TRACE (logSuccessfulTransition): a
	// failover changes thousands; the elections themselves stay INFO.
	if c.debugEnabled() {
		c.stateLog(tp).WithFields(logrus.Fields{"from": from.String(), "to": to.String()}).
			Debug("controller: partition state changed")
	}
}

// startupPartitionStateMachine initialises the partition states of tps from the leadership
// read at failover (live leader replica → Online, dead one → Offline, none → New) and tries
// to bring those that are Offline or New, of topics not being deleted, Online (Kafka's
// PartitionStateMachine.startup, which does it for all partitions at once).
func (c *Controller) startupPartitionStateMachine(tps []kafka.TopicPartition) error {
	cc := c.cc
	var toOnline []kafka.TopicPartition
	for _, tp := range tps {
		l, ok := cc.leadership[tp]
		switch {
		case !ok:
			cc.partitionStates[tp] = NewPartition
		case cc.isReplicaLive(l.Leader, tp):
			cc.partitionStates[tp] = OnlinePartition
			continue
		default:
			cc.partitionStates[tp] = OfflinePartition
		}
		if !cc.isQueuedForDeletion(tp.Topic) {
			toOnline = append(toOnline, tp)
		}
	}
	_, err := c.handlePartitionStateChanges(toOnline, OnlinePartition, electOffline)
	return err
}

// triggerOnlinePartitionStateChange moves every New or Offline partition (of topics not
// being deleted) to Online with the offline election strategy; it returns the partitions
// that came Online.
func (c *Controller) triggerOnlinePartitionStateChange() ([]kafka.TopicPartition, error) {
	return c.handlePartitionStateChanges(c.cc.partitionsInStates(NewPartition, OfflinePartition), OnlinePartition, electOffline)
}

// handlePartitionStateChanges moves tps to target (Kafka's
// ZkPartitionStateMachine.handleStateChanges). It returns the partitions that reached target.
// Partitions that cannot move (invalid transition, no live replica, no eligible leader) are
// logged and keep their state; only ErrControllerMoved and ZooKeeper failures are errors.
func (c *Controller) handlePartitionStateChanges(tps []kafka.TopicPartition, target PartitionState, kind electionKind) ([]kafka.TopicPartition, error) {
	cc := c.cc
	var valid []kafka.TopicPartition
	for _, tp := range tps {
		from := cc.partitionStates[tp]
		if !ValidPartitionTransition(from, target) {
			c.stateLog(tp).WithFields(logrus.Fields{"from": from.String(), "to": target.String()}).
				Warn("controller: invalid partition state transition")
			continue
		}
		valid = append(valid, tp)
	}
	switch target {
	case NewPartition, OfflinePartition, NonExistentPartition:
		for _, tp := range valid {
			c.setPartitionState(tp, target)
		}
		return valid, nil
	}
	var uninitialized, ready []kafka.TopicPartition
	for _, tp := range valid {
		if cc.partitionStates[tp] == NewPartition {
			uninitialized = append(uninitialized, tp)
		} else {
			ready = append(ready, tp)
		}
	}
	done, err := c.initializeLeaderAndIsr(uninitialized)
	if err != nil {
		return nil, err
	}
	elected, err := c.electLeaders(ready, kind)
	if err != nil {
		return nil, err
	}
	done = append(done, elected...)
	for _, tp := range done {
		c.setPartitionState(tp, OnlinePartition)
	}
	return done, nil
}

// initializeLeaderAndIsr creates the state znodes of new partitions (New → Online): leader =
// first online replica (isReplicaOnline), ISR = online replicas, leader epoch 0. It queues
// LeaderAndIsr (IsNew) to the ISR and UpdateMetadata to every broker.
func (c *Controller) initializeLeaderAndIsr(tps []kafka.TopicPartition) ([]kafka.TopicPartition, error) {
	if len(tps) == 0 {
		return nil, nil
	}
	cc := c.cc
	states := make(map[kafka.TopicPartition]LeaderAndIsr, len(tps))
	for _, tp := range tps {
		l, ok := InitialLeaderAndIsr(cc.replicas(tp), cc.onlineReplicas(tp), cc.epoch)
		if !ok {
			c.stateLog(tp).WithField("replicas", cc.replicas(tp)).
				Warn("controller: cannot initialize partition: no assigned replicas are alive")
			continue
		}
		states[tp] = l
	}
	if len(states) == 0 {
		return nil, nil
	}
	results, err := c.store.CreatePartitionStates(cc.epochZkVersion, states)
	if err != nil {
		return nil, fmt.Errorf("controller: create partition states: %w", err)
	}
	var done []kafka.TopicPartition
	for _, tp := range slices.SortedFunc(maps.Keys(states), kafka.ComparePartitions) {
		r, ok := results[tp]
		if !ok || r.Err != nil {
			c.stateLog(tp).WithError(r.Err).Error("controller: cannot create partition state")
			continue
		}
		l := states[tp]
		l.ZkVersion = r.ZkVersion
		cc.leadership[tp] = l
		c.stateLog(tp).WithFields(logrus.Fields{"leader": l.Leader, "leader_epoch": l.LeaderEpoch, "isr": l.Isr}).
			Info("controller: initialized leader and ISR")
		c.batch.addLeaderAndIsr(cc, l.Isr, tp, l, cc.replicas(tp), true)
		done = append(done, tp)
	}
	return done, nil
}

// electLeaders runs leader elections for tps (Offline/Online → Online), re-reading the
// state znodes and retrying the partitions that hit a zkVersion conflict.
func (c *Controller) electLeaders(tps []kafka.TopicPartition, kind electionKind) ([]kafka.TopicPartition, error) {
	var done []kafka.TopicPartition
	remaining := tps
	for round := 0; len(remaining) > 0 && round < maxStateWriteRounds; round++ {
		elected, retry, err := c.doElectLeaders(remaining, kind, round > 0)
		if err != nil {
			return nil, err
		}
		done = append(done, elected...)
		remaining = retry
	}
	for _, tp := range remaining {
		c.stateLog(tp).Error("controller: leader election gave up after repeated zkVersion conflicts")
	}
	return done, nil
}

// doElectLeaders is one round of elections: take the states (cached on the first round,
// read after a conflict: state_cache.go), decide, write conditionally.
func (c *Controller) doElectLeaders(tps []kafka.TopicPartition, kind electionKind, fresh bool) (elected, retry []kafka.TopicPartition, err error) {
	current, err := c.cachedOrReadStates(tps, fresh)
	if err != nil {
		return nil, nil, err
	}
	plan, retry := c.decideElections(tps, current, kind, fresh)
	if len(plan.toWrite) == 0 {
		return nil, retry, nil
	}
	results, err := c.store.UpdatePartitionStates(c.cc.epochZkVersion, plan.toWrite)
	if err != nil {
		return nil, nil, fmt.Errorf("controller: update partition states: %w", err)
	}
	elected, conflicts := c.applyElections(plan, results)
	return elected, append(retry, conflicts...), nil
}

// electionPlan is what one round of elections decided: the states to write, and for each
// whether it is unclean and who gets its LeaderAndIsr once written.
type electionPlan struct {
	toWrite    map[kafka.TopicPartition]LeaderAndIsr
	unclean    map[kafka.TopicPartition]bool
	recipients map[kafka.TopicPartition][]int32
}

// decideElections decides the elections of tps on current (their states, cached or read):
// the plan holds the new states, retry the partitions to decide again on a fresh read (no
// eligible leader in a cached state). Partitions without a state, with one written by a newer
// controller, or without an eligible leader in a fresh state are logged and left out. It
// writes nothing (an offline election may read the topic's unclean.leader.election.enable);
// it records each state it decides on in cc.leadership.
func (c *Controller) decideElections(tps []kafka.TopicPartition, current map[kafka.TopicPartition]LeaderAndIsr, kind electionKind,
	fresh bool) (plan electionPlan, retry []kafka.TopicPartition) {
	cc := c.cc
	plan = electionPlan{toWrite: make(map[kafka.TopicPartition]LeaderAndIsr), unclean: make(map[kafka.TopicPartition]bool),
		recipients: make(map[kafka.TopicPartition][]int32)}
	for _, tp := range tps {
		st, ok := current[tp]
		if !ok {
			c.stateLog(tp).Error("controller: cannot elect leader: partition state not found")
			continue
		}
		if st.ControllerEpoch > cc.epoch {
			c.stateLog(tp).WithField("state_controller_epoch", st.ControllerEpoch).
				Error("controller: aborted leader election: partition state was written by a newer controller")
			continue
		}
		cc.leadership[tp] = st
		el, live, ok := c.electionFor(tp, st, kind)
		if !ok {
			if !fresh {
				// The cached ISR may lag ZooKeeper (a leader's ISR expansion reaches the
				// controller only through its change notification), and a decision that
				// writes nothing meets no zkVersion conflict to correct it: decide again on
				// the state read from ZooKeeper, as Kafka's doElectLeaderForPartitions reads
				// it before every election.
				retry = append(retry, tp)
				continue
			}
			c.stateLog(tp).WithFields(logrus.Fields{"replicas": cc.replicas(tp), "isr": st.Isr, "live_replicas": live}).
				Error("controller: cannot elect leader: no eligible replica is alive")
			continue
		}
		nl := st.newLeaderAndIsr(el.Leader, el.Isr)
		nl.ControllerEpoch = cc.epoch
		plan.toWrite[tp] = nl
		plan.unclean[tp] = el.Unclean
		plan.recipients[tp] = live
	}
	return plan, retry
}

// electionFor runs kind's election for tp on its state st. live is the replicas it counted
// as live, who get the LeaderAndIsr.
func (c *Controller) electionFor(tp kafka.TopicPartition, st LeaderAndIsr, kind electionKind) (el Election, live []int32, ok bool) {
	cc := c.cc
	assignment := cc.replicas(tp)
	live = cc.onlineReplicas(tp)
	switch kind {
	case electPreferred:
		el, ok = ElectPreferredLeader(assignment, st.Isr, live)
	case electReassign:
		target := TargetReplicas(assignment, cc.removing[tp])
		live = filter(target, func(id int32) bool { return cc.isReplicaOnline(id, tp) })
		el, ok = ElectReassignLeader(target, st.Isr, live)
	case electControlledShutdown:
		live = cc.liveReplicas(tp) // the shutting-down broker must hear it became a follower
		shutting := slices.Sorted(maps.Keys(cc.shuttingDown))
		el, ok = ElectControlledShutdownLeader(assignment, st.Isr, live, shutting)
	default:
		allowUnclean := kind == electOfflineUnclean
		if !allowUnclean && !slices.ContainsFunc(st.Isr, func(id int32) bool { return cc.isReplicaOnline(id, tp) }) {
			allowUnclean = c.uncleanLeaderElectionEnabled(tp.Topic)
		}
		el, ok = ElectOfflineLeader(assignment, st.Isr, live, allowUnclean)
	}
	return el, live, ok
}

// applyElections takes in the outcome of plan's writes (results may hold other partitions'
// too): each written state is recorded, logged and queued as LeaderAndIsr to its recipients
// (elected); a zkVersion conflict puts the partition in retry; other failures are logged.
func (c *Controller) applyElections(plan electionPlan, results map[kafka.TopicPartition]StoreResult) (elected, retry []kafka.TopicPartition) {
	cc := c.cc
	for _, tp := range slices.SortedFunc(maps.Keys(plan.toWrite), kafka.ComparePartitions) {
		r, ok := results[tp]
		switch {
		case ok && r.Err == nil:
		case ok && isZkVersionConflict(r.Err):
			retry = append(retry, tp)
			continue
		default:
			c.stateLog(tp).WithError(r.Err).Error("controller: cannot write elected leader")
			continue
		}
		nl := plan.toWrite[tp]
		nl.ZkVersion = r.ZkVersion
		cc.leadership[tp] = nl
		fields := logrus.Fields{"leader": nl.Leader, "leader_epoch": nl.LeaderEpoch, "isr": nl.Isr}
		if plan.unclean[tp] {
			c.metrics.unclean.Mark(1)
			c.stateLog(tp).WithFields(fields).Warn("controller: unclean leader election; data may be lost")
		} else {
			c.stateLog(tp).WithFields(fields).Info("controller: elected leader")
		}
		c.batch.addLeaderAndIsr(cc, plan.recipients[tp], tp, nl, cc.replicas(tp), false)
		elected = append(elected, tp)
	}
	return elected, retry
}

// uncleanLeaderElectionEnabled returns unclean.leader.election.enable for topic: the topic
// override from ZooKeeper, else the broker default.
func (c *Controller) uncleanLeaderElectionEnabled(topic string) bool {
	enabled, set, err := c.store.UncleanLeaderElectionEnable(topic)
	if err != nil {
		c.log.WithError(err).WithField("topic", topic).
			Warn("controller: cannot read topic config; using the broker default for unclean leader election")
		return c.cfg.UncleanLeaderElectionEnable
	}
	if set {
		return enabled
	}
	return c.cfg.UncleanLeaderElectionEnable
}
