package controller

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"testing"

	"samsa/internal/testwait"
	"samsa/kafka"
	"samsa/zkutil"
)

// reassignCluster: controller 1, brokers 2, 3, 4 registered, topic "r" p0 on [1,2].
func reassignCluster(t *testing.T) (*cluster, *node, *zkutil.Client) {
	t.Helper()
	cl, n1 := newActiveCluster(t, nil)
	admin := cl.zk()
	for _, id := range []int32{2, 3, 4} {
		cl.registerBroker(admin, id, "")
	}
	waitBrokerKnown(t, cl, 4)
	createTopic(t, admin, "r", map[int32][]int32{0: {1, 2}})
	wantState(t, admin, "r", 0, 1, []int32{1, 2}, 0)
	return cl, n1, admin
}

// expandIsr does what the partition leader does when followers catch up: write the ISR to
// the state znode and notify the controller.
func expandIsr(t *testing.T, zc *zkutil.Client, topic string, p int32, isr []int32) {
	t.Helper()
	// Read-modify-write, again on a zkVersion conflict (the controller may bump the leader
	// epoch meanwhile), as the leader does when it gets the newer LeaderAndIsr.
	testwait.For(t, waitTimeout, func() error {
		st, zkv, err := zc.GetPartitionState(topic, p)
		if err != nil {
			return err
		}
		st.ISR = isr
		_, err = zc.UpdatePartitionStateFromLeader(kafka.TopicPartition{Topic: topic, Partition: p}, st, zkv)
		return err
	})
	if err := zc.WriteIsrChangeNotification([]kafka.TopicPartition{{Topic: topic, Partition: p}}); err != nil {
		t.Fatal(err)
	}
}

func wantAssignment(t *testing.T, zc *zkutil.Client, topic string, p int32, replicas, adding, removing []int32) {
	t.Helper()
	testwait.For(t, waitTimeout, func() error {
		a, _, err := zc.GetTopicAssignment(topic)
		if err != nil {
			return err
		}
		if !slices.Equal(a.Partitions[p], replicas) || !slices.Equal(a.AddingReplicas[p], adding) || !slices.Equal(a.RemovingReplicas[p], removing) {
			return fmt.Errorf("assignment %v adding %v removing %v", a.Partitions[p], a.AddingReplicas[p], a.RemovingReplicas[p])
		}
		return nil
	})
}

// TestControllerReassignment follows reference §3.9's KIP-455 example: ORS [1,2] → TRS
// [3,4]: RS [3,4,1,2] with AR [3,4] and RR [1,2] until the targets join the ISR; then the
// leader moves to 3, 1 and 2 are stopped and deleted, and RS becomes [3,4].
func TestControllerReassignment(t *testing.T) {
	t.Parallel()
	cl, n1, admin := reassignCluster(t)
	ctx, cancel := context.WithTimeout(context.Background(), waitTimeout)
	defer cancel()
	tp := kafka.TopicPartition{Topic: "r", Partition: 0}
	res, err := n1.c.AlterPartitionReassignments(ctx, map[kafka.TopicPartition][]int32{tp: {3, 4}})
	if err != nil || res[tp] != nil {
		t.Fatalf("alter: %v %v", res, err)
	}
	wantAssignment(t, admin, "r", 0, []int32{3, 4, 1, 2}, []int32{3, 4}, []int32{1, 2})
	list, err := n1.c.ListPartitionReassignments(ctx, nil)
	if err != nil || !slices.Equal(list[tp].Adding, []int32{3, 4}) || !slices.Equal(list[tp].Removing, []int32{1, 2}) {
		t.Fatalf("list: %+v %v", list, err)
	}
	// Phase A: LeaderAndIsr with the full replica set to every replica, IsNew for 3 and 4.
	testwait.For(t, waitTimeout, func() error {
		for _, b := range []int32{1, 2, 3, 4} {
			got := leaderAndIsrFor(cl.rec, b, "r", 0)
			if len(got) == 0 {
				return fmt.Errorf("broker %d: no LeaderAndIsr", b)
			}
			ps := got[len(got)-1]
			if !slices.Equal(ps.Replicas, []int32{3, 4, 1, 2}) || !slices.Equal(ps.AddingReplicas, []int32{3, 4}) ||
				!slices.Equal(ps.RemovingReplicas, []int32{1, 2}) || ps.IsNew != (b >= 3) || ps.LeaderEpoch != 1 {
				return fmt.Errorf("broker %d: %+v", b, ps)
			}
		}
		return nil
	})
	// The new replicas catch up: the leader expands the ISR.
	expandIsr(t, admin, "r", 0, []int32{1, 2, 3, 4})
	wantAssignment(t, admin, "r", 0, []int32{3, 4}, nil, nil)
	testwait.For(t, waitTimeout, func() error {
		st, err := partitionState(t, admin, "r", 0)
		if err != nil {
			return err
		}
		if st.Leader != 3 || !slices.Equal(st.ISR, []int32{3, 4}) {
			return fmt.Errorf("state %+v", st)
		}
		for _, b := range []int32{1, 2} {
			deletes, _ := stopReplicaFor(cl.rec, b, "r", 0)
			if !slices.Contains(deletes, true) {
				return fmt.Errorf("broker %d: no StopReplica delete", b)
			}
		}
		list, err := n1.c.ListPartitionReassignments(ctx, nil)
		if err != nil || len(list) != 0 {
			return fmt.Errorf("list: %+v %v", list, err)
		}
		um, _ := updateMetadataFor(cl.rec, 4, "r", 0)
		if last := um[len(um)-1]; last.Leader != 3 || !slices.Equal(last.Replicas, []int32{3, 4}) {
			return fmt.Errorf("UpdateMetadata %+v", last)
		}
		return nil
	})
}

// TestControllerReassignmentCancel: a nil target "cancels (reverts to ORS)"; the replicas
// being added are stopped.
func TestControllerReassignmentCancel(t *testing.T) {
	t.Parallel()
	cl, n1, admin := reassignCluster(t)
	ctx, cancel := context.WithTimeout(context.Background(), waitTimeout)
	defer cancel()
	tp := kafka.TopicPartition{Topic: "r", Partition: 0}
	if res, err := n1.c.AlterPartitionReassignments(ctx, map[kafka.TopicPartition][]int32{tp: {1, 3}}); err != nil || res[tp] != nil {
		t.Fatalf("alter: %v %v", res, err)
	}
	wantAssignment(t, admin, "r", 0, []int32{1, 3, 2}, []int32{3}, []int32{2})
	if res, err := n1.c.AlterPartitionReassignments(ctx, map[kafka.TopicPartition][]int32{tp: nil}); err != nil || res[tp] != nil {
		t.Fatalf("cancel: %v %v", res, err)
	}
	wantAssignment(t, admin, "r", 0, []int32{1, 2}, nil, nil)
	testwait.For(t, waitTimeout, func() error {
		deletes, _ := stopReplicaFor(cl.rec, 3, "r", 0)
		if !slices.Contains(deletes, true) {
			return fmt.Errorf("broker 3: no StopReplica delete")
		}
		return nil
	})
	res, err := n1.c.AlterPartitionReassignments(ctx, map[kafka.TopicPartition][]int32{tp: nil})
	if err != nil || !errors.Is(res[tp], ErrNoReassignmentInProgress) {
		t.Fatalf("second cancel: %v %v", res, err)
	}
}

// TestControllerReassignmentValidation: INVALID_REPLICA_ASSIGNMENT for empty, duplicate,
// negative or dead replicas; UNKNOWN_TOPIC_OR_PARTITION for unknown partitions.
func TestControllerReassignmentValidation(t *testing.T) {
	t.Parallel()
	_, n1, _ := reassignCluster(t)
	ctx, cancel := context.WithTimeout(context.Background(), waitTimeout)
	defer cancel()
	res, err := n1.c.AlterPartitionReassignments(ctx, map[kafka.TopicPartition][]int32{
		{Topic: "r", Partition: 0}: {}, {Topic: "r", Partition: 1}: {1}, {Topic: "nope", Partition: 0}: {1},
	})
	if err != nil {
		t.Fatal(err)
	}
	if !errors.Is(res[kafka.TopicPartition{Topic: "r", Partition: 0}], ErrInvalidReplicaAssignment) || !errors.Is(res[kafka.TopicPartition{Topic: "r", Partition: 1}], ErrUnknownTopicOrPartition) ||
		!errors.Is(res[kafka.TopicPartition{Topic: "nope", Partition: 0}], ErrUnknownTopicOrPartition) {
		t.Fatalf("results %v", res)
	}
	for _, target := range [][]int32{{3, 3}, {-1, 2}, {1, 9}} {
		res, err := n1.c.AlterPartitionReassignments(ctx, map[kafka.TopicPartition][]int32{{Topic: "r", Partition: 0}: target})
		if err != nil || !errors.Is(res[kafka.TopicPartition{Topic: "r", Partition: 0}], ErrInvalidReplicaAssignment) {
			t.Fatalf("target %v: %v %v", target, res, err)
		}
	}
}

// TestControllerReassignmentZnode: /admin/reassign_partitions (kafka-reassign-partitions.sh
// --zookeeper) starts a reassignment; the znode is deleted once it completes.
func TestControllerReassignmentZnode(t *testing.T) {
	t.Parallel()
	cl, _, admin := reassignCluster(t)
	if err := admin.CreatePartitionReassignment(map[kafka.TopicPartition][]int32{{Topic: "r", Partition: 0}: {2, 1}}); err != nil {
		t.Fatal(err)
	}
	// A reorder needs no data movement: it completes at once, with the leader kept.
	wantAssignment(t, admin, "r", 0, []int32{2, 1}, nil, nil)
	testwait.For(t, waitTimeout, func() error {
		r, err := admin.GetPartitionReassignment()
		if err != nil {
			return err
		}
		if len(r) != 0 {
			return fmt.Errorf("znode still lists %v", r)
		}
		got := leaderAndIsrFor(cl.rec, 2, "r", 0)
		if len(got) == 0 || !slices.Equal(got[len(got)-1].Replicas, []int32{2, 1}) {
			return fmt.Errorf("LeaderAndIsr %+v", got)
		}
		return nil
	})
	wantState(t, admin, "r", 0, 1, []int32{1, 2}, 1)
}

// TestControllerReassignmentResumesAtFailover: a reassignment persisted in the topic znode
// (AR/RR) is resumed by the next controller, which completes it when the ISR catches up.
func TestControllerReassignmentResumesAtFailover(t *testing.T) {
	t.Parallel()
	cl, n1, admin := reassignCluster(t)
	ctx, cancel := context.WithTimeout(context.Background(), waitTimeout)
	defer cancel()
	tp := kafka.TopicPartition{Topic: "r", Partition: 0}
	if res, err := n1.c.AlterPartitionReassignments(ctx, map[kafka.TopicPartition][]int32{tp: {2, 3}}); err != nil || res[tp] != nil {
		t.Fatalf("alter: %v %v", res, err)
	}
	wantAssignment(t, admin, "r", 0, []int32{2, 3, 1}, []int32{3}, []int32{1})
	n5 := cl.startNode(5, nil)
	n1.c.Shutdown()
	n1.zk.Close()
	waitActive(t, n5)
	expandIsr(t, admin, "r", 0, []int32{2, 3})
	wantAssignment(t, admin, "r", 0, []int32{2, 3}, nil, nil)
	testwait.For(t, waitTimeout, func() error {
		st, err := partitionState(t, admin, "r", 0)
		if err != nil {
			return err
		}
		if st.Leader != 2 || !slices.Equal(st.ISR, []int32{2, 3}) {
			return fmt.Errorf("state %+v", st)
		}
		return nil
	})
}

// TestControllerReassignmentZnodeManyPartitions: entries leave the znode one by one as they
// complete, and rewriting it does not restart the reassignments still running.
func TestControllerReassignmentZnodeManyPartitions(t *testing.T) {
	t.Parallel()
	_, _, admin := reassignCluster(t)
	createTopic(t, admin, "z", map[int32][]int32{0: {1, 2}, 1: {1, 2}})
	wantState(t, admin, "z", 1, 1, []int32{1, 2}, 0)
	if err := admin.CreatePartitionReassignment(map[kafka.TopicPartition][]int32{
		{Topic: "z", Partition: 0}: {1, 3}, // needs 3 to catch up
		{Topic: "z", Partition: 1}: {2, 1}, // completes at once
	}); err != nil {
		t.Fatal(err)
	}
	wantAssignment(t, admin, "z", 1, []int32{2, 1}, nil, nil)
	wantAssignment(t, admin, "z", 0, []int32{1, 3, 2}, []int32{3}, []int32{2})
	testwait.For(t, waitTimeout, func() error {
		r, err := admin.GetPartitionReassignment()
		if err != nil {
			return err
		}
		if len(r) != 1 {
			return fmt.Errorf("znode lists %v", r)
		}
		return nil
	})
	// z-0 went through Phase A exactly once (leader epoch 1), despite the znode rewrite.
	wantState(t, admin, "z", 0, 1, []int32{1, 2}, 1)
	expandIsr(t, admin, "z", 0, []int32{1, 2, 3})
	wantAssignment(t, admin, "z", 0, []int32{1, 3}, nil, nil)
	testwait.For(t, waitTimeout, func() error {
		r, err := admin.GetPartitionReassignment()
		if err != nil {
			return err
		}
		if len(r) != 0 {
			return fmt.Errorf("znode lists %v", r)
		}
		return nil
	})
}
