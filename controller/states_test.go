package controller

import (
	"fmt"
	"slices"
	"testing"
)

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
	checkTransitions(t, all, valid, ValidPartitionTransition)
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
	checkTransitions(t, all, valid, ValidReplicaTransition)
}

// checkTransitions runs one subtest per (from, to) pair of all: valid(from, to) must be true
// exactly when from is among allowed[to] (Kafka's validPreviousStates).
func checkTransitions[S interface {
	comparable
	fmt.Stringer
}](t *testing.T, all []S, allowed map[S][]S, valid func(from, to S) bool) {
	t.Helper()
	for _, to := range all {
		for _, from := range all {
			want := slices.Contains(allowed[to], from)
			t.Run(from.String()+"->"+to.String(), func(t *testing.T) {
				if got := valid(from, to); got != want {
					t.Fatalf("got %v, want %v", got, want)
				}
			})
		}
	}
}
