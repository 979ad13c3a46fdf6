package zkutil_test

import (
	"errors"
	"testing"

	"samsa/kafka"
	"samsa/zkutil"
	"samsa/zkutil/zktest"
)

func TestZKControllerElection(t *testing.T) {
	srv := zktest.Start(t)
	cs := srv.Chroot(t)
	a, b := connect(t, cs), connect(t, cs)

	if id, err := a.GetController(); id != -1 || !errors.Is(err, zkutil.ErrNoNode) {
		t.Fatalf("no controller: %d %v", id, err)
	}
	epoch, zkv, err := a.ElectController(1)
	mustf(t, err, "elect a")
	if epoch != 1 {
		t.Fatalf("first epoch = %d, want 1", epoch)
	}
	if _, _, err := b.ElectController(2); !errors.Is(err, zkutil.ErrControllerExists) {
		t.Fatalf("second election: %v", err)
	}
	id, err := b.GetController()
	mustf(t, err, "get controller")
	if id != 1 {
		t.Fatalf("controller = %d", id)
	}
	e, v, err := b.GetControllerEpoch()
	mustf(t, err, "epoch")
	if e != 1 || v != zkv {
		t.Fatalf("epoch %d/%d, want 1/%d", e, v, zkv)
	}

	// The controller's fenced writes work until another controller wins.
	mustf(t, a.CreateTopic("t", map[int32][]int32{0: {1, 2}}, nil), "create topic")
	tp := kafka.TopicPartition{Topic: "t", Partition: 0}
	st := zkutil.PartitionState{Leader: 1, ISR: []int32{1, 2}, ControllerEpoch: epoch}
	if errs := a.CreatePartitionStates(zkv, map[kafka.TopicPartition]zkutil.PartitionState{tp: st}); len(errs) != 0 {
		t.Fatalf("create states: %v", errs)
	}

	// Watchers of /controller see it go when the controller resigns.
	gone := newCounter()
	cancel := b.WatchExists(zkutil.ControllerPath(), gone.fn)
	defer cancel()
	mustf(t, a.DeleteController(zkv), "resign")
	gone.wait(t, "controller deletion")

	epoch2, zkv2, err := b.ElectController(2)
	mustf(t, err, "elect b")
	if epoch2 != 2 || zkv2 == zkv {
		t.Fatalf("second epoch %d zkv %d (old %d)", epoch2, zkv2, zkv)
	}

	// The zombie controller a is fenced.
	_, errs := a.UpdatePartitionStates(zkv, map[kafka.TopicPartition]zkutil.VersionedState{
		tp: {State: zkutil.PartitionState{Leader: 2, LeaderEpoch: 1, ISR: []int32{2}, ControllerEpoch: epoch}, ZkVersion: 0},
	})
	if !errors.Is(errs[tp], zkutil.ErrControllerMoved) {
		t.Fatalf("zombie update: %v", errs[tp])
	}
	if err := a.DeleteTopicZNodes("t", zkv); !errors.Is(err, zkutil.ErrControllerMoved) {
		t.Fatalf("zombie delete: %v", err)
	}
	if _, err := a.SetTopicAssignmentFenced("t", zkutil.TopicAssignment{Partitions: map[int32][]int32{0: {2}}}, zkutil.AnyVersion, zkv); !errors.Is(err, zkutil.ErrControllerMoved) {
		t.Fatalf("zombie assignment: %v", err)
	}
	got, _, err := b.GetPartitionState("t", 0)
	mustf(t, err, "read state")
	if !got.Equal(st) {
		t.Fatalf("state changed by zombie: %+v", got)
	}

	// The new controller's write succeeds and deletion of the topic works.
	vers, errs := b.UpdatePartitionStates(zkv2, map[kafka.TopicPartition]zkutil.VersionedState{
		tp: {State: zkutil.PartitionState{Leader: 2, LeaderEpoch: 1, ISR: []int32{2}, ControllerEpoch: epoch2}, ZkVersion: 0},
	})
	if len(errs) != 0 || vers[tp] != 1 {
		t.Fatalf("update: %v %v", vers, errs)
	}
	mustf(t, b.DeleteTopicZNodes("t", zkv2), "delete topic")
	if ok, _ := b.TopicExists("t"); ok {
		t.Fatal("topic still exists")
	}
}

func TestZKElectControllerRace(t *testing.T) {
	srv := zktest.Start(t)
	cs := srv.Chroot(t)
	clients := []*zkutil.Client{connect(t, cs), connect(t, cs), connect(t, cs)}
	type result struct {
		epoch int32
		err   error
	}
	results := make(chan result, len(clients))
	for i, c := range clients {
		go func() {
			e, _, err := c.ElectController(int32(i + 1))
			results <- result{e, err}
		}()
	}
	winners := 0
	for range clients {
		r := <-results
		switch {
		case r.err == nil:
			winners++
			if r.epoch != 1 {
				t.Errorf("winner epoch %d", r.epoch)
			}
		case errors.Is(r.err, zkutil.ErrControllerExists), errors.Is(r.err, zkutil.ErrControllerMoved):
		default:
			t.Errorf("unexpected error: %v", r.err)
		}
	}
	if winners != 1 {
		t.Fatalf("%d winners", winners)
	}
}
