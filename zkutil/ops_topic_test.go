package zkutil_test

import (
	"errors"
	"reflect"
	"testing"

	"samsa/kafka"
	"samsa/zkutil"
	"samsa/zkutil/zktest"
)

func TestZKCreateTopic(t *testing.T) {
	srv := zktest.Start(t)
	c := connect(t, srv.Chroot(t))
	mustf(t, c.CreatePersistentPaths(), "persistent paths")

	assign := map[int32][]int32{0: {1, 2}, 1: {2, 1}}
	mustf(t, c.CreateTopic("a.b", assign, map[string]string{"retention.ms": "1000"}), "create")
	if err := c.CreateTopic("a.b", assign, nil); !errors.Is(err, zkutil.ErrTopicExists) {
		t.Fatalf("create twice: %v", err)
	}
	if err := c.CreateTopic("a_b", assign, nil); !errors.Is(err, zkutil.ErrTopicCollision) {
		t.Fatalf("collision: %v", err)
	}
	for _, bad := range []string{"", ".", "..", "a/b", "a b", string(make([]byte, 250))} {
		if err := c.CreateTopic(bad, assign, nil); !errors.Is(err, zkutil.ErrInvalidTopic) {
			t.Fatalf("invalid %q: %v", bad, err)
		}
	}
	a, v, err := c.GetTopicAssignment("a.b")
	mustf(t, err, "get assignment")
	if !reflect.DeepEqual(a.Partitions, assign) || a.Version != 2 || v != 0 {
		t.Fatalf("assignment %+v v%d", a, v)
	}
	cfg, err := c.GetEntityConfig(zkutil.ConfigTypeTopic, "a.b")
	mustf(t, err, "config")
	if cfg["retention.ms"] != "1000" {
		t.Fatalf("config %v", cfg)
	}
	// Adding a partition: conditional rewrite.
	a.Partitions[2] = []int32{1}
	nv, err := c.SetTopicAssignment("a.b", a, v)
	mustf(t, err, "set assignment")
	if _, err := c.SetTopicAssignment("a.b", a, v); !errors.Is(err, zkutil.ErrBadVersion) {
		t.Fatalf("stale set: %v", err)
	}
	all, err := c.GetTopicAssignments([]string{"a.b", "missing"})
	mustf(t, err, "get assignments")
	if len(all) != 1 || all["a.b"].ZkVersion != nv || len(all["a.b"].Assignment.Partitions) != 3 {
		t.Fatalf("assignments %+v", all)
	}

	// Deletion marker.
	mustf(t, c.MarkTopicForDeletion("a.b"), "mark")
	if err := c.MarkTopicForDeletion("a.b"); !errors.Is(err, zkutil.ErrMarkedForDeletion) {
		t.Fatalf("mark twice: %v", err)
	}
	marked, err := c.GetTopicsMarkedForDeletion()
	mustf(t, err, "marked")
	if !reflect.DeepEqual(marked, []string{"a.b"}) {
		t.Fatalf("marked = %v", marked)
	}
	_, zkv, err := c.ElectController(1)
	mustf(t, err, "elect")
	mustf(t, c.DeleteTopicZNodes("a.b", zkv), "delete znodes")
	mustf(t, c.DeleteTopicDeletionMark("a.b", zkv), "delete mark")
	mustf(t, c.DeleteTopicDeletionMark("a.b", zkv), "delete missing mark")
	topics, err := c.GetAllTopics()
	mustf(t, err, "topics")
	if len(topics) != 0 {
		t.Fatalf("topics = %v", topics)
	}
	if ok, _, _ := c.Exists(zkutil.EntityConfigPath(zkutil.ConfigTypeTopic, "a.b")); ok {
		t.Fatal("topic config survived deletion")
	}
}

func TestZKPartitionStates(t *testing.T) {
	srv := zktest.Start(t)
	c := connect(t, srv.Chroot(t))
	mustf(t, c.CreateTopic("t", map[int32][]int32{0: {1, 2}, 1: {2, 1}}, nil), "create topic")
	epoch, zkv, err := c.ElectController(1)
	mustf(t, err, "elect")

	tp0, tp1 := kafka.TopicPartition{Topic: "t", Partition: 0}, kafka.TopicPartition{Topic: "t", Partition: 1}
	s0 := zkutil.PartitionState{Leader: 1, ISR: []int32{1, 2}, ControllerEpoch: epoch}
	s1 := zkutil.PartitionState{Leader: 2, ISR: []int32{2, 1}, ControllerEpoch: epoch}
	if errs := c.CreatePartitionStates(zkv, map[kafka.TopicPartition]zkutil.PartitionState{tp0: s0, tp1: s1}); len(errs) != 0 {
		t.Fatalf("create: %v", errs)
	}
	errs := c.CreatePartitionStates(zkv, map[kafka.TopicPartition]zkutil.PartitionState{tp0: s0})
	if !errors.Is(errs[tp0], zkutil.ErrNodeExists) {
		t.Fatalf("create twice: %v", errs)
	}
	states, err := c.GetPartitionStates([]kafka.TopicPartition{tp0, tp1, {Topic: "t", Partition: 9}})
	mustf(t, err, "get states")
	if len(states) != 2 || !states[tp0].State.Equal(s0) || !states[tp1].State.Equal(s1) || states[tp0].ZkVersion != 0 {
		t.Fatalf("states %+v", states)
	}

	// Conditional updates: tp0 at the right version, tp1 at a stale one.
	n0 := zkutil.PartitionState{Leader: 2, LeaderEpoch: 1, ISR: []int32{2}, ControllerEpoch: epoch}
	vers, errs := c.UpdatePartitionStates(zkv, map[kafka.TopicPartition]zkutil.VersionedState{
		tp0: {State: n0, ZkVersion: 0},
		tp1: {State: s1, ZkVersion: 3},
	})
	if vers[tp0] != 1 || !errors.Is(errs[tp1], zkutil.ErrBadVersion) || errors.Is(errs[tp1], zkutil.ErrControllerMoved) || len(vers) != 1 {
		t.Fatalf("update: vers %v errs %v", vers, errs)
	}

	// The leader's own ISR write: conditional, idempotent on retry.
	isr := zkutil.PartitionState{Leader: 2, LeaderEpoch: 1, ISR: []int32{2, 1}, ControllerEpoch: epoch}
	v, err := c.UpdatePartitionStateFromLeader(tp0, isr, 1)
	mustf(t, err, "leader isr update")
	if v != 2 {
		t.Fatalf("version %d", v)
	}
	v, err = c.UpdatePartitionStateFromLeader(tp0, isr, 1)
	mustf(t, err, "retried leader isr update")
	if v != 2 {
		t.Fatalf("retried version %d", v)
	}
	other := zkutil.PartitionState{Leader: 2, LeaderEpoch: 1, ISR: []int32{2}, ControllerEpoch: epoch}
	if _, err := c.UpdatePartitionStateFromLeader(tp0, other, 1); !errors.Is(err, zkutil.ErrBadVersion) {
		t.Fatalf("stale leader update: %v", err)
	}
}

func TestZKCreatePartitionStateWithExistingParent(t *testing.T) {
	srv := zktest.Start(t)
	c := connect(t, srv.Chroot(t))
	mustf(t, c.CreateTopic("t", map[int32][]int32{0: {1}, 1: {1}}, nil), "create topic")
	_, err := c.CreateRecursive(zkutil.PartitionPath("t", 1), nil, zkutil.Persistent)
	mustf(t, err, "pre-create partition node")
	epoch, zkv, err := c.ElectController(1)
	mustf(t, err, "elect")
	st := zkutil.PartitionState{Leader: 1, ISR: []int32{1}, ControllerEpoch: epoch}
	errs := c.CreatePartitionStates(zkv, map[kafka.TopicPartition]zkutil.PartitionState{
		{Topic: "t", Partition: 0}: st, {Topic: "t", Partition: 1}: st, {Topic: "gone", Partition: 0}: st,
	})
	if len(errs) != 1 || !errors.Is(errs[kafka.TopicPartition{Topic: "gone", Partition: 0}], zkutil.ErrNoNode) {
		t.Fatalf("errs = %v", errs)
	}
	for p := int32(0); p < 2; p++ {
		got, v, err := c.GetPartitionState("t", p)
		mustf(t, err, "get %d", p)
		if !got.Equal(st) || v != 0 {
			t.Fatalf("partition %d: %+v v%d", p, got, v)
		}
	}
}
