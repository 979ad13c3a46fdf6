package zkconsumer

import (
	"context"
	"errors"
	"fmt"
	"reflect"
	"sync"
	"testing"
	"time"

	"samsa/internal/testwait"
	"samsa/kafka"
)

// listenerEvent is one recorded RebalanceListener call.
type listenerEvent struct {
	kind       string // "release" or "start"
	owned      map[string][]int32
	consumerID string
	assignment map[kafka.TopicPartition]string
	// ownersAtCall are the owner znodes of the released partitions as
	// ZooKeeper held them during BeforeReleasingPartitions.
	ownersAtCall map[kafka.TopicPartition]string
	commitErr    error
}

type recordingListener struct {
	owners func(tp kafka.TopicPartition) (string, error)

	mu     sync.Mutex
	conn   *Connector
	events []listenerEvent
}

func (l *recordingListener) BeforeReleasingPartitions(owned map[string][]int32) {
	ev := listenerEvent{kind: "release", owned: owned, ownersAtCall: map[kafka.TopicPartition]string{}}
	for topic, ps := range owned {
		for _, p := range ps {
			tp := kafka.TopicPartition{Topic: topic, Partition: p}
			o, err := l.owners(tp)
			if err != nil {
				o = "error: " + err.Error()
			}
			ev.ownersAtCall[tp] = o
		}
	}
	l.mu.Lock()
	c := l.conn
	l.mu.Unlock()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	ev.commitErr = c.CommitOffsets(ctx) // allowed from the listener
	l.mu.Lock()
	l.events = append(l.events, ev)
	l.mu.Unlock()
}

func (l *recordingListener) BeforeStartingFetchers(consumerID string, assignment Assignment) {
	ev := listenerEvent{kind: "start", consumerID: consumerID, assignment: map[kafka.TopicPartition]string{}}
	for tp, th := range assignment {
		ev.assignment[tp] = th.String()
	}
	l.mu.Lock()
	l.events = append(l.events, ev)
	l.mu.Unlock()
}

func (l *recordingListener) snapshot() []listenerEvent {
	l.mu.Lock()
	defer l.mu.Unlock()
	return append([]listenerEvent(nil), l.events...)
}

// TestZKConsumerRebalanceListener: c1 owns all four partitions; when c2
// joins, c1's listener sees BeforeReleasingPartitions with those four
// (while its owner znodes still exist, and may commit from there), then
// BeforeStartingFetchers with the group's assignment, which matches the
// owner znodes in ZooKeeper.
func TestZKConsumerRebalanceListenerSeesReleaseThenAssignment(t *testing.T) {
	const topic = "lst"
	e := newE2E(t, 1, topic, 4)
	zk := e.cluster.ZooKeeper(t)
	l := &recordingListener{owners: func(tp kafka.TopicPartition) (string, error) {
		return zk.GetPartitionOwner("g", tp.Topic, tp.Partition)
	}}
	cfg := e.config("g", "c1")
	cfg.RebalanceListener = l
	c1 := newConnector(t, cfg)
	l.mu.Lock()
	l.conn = c1
	l.mu.Unlock()
	startStatic(t, c1, map[string]int{topic: 1})

	all := map[kafka.TopicPartition]string{}
	for p := int32(0); p < 4; p++ {
		all[kafka.TopicPartition{Topic: topic, Partition: p}] = "g_c1-0"
	}
	if ev := l.snapshot(); len(ev) != 1 || ev[0].kind != "start" || ev[0].consumerID != "g_c1" || !reflect.DeepEqual(ev[0].assignment, all) {
		t.Fatalf("after c1's first rebalance: events %+v; want one start with every partition on g_c1-0", ev)
	}

	c2 := newConnector(t, e.config("g", "c2"))
	startStatic(t, c2, map[string]int{topic: 1})

	// Range over ids g_c1 < g_c2: c1 keeps 0 and 1, c2 gets 2 and 3.
	want := map[kafka.TopicPartition]string{}
	for p := int32(0); p < 4; p++ {
		owner := "g_c1-0"
		if p >= 2 {
			owner = "g_c2-0"
		}
		want[kafka.TopicPartition{Topic: topic, Partition: p}] = owner
	}
	testwait.For(t, 30*time.Second, func() error {
		ev := l.snapshot()
		if last := ev[len(ev)-1]; last.kind != "start" || !reflect.DeepEqual(last.assignment, want) {
			return fmt.Errorf("last event %+v, want start with %v", last, want)
		}
		got := map[kafka.TopicPartition]string{}
		for p := int32(0); p < 4; p++ {
			if o, err := zk.GetPartitionOwner("g", topic, p); err == nil {
				got[kafka.TopicPartition{Topic: topic, Partition: p}] = o
			}
		}
		if !reflect.DeepEqual(got, want) {
			return fmt.Errorf("owners in ZooKeeper %v, want %v", got, want)
		}
		if n, _ := c1.Rebalances(); n < 2 {
			return errors.New("c1 has not finished its second rebalance")
		}
		return nil
	})

	ev := l.snapshot()
	if len(ev) < 3 {
		t.Fatalf("events %+v; want at least start, release, start", ev)
	}
	rel := ev[1]
	if rel.kind != "release" || !reflect.DeepEqual(rel.owned, map[string][]int32{topic: {0, 1, 2, 3}}) {
		t.Fatalf("second event %+v; want release of %s [0 1 2 3]", rel, topic)
	}
	if !reflect.DeepEqual(rel.ownersAtCall, all) {
		t.Fatalf("owner znodes during BeforeReleasingPartitions %v; want still %v", rel.ownersAtCall, all)
	}
	if rel.commitErr != nil {
		t.Fatalf("CommitOffsets from BeforeReleasingPartitions: %v", rel.commitErr)
	}
	// Every later call alternates release → start (a retried attempt with
	// nothing owned only calls start again), and the last one is the
	// assignment ZooKeeper shows.
	for i := 2; i < len(ev); i++ {
		if ev[i].kind == "release" && ev[i-1].kind == "release" {
			t.Fatalf("events %d and %d are both releases: %+v", i-1, i, ev)
		}
		if ev[i].kind == "start" && ev[i].consumerID != "g_c1" {
			t.Fatalf("event %d has consumer id %q", i, ev[i].consumerID)
		}
	}
	if last := ev[len(ev)-1]; last.kind != "start" || !reflect.DeepEqual(last.assignment, want) {
		t.Fatalf("last event %+v; want start with %v", last, want)
	}
}
