package controller

import (
	"testing"

	"samsa/kafka"
)

// TestControllerStaleCachedStateElection: a leader changed its ISR in
// ZooKeeper and the controller never heard (no ISR change notification):
// when the leader's broker dies the controller first decides on its cached
// state, the conditional write fails on the zkVersion, and the partition is
// decided again on ZooKeeper's ISR: the new leader comes from the ISR
// ZooKeeper holds, never from the stale one.
func TestControllerStaleCachedStateElection(t *testing.T) {
	t.Parallel()
	cl, _ := newActiveCluster(t, nil)
	z2, z3, z4 := cl.zk(), cl.zk(), cl.zk()
	cl.registerBroker(z2, 2, "")
	cl.registerBroker(z3, 3, "")
	cl.registerBroker(z4, 4, "")
	admin := cl.zk()
	waitBrokerKnown(t, cl, 4)
	createTopic(t, admin, "s", map[int32][]int32{0: {2, 3, 4}})
	wantState(t, admin, "s", 0, 2, []int32{2, 3, 4}, 0)
	// The leader (2) shrinks the ISR to {2, 4} on its own, unannounced.
	st, zkv, err := admin.GetPartitionState("s", 0)
	if err != nil {
		t.Fatal(err)
	}
	st.ISR = []int32{2, 4}
	if _, err := admin.UpdatePartitionStateFromLeader(kafka.TopicPartition{Topic: "s", Partition: 0}, st, zkv); err != nil {
		t.Fatal(err)
	}
	z2.Close() // broker 2 dies: the cache says ISR {2,3,4} and would pick 3
	wantState(t, admin, "s", 0, 4, []int32{4}, 1)
}
