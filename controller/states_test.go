package controller

import "testing"

// TestControllerPartitionTransitions checks every (from, to) pair against Kafka's
// PartitionState.validPreviousStates.
func TestControllerPartitionTransitions(t *testing.T) {
	all := []PartitionState{NonExistentPartition, NewPartition, OnlinePartition, OfflinePartition}
	valid := map[PartitionState][]PartitionState{
		NewPartition:         {NonExistentPartition},
		OnlinePartition:      {NewPartition, OnlinePartition, OfflinePartition},
		OfflinePartition:     {NewPartition, OnlinePartition, OfflinePartition},
		NonExistentPartition: {OfflinePartition},
	}
	for _, to := range all {
		for _, from := range all {
			want := false
			for _, v := range valid[to] {
				want = want || v == from
			}
			t.Run(from.String()+"->"+to.String(), func(t *testing.T) {
				if got := ValidPartitionTransition(from, to); got != want {
					t.Fatalf("got %v, want %v", got, want)
				}
			})
		}
	}
}

// TestControllerReplicaTransitions checks every (from, to) pair against Kafka 2.8's
// ReplicaState.validPreviousStates.
func TestControllerReplicaTransitions(t *testing.T) {
	all := []ReplicaState{NonExistentReplica, NewReplica, OnlineReplica, OfflineReplica,
		ReplicaDeletionStarted, ReplicaDeletionSuccessful, ReplicaDeletionIneligible}
	valid := map[ReplicaState][]ReplicaState{
		NewReplica:                {NonExistentReplica},
		OnlineReplica:             {NewReplica, OnlineReplica, OfflineReplica, ReplicaDeletionIneligible},
		OfflineReplica:            {NewReplica, OnlineReplica, OfflineReplica, ReplicaDeletionIneligible},
		ReplicaDeletionStarted:    {OfflineReplica},
		ReplicaDeletionSuccessful: {ReplicaDeletionStarted},
		ReplicaDeletionIneligible: {OfflineReplica, ReplicaDeletionStarted},
		NonExistentReplica:        {ReplicaDeletionSuccessful},
	}
	for _, to := range all {
		for _, from := range all {
			want := false
			for _, v := range valid[to] {
				want = want || v == from
			}
			t.Run(from.String()+"->"+to.String(), func(t *testing.T) {
				if got := ValidReplicaTransition(from, to); got != want {
					t.Fatalf("got %v, want %v", got, want)
				}
			})
		}
	}
}
