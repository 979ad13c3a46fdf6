package replica

import (
	"context"
	"slices"
	"sync"
	"testing"

	"samsa/kafka"
)

// recordingTopicListener records the topics it is told were removed.
type recordingTopicListener struct {
	mu     sync.Mutex
	topics []string
}

func (r *recordingTopicListener) TopicRemoved(topic string) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.topics = append(r.topics, topic)
}

func (r *recordingTopicListener) removed() []string {
	r.mu.Lock()
	defer r.mu.Unlock()
	return slices.Clone(r.topics)
}

// TestReplicaTopicRemovedAfterLastPartitionDeleted: the TopicListener hears
// of a topic once a StopReplica with delete removes its last hosted
// partition, not before, and not for a stop without delete.
func TestReplicaTopicRemovedAfterLastPartitionDeleted(t *testing.T) {
	m, _ := newTestManager(t, 1, 1)
	rec := &recordingTopicListener{}
	m.SetTopicListener(rec)
	tps := []kafka.TopicPartition{{Topic: "gone", Partition: 0}, {Topic: "gone", Partition: 1}, {Topic: "kept", Partition: 0}}
	var states []PartitionState
	for _, tp := range tps {
		states = append(states, PartitionState{TopicPartition: tp, ControllerEpoch: 1, Leader: 1, ISR: []int32{1}, Replicas: []int32{1}})
	}
	res, err := m.BecomeLeaderOrFollower(context.Background(), LeaderAndIsr{ControllerEpoch: 1, Partitions: states})
	if err != nil {
		t.Fatal(err)
	}
	for tp, e := range res {
		if e != nil {
			t.Fatalf("become leader %s: %v", tp, e)
		}
	}
	stop := func(tp kafka.TopicPartition, del bool) {
		t.Helper()
		res, err := m.StopReplicas(StopReplica{ControllerEpoch: 1, Partitions: []StopPartition{{TopicPartition: tp, LeaderEpoch: EpochDuringDelete, Delete: del}}})
		if err != nil || res[tp] != nil {
			t.Fatalf("stop %s: %v %v", tp, err, res)
		}
	}
	stop(tps[0], true)
	if got := rec.removed(); len(got) != 0 {
		t.Fatalf("after deleting gone-0 of 2: removed %v, want none", got)
	}
	stop(tps[2], false)
	if got := rec.removed(); len(got) != 0 {
		t.Fatalf("after stopping kept-0 without delete: removed %v, want none", got)
	}
	stop(tps[1], true)
	if got := rec.removed(); !slices.Equal(got, []string{"gone"}) {
		t.Fatalf("after deleting gone-1: removed %v, want [gone]", got)
	}
	m.SetTopicListener(nil)
	stop(tps[2], true)
	if got := rec.removed(); !slices.Equal(got, []string{"gone"}) {
		t.Fatalf("after removing the listener: removed %v", got)
	}
}
