package controller

// PartitionState is a state of Kafka's PartitionStateMachine.
type PartitionState int8

// Partition states: NonExistent → New → Online ⇄ Offline → NonExistent.
const (
	NonExistentPartition PartitionState = iota
	NewPartition
	OnlinePartition
	OfflinePartition
)

// String returns Kafka's state name.
func (s PartitionState) String() string {
	switch s {
	case NewPartition:
		return "NewPartition"
	case OnlinePartition:
		return "OnlinePartition"
	case OfflinePartition:
		return "OfflinePartition"
	default:
		return "NonExistentPartition"
	}
}

// ValidPartitionTransition reports whether a partition may move from → to (Kafka's
// PartitionState.validPreviousStates): New ← NonExistent; Online ← New, Online, Offline;
// Offline ← New, Online, Offline; NonExistent ← Offline.
func ValidPartitionTransition(from, to PartitionState) bool {
	switch to {
	case NewPartition:
		return from == NonExistentPartition
	case OnlinePartition, OfflinePartition:
		return from == NewPartition || from == OnlinePartition || from == OfflinePartition
	case NonExistentPartition:
		return from == OfflinePartition
	}
	return false
}

// ReplicaState is a state of Kafka's ReplicaStateMachine.
type ReplicaState int8

// Replica states.
const (
	NonExistentReplica ReplicaState = iota
	NewReplica
	OnlineReplica
	OfflineReplica
	ReplicaDeletionStarted
	ReplicaDeletionSuccessful
	ReplicaDeletionIneligible
)

// String returns Kafka's state name.
func (s ReplicaState) String() string {
	switch s {
	case NewReplica:
		return "NewReplica"
	case OnlineReplica:
		return "OnlineReplica"
	case OfflineReplica:
		return "OfflineReplica"
	case ReplicaDeletionStarted:
		return "ReplicaDeletionStarted"
	case ReplicaDeletionSuccessful:
		return "ReplicaDeletionSuccessful"
	case ReplicaDeletionIneligible:
		return "ReplicaDeletionIneligible"
	default:
		return "NonExistentReplica"
	}
}

// ValidReplicaTransition reports whether a replica may move from → to (Kafka's
// ReplicaState.validPreviousStates, 2.8).
func ValidReplicaTransition(from, to ReplicaState) bool {
	in := func(states ...ReplicaState) bool {
		for _, s := range states {
			if from == s {
				return true
			}
		}
		return false
	}
	switch to {
	case NewReplica:
		return in(NonExistentReplica)
	case OnlineReplica:
		return in(NewReplica, OnlineReplica, OfflineReplica, ReplicaDeletionIneligible)
	case OfflineReplica:
		return in(NewReplica, OnlineReplica, OfflineReplica, ReplicaDeletionIneligible)
	case ReplicaDeletionStarted:
		return in(OfflineReplica)
	case ReplicaDeletionSuccessful:
		return in(ReplicaDeletionStarted)
	case ReplicaDeletionIneligible:
		return in(OfflineReplica, ReplicaDeletionStarted)
	case NonExistentReplica:
		return in(ReplicaDeletionSuccessful)
	}
	return false
}
