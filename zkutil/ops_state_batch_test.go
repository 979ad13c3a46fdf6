package zkutil_test

import (
	"errors"
	"testing"

	"samsa/kafka"
	"samsa/zkutil"
	"samsa/zkutil/zktest"
)

// TestZKUpdatePartitionStatesBatched: 250 partition-state writes go out in
// shared multis; partitions with a stale zkVersion or no znode, in the
// middle of a batch, fail alone with their own error while every other
// partition is written; a stale controller epoch fails them all with
// ErrControllerMoved and writes nothing.
func TestZKUpdatePartitionStatesBatched(t *testing.T) {
	srv := zktest.Start(t)
	c := connect(t, srv.Chroot(t))
	const n = 250
	assign := map[int32][]int32{}
	states := map[kafka.TopicPartition]zkutil.PartitionState{}
	for p := int32(0); p < n; p++ {
		assign[p] = []int32{1, 2}
		states[kafka.TopicPartition{Topic: "b", Partition: p}] = zkutil.PartitionState{Leader: 1, ISR: []int32{1, 2}, ControllerEpoch: 1}
	}
	mustf(t, c.CreateTopic("b", assign, nil), "create topic")
	epoch, zkv, err := c.ElectController(1)
	mustf(t, err, "elect")
	if errs := c.CreatePartitionStates(zkv, states); len(errs) != 0 {
		t.Fatalf("create: %v", errs)
	}
	stale := map[int32]bool{5: true, 99: true, 100: true, 150: true, 249: true}
	missing := kafka.TopicPartition{Topic: "b", Partition: 170}
	mustf(t, c.Delete(zkutil.PartitionStatePath("b", 170), zkutil.AnyVersion), "delete one state")
	upd := map[kafka.TopicPartition]zkutil.VersionedState{}
	for p := int32(0); p < n; p++ {
		v := int32(0)
		if stale[p] {
			v = 7
		}
		upd[kafka.TopicPartition{Topic: "b", Partition: p}] = zkutil.VersionedState{
			State: zkutil.PartitionState{Leader: 2, LeaderEpoch: 1, ISR: []int32{2}, ControllerEpoch: epoch}, ZkVersion: v}
	}
	vers, errs := c.UpdatePartitionStates(zkv, upd)
	if len(vers) != n-len(stale)-1 || len(errs) != len(stale)+1 {
		t.Fatalf("%d written, %d failed: %v", len(vers), len(errs), errs)
	}
	for tp, err := range errs {
		switch {
		case tp == missing:
			if !errors.Is(err, zkutil.ErrNoNode) {
				t.Errorf("%v: %v, want ErrNoNode", tp, err)
			}
		case !stale[tp.Partition] || !errors.Is(err, zkutil.ErrBadVersion):
			t.Errorf("%v: %v, want ErrBadVersion for a stale partition", tp, err)
		}
	}
	for tp, v := range vers {
		s, zv, err := c.GetPartitionState(tp.Topic, tp.Partition)
		if err != nil || zv != v || v != 1 || s.Leader != 2 {
			t.Fatalf("%v: state %+v zkVersion %d (returned %d), %v", tp, s, zv, v, err)
		}
	}
	if s, zv, _ := c.GetPartitionState("b", 5); zv != 0 || s.Leader != 1 {
		t.Fatalf("stale partition written: %+v %d", s, zv)
	}

	// A newer controller (the epoch znode moved on): nothing is written.
	mustf(t, c.DeleteController(zkv), "resign")
	_, zkv2, err := c.ElectController(2)
	mustf(t, err, "re-elect")
	if zkv2 == zkv {
		t.Fatalf("controller epoch zkVersion unchanged (%d)", zkv)
	}
	for tp, vs := range upd {
		vs.ZkVersion = 1
		upd[tp] = vs
	}
	vers, errs = c.UpdatePartitionStates(zkv, upd)
	if len(vers) != 0 || len(errs) != len(upd) {
		t.Fatalf("stale epoch: %d written", len(vers))
	}
	for tp, err := range errs {
		if !errors.Is(err, zkutil.ErrControllerMoved) {
			t.Fatalf("%v: %v, want ErrControllerMoved", tp, err)
		}
	}
	if s, zv, _ := c.GetPartitionState("b", 0); zv != 1 || s.LeaderEpoch != 1 {
		t.Fatalf("written under a stale epoch: %+v %d", s, zv)
	}
}

// TestZKCreatePartitionStatesBatched: 120 states created in shared multis,
// among them partitions whose /partitions/<p> already exists (created with
// /state alone) and partitions whose /state exists (ErrNodeExists, left
// as they are).
func TestZKCreatePartitionStatesBatched(t *testing.T) {
	srv := zktest.Start(t)
	c := connect(t, srv.Chroot(t))
	const n = 120
	assign := map[int32][]int32{}
	for p := int32(0); p < n; p++ {
		assign[p] = []int32{1}
	}
	mustf(t, c.CreateTopic("c", assign, nil), "create topic")
	_, zkv, err := c.ElectController(1)
	mustf(t, err, "elect")
	old := zkutil.PartitionState{Leader: 1, LeaderEpoch: 9, ISR: []int32{1}, ControllerEpoch: 1}
	exists := map[int32]bool{3: true, 60: true, 119: true}
	pre := map[kafka.TopicPartition]zkutil.PartitionState{}
	for p := range exists {
		pre[kafka.TopicPartition{Topic: "c", Partition: p}] = old
	}
	if errs := c.CreatePartitionStates(zkv, pre); len(errs) != 0 {
		t.Fatal(errs)
	}
	parentOnly := []int32{10, 11, 70}
	for _, p := range parentOnly {
		if err := c.EnsurePath(zkutil.PartitionPath("c", p)); err != nil {
			t.Fatal(err)
		}
	}
	states := map[kafka.TopicPartition]zkutil.PartitionState{}
	for p := int32(0); p < n; p++ {
		states[kafka.TopicPartition{Topic: "c", Partition: p}] = zkutil.PartitionState{Leader: 1, ISR: []int32{1}, ControllerEpoch: 1}
	}
	errs := c.CreatePartitionStates(zkv, states)
	if len(errs) != len(exists) {
		t.Fatalf("errors %v, want ErrNodeExists for %v", errs, exists)
	}
	for tp, err := range errs {
		if !exists[tp.Partition] || !errors.Is(err, zkutil.ErrNodeExists) {
			t.Fatalf("%v: %v", tp, err)
		}
	}
	for p := int32(0); p < n; p++ {
		s, _, err := c.GetPartitionState("c", p)
		mustf(t, err, "read state")
		if want := int32(0); exists[p] {
			want = 9
			if s.LeaderEpoch != want {
				t.Fatalf("partition %d: existing state overwritten: %+v", p, s)
			}
		} else if s.LeaderEpoch != want {
			t.Fatalf("partition %d: %+v", p, s)
		}
	}
}
