package controller

import (
	"fmt"
	"maps"
	"slices"

	"github.com/sirupsen/logrus"

	"samsa/kafka"
)

// epochDuringDelete is the StopReplica leader epoch of partitions of topics being deleted
// (Kafka's LeaderAndIsr.EpochDuringDelete): brokers apply it whatever their epoch.
const epochDuringDelete int32 = -2

// setReplicaState records and logs a replica state transition, at DEBUG: Kafka logs replica
// transitions at TRACE, and a failover of 10,000 partitions makes 30,000 of them (the
// partition transitions and ISR changes stay INFO).
func (c *Controller) setReplicaState(r PartitionReplica, to ReplicaState) {
	from := c.cc.replicaStates[r]
	if to == NonExistentReplica {
		delete(c.cc.replicaStates, r)
	} else {
		c.cc.replicaStates[r] = to
	}
	if c.debugEnabled() {
		c.stateLog(r.TopicPartition).WithFields(logrus.Fields{"replica": r.Replica, "from": from.String(), "to": to.String()}).
			Debug("controller: replica state changed")
	}
}

// startupReplicaStateMachine initialises the replica states of tps (isReplicaLive → Online, otherwise
// ReplicaDeletionIneligible) and then moves live replicas to Online (a LeaderAndIsr with the
// current state to each) and dead ones to Offline (ISR shrink), as Kafka's
// ZkReplicaStateMachine.startup does, with one difference: a dead replica that leads its
// partition while another ISR member is online only changes state here. Kafka writes
// leader -1 (NoLeader) for it and the partition state machine then elects, two writes and
// two LeaderAndIsr per partition, and the partition shows leader -1 in between although it
// could be led; here the election that follows (startupPartitionStateMachine: its leader is
// dead, so it is Offline) replaces the leader and drops it from the ISR in one write. At
// 10,000 partitions that halves the failover's ZooKeeper writes for the dead controller's
// partitions (docs/benchmarks.md, "Controller operations at scale").
func (c *Controller) startupReplicaStateMachine(tps []kafka.TopicPartition) error {
	cc := c.cc
	var online, offline []PartitionReplica
	for _, tp := range tps {
		for _, r := range cc.replicas(tp) {
			pr := PartitionReplica{tp, r}
			if cc.isReplicaLive(r, tp) {
				cc.replicaStates[pr] = OnlineReplica
				online = append(online, pr)
			} else {
				cc.replicaStates[pr] = ReplicaDeletionIneligible
				offline = append(offline, pr)
			}
		}
	}
	if err := c.handleReplicaStateChanges(online, OnlineReplica); err != nil {
		return err
	}
	shrink := offline[:0:0]
	for _, pr := range offline {
		if c.reElectedAtStartup(pr) {
			c.setReplicaState(pr, OfflineReplica)
			continue
		}
		shrink = append(shrink, pr)
	}
	return c.handleReplicaStateChanges(shrink, OfflineReplica)
}

// reElectedAtStartup reports whether the dead replica pr leads its partition while another
// ISR member is online, so that the startup election replaces it (see
// startupReplicaStateMachine). Partitions of topics being deleted are not elected and keep
// Kafka's ISR shrink.
func (c *Controller) reElectedAtStartup(pr PartitionReplica) bool {
	cc := c.cc
	l, ok := cc.leadership[pr.TopicPartition]
	if !ok || l.Leader != pr.Replica || cc.isQueuedForDeletion(pr.Topic) {
		return false
	}
	return slices.ContainsFunc(l.Isr, func(id int32) bool { return id != pr.Replica && cc.isReplicaOnline(id, pr.TopicPartition) })
}

// handleReplicaStateChanges moves replicas to target (Kafka's
// ZkReplicaStateMachine.handleStateChanges), replica id by replica id.
func (c *Controller) handleReplicaStateChanges(replicas []PartitionReplica, target ReplicaState) error {
	cc := c.cc
	byReplica := make(map[int32][]PartitionReplica)
	for _, r := range replicas {
		byReplica[r.Replica] = append(byReplica[r.Replica], r)
	}
	for _, id := range slices.Sorted(maps.Keys(byReplica)) {
		valid := c.validReplicaTransitions(byReplica[id], target)
		switch target {
		case NewReplica:
			for _, r := range valid {
				if l, ok := cc.leadership[r.TopicPartition]; ok {
					if l.Leader == id {
						c.stateLog(r.TopicPartition).WithField("replica", id).
							Error("controller: replica cannot become NewReplica: it is the leader")
						continue
					}
					c.batch.addLeaderAndIsr(cc, []int32{id}, r.TopicPartition, l, cc.replicas(r.TopicPartition), true)
				}
				c.setReplicaState(r, NewReplica)
			}
		case OnlineReplica:
			for _, r := range valid {
				if cc.replicaStates[r] == NewReplica {
					if replicas := cc.replicas(r.TopicPartition); !contains(replicas, id) {
						cc.setAssignment(r.TopicPartition, append(slices.Clone(replicas), id))
					}
				} else if l, ok := cc.leadership[r.TopicPartition]; ok {
					c.batch.addLeaderAndIsr(cc, []int32{id}, r.TopicPartition, l, cc.replicas(r.TopicPartition), false)
				}
				c.setReplicaState(r, OnlineReplica)
			}
		case OfflineReplica:
			if err := c.offlineReplicas(id, valid); err != nil {
				return err
			}
		case ReplicaDeletionStarted:
			for _, r := range valid {
				epoch := epochDuringDelete
				if l, ok := cc.leadership[r.TopicPartition]; ok && !cc.isQueuedForDeletion(r.Topic) {
					epoch = l.LeaderEpoch // a replica removed by a reassignment
				}
				c.batch.addStopReplica([]int32{id}, r.TopicPartition, true, epoch)
				c.setReplicaState(r, ReplicaDeletionStarted)
			}
		case NonExistentReplica:
			for _, r := range valid {
				cc.setAssignment(r.TopicPartition, filter(cc.replicas(r.TopicPartition), func(x int32) bool { return x != id }))
				c.setReplicaState(r, NonExistentReplica)
			}
		default:
			for _, r := range valid {
				c.setReplicaState(r, target)
			}
		}
	}
	return nil
}

// validReplicaTransitions returns the replicas that may move to target, and logs the others.
func (c *Controller) validReplicaTransitions(replicas []PartitionReplica, target ReplicaState) []PartitionReplica {
	var valid []PartitionReplica
	for _, r := range replicas {
		from := c.cc.replicaStates[r]
		if !ValidReplicaTransition(from, target) {
			c.stateLog(r.TopicPartition).WithFields(logrus.Fields{"replica": r.Replica, "from": from.String(), "to": target.String()}).
				Warn("controller: invalid replica state transition")
			continue
		}
		valid = append(valid, r)
	}
	return valid
}

// offlineReplicas is the OfflineReplica transition of one broker's replicas: remove the
// replica from each ISR (leader := NoLeader if it led), send LeaderAndIsr to the other
// replicas, StopReplica (delete=false) to the replica itself, UpdateMetadata to all.
func (c *Controller) offlineReplicas(id int32, replicas []PartitionReplica) error {
	cc := c.cc
	var withLeadership []kafka.TopicPartition
	for _, r := range replicas {
		if _, ok := cc.leadership[r.TopicPartition]; ok {
			withLeadership = append(withLeadership, r.TopicPartition)
		} else {
			c.batch.addUpdateMetadata(cc.liveBrokerIDs(), []kafka.TopicPartition{r.TopicPartition})
			c.setReplicaState(r, OfflineReplica)
		}
	}
	updated, err := c.removeReplicaFromIsr(id, withLeadership)
	if err != nil {
		return err
	}
	for _, tp := range withLeadership {
		if l, ok := updated[tp]; ok { // else failed; logged by removeReplicaFromIsr
			c.replicaWentOffline(id, tp, l)
		}
	}
	return nil
}

// replicaWentOffline completes the OfflineReplica transition of broker id's replica of tp,
// whose state is now l (without id in its ISR): LeaderAndIsr to the other replicas, with
// UpdateMetadata to every broker (unless the topic is being deleted), and StopReplica
// (delete=false) to id.
func (c *Controller) replicaWentOffline(id int32, tp kafka.TopicPartition, l LeaderAndIsr) {
	cc := c.cc
	if _, deleting := cc.topicsToBeDeleted[tp.Topic]; !deleting {
		others := filter(cc.replicas(tp), func(r int32) bool { return r != id })
		c.batch.addLeaderAndIsr(cc, others, tp, l, cc.replicas(tp), false)
	}
	// Sent with the new leader epoch so that the replica applies it (StopReplica v3),
	// or -2 for a topic being deleted (Kafka's EpochDuringDelete).
	epoch := l.LeaderEpoch
	if cc.isQueuedForDeletion(tp.Topic) {
		epoch = epochDuringDelete
	}
	c.batch.addStopReplica([]int32{id}, tp, false, epoch)
	c.setReplicaState(PartitionReplica{tp, id}, OfflineReplica)
}

// removeReplicaFromIsr writes the ISR shrink of replica id for tps, retrying zkVersion
// conflicts after a re-read (Kafka's removeReplicasFromIsr). It returns the resulting state
// of every partition it handled, changed or not.
func (c *Controller) removeReplicaFromIsr(id int32, tps []kafka.TopicPartition) (map[kafka.TopicPartition]LeaderAndIsr, error) {
	out := make(map[kafka.TopicPartition]LeaderAndIsr)
	remaining := tps
	for round := 0; len(remaining) > 0 && round < maxStateWriteRounds; round++ {
		current, err := c.cachedOrReadStates(remaining, round > 0)
		if err != nil {
			return nil, err
		}
		toWrite := c.decideIsrShrinks(id, remaining, current, out)
		remaining = nil
		if len(toWrite) == 0 {
			break
		}
		results, err := c.store.UpdatePartitionStates(c.cc.epochZkVersion, toWrite)
		if err != nil {
			return nil, fmt.Errorf("controller: update partition states: %w", err)
		}
		remaining = c.applyIsrShrinks(id, toWrite, results, out)
	}
	c.logIsrShrinksGivenUp(id, remaining)
	return out, nil
}

// logIsrShrinksGivenUp logs the partitions whose ISR shrink of replica id still conflicted
// after maxStateWriteRounds.
func (c *Controller) logIsrShrinksGivenUp(id int32, tps []kafka.TopicPartition) {
	for _, tp := range tps {
		c.stateLog(tp).WithField("replica", id).Error("controller: ISR shrink gave up after repeated zkVersion conflicts")
	}
}

// decideIsrShrinks decides the ISR shrinks of replica id for tps on current (their states,
// cached or read) and returns the states to write. A partition whose ISR does not hold id
// needs no write: its state goes to out (and cc.leadership) at once. Partitions without a
// state, or with one written by a newer controller, are logged and left out.
func (c *Controller) decideIsrShrinks(id int32, tps []kafka.TopicPartition, current, out map[kafka.TopicPartition]LeaderAndIsr) map[kafka.TopicPartition]LeaderAndIsr {
	cc := c.cc
	toWrite := make(map[kafka.TopicPartition]LeaderAndIsr)
	for _, tp := range tps {
		st, ok := current[tp]
		if !ok {
			c.stateLog(tp).WithField("replica", id).Error("controller: cannot remove replica from ISR: partition state not found")
			continue
		}
		if st.ControllerEpoch > cc.epoch {
			c.stateLog(tp).WithField("replica", id).
				Error("controller: aborted ISR shrink: partition state was written by a newer controller")
			continue
		}
		nl, changed := RemoveReplicaFromIsr(st, id)
		if !changed {
			cc.leadership[tp] = st
			out[tp] = st
			continue
		}
		nl.ControllerEpoch = cc.epoch
		toWrite[tp] = nl
	}
	return toWrite
}

// applyIsrShrinks takes in the outcome of the ISR shrinks toWrite (results may hold other
// partitions' too): each written state goes to out and cc.leadership; the partitions whose
// write met a zkVersion conflict are returned, to decide again on a fresh read; other
// failures are logged.
func (c *Controller) applyIsrShrinks(id int32, toWrite map[kafka.TopicPartition]LeaderAndIsr, results map[kafka.TopicPartition]StoreResult,
	out map[kafka.TopicPartition]LeaderAndIsr) (retry []kafka.TopicPartition) {
	for _, tp := range slices.SortedFunc(maps.Keys(toWrite), kafka.ComparePartitions) {
		r, ok := results[tp]
		switch {
		case ok && r.Err == nil:
			nl := toWrite[tp]
			nl.ZkVersion = r.ZkVersion
			c.cc.leadership[tp] = nl
			out[tp] = nl
			if c.debugEnabled() { // Kafka: TRACE
				c.stateLog(tp).WithFields(logrus.Fields{"replica": id, "leader": nl.Leader, "leader_epoch": nl.LeaderEpoch, "isr": nl.Isr}).
					Debug("controller: removed replica from ISR")
			}
		case ok && isZkVersionConflict(r.Err):
			retry = append(retry, tp)
		default:
			c.stateLog(tp).WithError(r.Err).WithField("replica", id).Error("controller: cannot write ISR shrink")
		}
	}
	return retry
}
