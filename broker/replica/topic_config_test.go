package replica

import (
	"context"
	"sync"
	"testing"

	"samsa/broker/storage"
	"samsa/kafka"
)

// A LeaderAndIsr naming many partitions of a few topics looks each
// topic's config up once (a lookup may be a ZooKeeper read), and every
// partition still gets its topic's min.insync.replicas.
func TestReplicaLeaderAndIsrConfigOncePerTopic(t *testing.T) {
	logs := &dirLogs{dir: t.TempDir(), logs: map[kafka.TopicPartition]*storage.Log{}}
	var mu sync.Mutex
	calls := map[string]int{}
	m, err := New(Config{BrokerID: 1, Logs: logs, TopicConfig: func(topic string) (TopicConfig, error) {
		mu.Lock()
		calls[topic]++
		mu.Unlock()
		minISR := 1
		if topic == "b" {
			minISR = 2
		}
		return TopicConfig{Log: storage.DefaultConfig(), MinInsyncReplicas: minISR}, nil
	}})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { m.Close(); logs.closeAll() })
	var parts []PartitionState
	for _, topic := range []string{"a", "b"} {
		for p := int32(0); p < 20; p++ {
			parts = append(parts, PartitionState{TopicPartition: kafka.TopicPartition{Topic: topic, Partition: p},
				Leader: 1, LeaderEpoch: 0, ISR: []int32{1}, Replicas: []int32{1}})
		}
	}
	res, err := m.BecomeLeaderOrFollower(context.Background(), LeaderAndIsr{ControllerEpoch: 1, Partitions: parts})
	if err != nil {
		t.Fatal(err)
	}
	for tp, e := range res {
		if e != nil {
			t.Fatalf("%v: %v", tp, e)
		}
	}
	if calls["a"] != 1 || calls["b"] != 1 {
		t.Fatalf("TopicConfig calls per topic: %v, want one each", calls)
	}
	for _, ps := range parts {
		p := m.Partition(ps.TopicPartition)
		p.mu.RLock()
		got := p.mu.minISR
		p.mu.RUnlock()
		if want := map[string]int{"a": 1, "b": 2}[ps.Topic]; got != want {
			t.Fatalf("%v: min ISR %d, want %d", ps.TopicPartition, got, want)
		}
	}
}
