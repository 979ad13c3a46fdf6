package controller

import "slices"
import "samsa/kafka"

// Leader election strategies, as pure functions of their inputs (Kafka's Election.scala and
// PartitionLeaderElectionAlgorithms, 2.8). Names: assignment = ordered replica list (the first
// entry is the preferred leader), isr = current in-sync replicas, live = replicas whose broker
// is live. Each returns the new leader and ISR, and ok=false when no leader can be chosen;
// the caller then keeps the partition's old state (the partition stays Offline).

// Election is the outcome of a successful leader election.
type Election struct {
	Leader  int32
	Isr     []int32 // new ISR; a fresh slice
	Unclean bool    // the leader was not in the ISR (counts as an unclean election)
}

// ElectOfflineLeader is OfflinePartitionLeaderElection: the first replica in assignment
// order that is live and in the ISR, with ISR := ISR ∩ live. If there is none and
// allowUnclean (unclean.leader.election.enable, topic override or broker default), the first
// live replica becomes leader with ISR := [leader].
func ElectOfflineLeader(assignment, isr, live []int32, allowUnclean bool) (Election, bool) {
	for _, r := range assignment {
		if contains(live, r) && contains(isr, r) {
			return Election{Leader: r, Isr: filter(isr, func(id int32) bool { return contains(live, id) })}, true
		}
	}
	if !allowUnclean {
		return Election{}, false
	}
	for _, r := range assignment {
		if contains(live, r) {
			return Election{Leader: r, Isr: []int32{r}, Unclean: true}, true
		}
	}
	return Election{}, false
}

// ElectReassignLeader is ReassignPartitionLeaderElection: the first replica of the target
// replica set that is live and in the ISR. The ISR is unchanged.
func ElectReassignLeader(target, isr, live []int32) (Election, bool) {
	for _, r := range target {
		if contains(live, r) && contains(isr, r) {
			return Election{Leader: r, Isr: slices.Clone(isr)}, true
		}
	}
	return Election{}, false
}

// ElectPreferredLeader is PreferredReplicaPartitionLeaderElection: assignment[0] if it is
// live and in the ISR, otherwise no election. The ISR is unchanged.
func ElectPreferredLeader(assignment, isr, live []int32) (Election, bool) {
	if len(assignment) == 0 {
		return Election{}, false
	}
	r := assignment[0]
	if !contains(live, r) || !contains(isr, r) {
		return Election{}, false
	}
	return Election{Leader: r, Isr: slices.Clone(isr)}, true
}

// ElectControlledShutdownLeader is ControlledShutdownPartitionLeaderElection: the first
// replica in assignment order that is live (or shutting down), in the ISR and not shutting
// down. The new ISR drops the shutting-down brokers.
func ElectControlledShutdownLeader(assignment, isr, liveOrShuttingDown, shuttingDown []int32) (Election, bool) {
	for _, r := range assignment {
		if contains(liveOrShuttingDown, r) && contains(isr, r) && !contains(shuttingDown, r) {
			return Election{Leader: r, Isr: filter(isr, func(id int32) bool { return !contains(shuttingDown, id) })}, true
		}
	}
	return Election{}, false
}

// RemoveReplicaFromIsr is the ISR shrink of the OfflineReplica transition (Kafka's
// ReplicaStateMachine.doRemoveReplicasFromIsr): the replica leaves the ISR unless it is the
// only member (an ISR is never shrunk to empty), and if it was the leader the leader becomes
// NoLeader. The leader epoch is bumped (newLeaderAndIsr). changed=false when the replica was
// not in the ISR, in which case nothing is written.
func RemoveReplicaFromIsr(state LeaderAndIsr, replica int32) (LeaderAndIsr, bool) {
	if !contains(state.Isr, replica) {
		return state, false
	}
	leader := state.Leader
	if leader == replica {
		leader = NoLeader
	}
	isr := state.Isr
	if len(isr) > 1 {
		isr = filter(isr, func(id int32) bool { return id != replica })
	}
	return state.newLeaderAndIsr(leader, isr), true
}

// InitialLeaderAndIsr is the New → Online transition's state for a new partition: leader =
// first live replica in assignment order, ISR = all live assigned replicas, leader epoch 0.
// ok=false when no assigned replica is live (the partition stays New).
func InitialLeaderAndIsr(assignment, live []int32, controllerEpoch int32) (LeaderAndIsr, bool) {
	liveReplicas := filter(assignment, func(id int32) bool { return contains(live, id) })
	if len(liveReplicas) == 0 {
		return LeaderAndIsr{}, false
	}
	return LeaderAndIsr{Leader: liveReplicas[0], Isr: liveReplicas, ControllerEpoch: controllerEpoch}, true
}

// filter returns a new slice with the ids for which keep returns true, in order.
func filter(ids []int32, keep func(int32) bool) []int32 {
	out := make([]int32, 0, len(ids))
	for _, id := range ids {
		if keep(id) {
			out = append(out, id)
		}
	}
	return out
}

// PreferredLeaderImbalance is the decision of Kafka's auto leader rebalance
// (checkAndTriggerAutoLeaderRebalance): partitions are grouped by their preferred leader
// (assignment[0]); for each broker, imbalance = partitions it prefers but does not lead ÷
// partitions it prefers. When imbalance > percentage/100, the partitions it does not lead
// are returned as candidates for a preferred-replica election (the caller still checks that
// the preferred replica is live and in the ISR). leaders holds each partition's current
// leader; partitions without one are not counted as imbalanced. The result is sorted.
func PreferredLeaderImbalance(assignments map[kafka.TopicPartition][]int32, leaders map[kafka.TopicPartition]int32, percentage int) []kafka.TopicPartition {
	byPreferred := make(map[int32][]kafka.TopicPartition)
	for tp, replicas := range assignments {
		if len(replicas) > 0 {
			byPreferred[replicas[0]] = append(byPreferred[replicas[0]], tp)
		}
	}
	var out []kafka.TopicPartition
	for broker, tps := range byPreferred {
		var notLed []kafka.TopicPartition
		for _, tp := range tps {
			if l, ok := leaders[tp]; ok && l != broker {
				notLed = append(notLed, tp)
			}
		}
		if float64(len(notLed))/float64(len(tps)) > float64(percentage)/100 {
			out = append(out, notLed...)
		}
	}
	kafka.SortPartitions(out)
	return out
}

// ReassignTo computes a KIP-455 reassignment's replica sets (Kafka's
// ReplicaAssignment.reassignTo). origin is the original replica set (ORS, the current
// replicas minus any replicas still being added) and target the requested one (TRS):
// replicas (RS) = TRS followed by ORS − TRS, adding (AR) = TRS − ORS, removing (RR) =
// ORS − TRS. Example ORS [1,2,3] → TRS [4,5,6]: RS [4,5,6,1,2,3], AR [4,5,6], RR [1,2,3].
func ReassignTo(origin, target []int32) (replicas, adding, removing []int32) {
	for _, r := range append(slices.Clone(target), origin...) {
		if !contains(replicas, r) {
			replicas = append(replicas, r)
		}
	}
	adding = filter(replicas, func(r int32) bool { return !contains(origin, r) })
	removing = filter(replicas, func(r int32) bool { return !contains(target, r) })
	return replicas, adding, removing
}

// OriginReplicas returns ORS for a partition whose replica set is replicas with adding
// replicas still being added (Kafka's ReplicaAssignment.originReplicas).
func OriginReplicas(replicas, adding []int32) []int32 {
	return filter(replicas, func(r int32) bool { return !contains(adding, r) })
}

// TargetReplicas returns TRS for a partition whose replica set is replicas with removing
// replicas still to be removed (Kafka's ReplicaAssignment.targetReplicas).
func TargetReplicas(replicas, removing []int32) []int32 {
	return filter(replicas, func(r int32) bool { return !contains(removing, r) })
}
