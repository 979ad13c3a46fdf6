package metadata

import (
	"sync"
	"testing"
)

func rack(s string) *string { return &s }

func TestMetadataApplyReplacesBrokersKeepsPartitions(t *testing.T) {
	c := New()
	if c.Snapshot().ControllerID != -1 {
		t.Fatal("empty cache must have controller -1")
	}
	c.Apply(Update{
		ControllerID: 1, ControllerEpoch: 3,
		LiveBrokers: []Broker{{ID: 2, Endpoints: []Endpoint{{"PLAINTEXT", "h2", 9092, 0}}}, {ID: 1, Rack: rack("r1")}},
		Partitions: []PartitionState{
			{Topic: "a", Partition: 0, Leader: 1, ISR: []int32{1, 2}, Replicas: []int32{1, 2}},
			{Topic: "a", Partition: 1, Leader: 2, ISR: []int32{2}, Replicas: []int32{2, 1}},
		},
	})
	s1 := c.Snapshot()
	if got := s1.BrokerIDs; len(got) != 2 || got[0] != 1 || got[1] != 2 {
		t.Fatalf("broker ids %v", got)
	}
	if e, ok := s1.Brokers[2].Endpoint("PLAINTEXT"); !ok || e.Port != 9092 {
		t.Fatalf("endpoint %v %v", e, ok)
	}
	c.Apply(Update{ControllerID: 2, ControllerEpoch: 4, LiveBrokers: []Broker{{ID: 2}},
		Partitions: []PartitionState{{Topic: "b", Partition: 0, Leader: 2}}})
	s2 := c.Snapshot()
	if s2.Alive(1) || !s2.Alive(2) {
		t.Fatal("live broker set not replaced")
	}
	if _, ok := s2.Partition("a", 1); !ok {
		t.Fatal("partition a-1 lost")
	}
	if names := s2.TopicNames(); len(names) != 2 || names[0] != "a" || names[1] != "b" {
		t.Fatalf("topics %v", names)
	}
	// The old snapshot is unchanged (copy on write).
	if _, ok := s1.Partition("b", 0); ok || !s1.Alive(1) {
		t.Fatal("old snapshot mutated")
	}
}

func TestMetadataLeaderDuringDeleteRemovesTopic(t *testing.T) {
	c := New()
	c.Apply(Update{Partitions: []PartitionState{{Topic: "a", Partition: 0, Leader: 1}, {Topic: "a", Partition: 1, Leader: 1}}})
	del := c.Apply(Update{Partitions: []PartitionState{{Topic: "a", Partition: 0, Leader: LeaderDuringDelete}}})
	if len(del) != 1 {
		t.Fatalf("deleted %v", del)
	}
	if ps := c.Snapshot().Partitions("a"); len(ps) != 1 || ps[0].Partition != 1 {
		t.Fatalf("partitions %v", ps)
	}
	c.Apply(Update{Partitions: []PartitionState{{Topic: "a", Partition: 1, Leader: LeaderDuringDelete}}})
	if _, ok := c.Snapshot().Topics["a"]; ok {
		t.Fatal("empty topic kept")
	}
}

func TestMetadataConcurrentApplyAndRead(t *testing.T) {
	c := New()
	var wg sync.WaitGroup
	for i := 0; i < 4; i++ {
		wg.Add(1)
		go func(i int) {
			defer wg.Done()
			for j := 0; j < 200; j++ {
				c.Apply(Update{Partitions: []PartitionState{{Topic: "t", Partition: int32(i), Leader: int32(j)}}})
				_ = c.Snapshot().Partitions("t")
			}
		}(i)
	}
	wg.Wait()
	if n := len(c.Snapshot().Partitions("t")); n != 4 {
		t.Fatalf("lost updates: %d partitions", n)
	}
}

func TestMetadataTopicIDs(t *testing.T) {
	c := New()
	id := [16]byte{1, 2, 3}
	c.Apply(Update{Partitions: []PartitionState{{Topic: "a", Partition: 0, Leader: 1}}, TopicIDs: map[string][16]byte{"a": id}})
	c.Apply(Update{Partitions: []PartitionState{{Topic: "a", Partition: 0, Leader: 2}}, TopicIDs: map[string][16]byte{"a": {}}})
	if c.Snapshot().TopicIDs["a"] != id {
		t.Fatal("a zero id replaced a known one")
	}
	c.Apply(Update{Partitions: []PartitionState{{Topic: "a", Partition: 0, Leader: LeaderDuringDelete}}})
	if _, ok := c.Snapshot().TopicIDs["a"]; ok {
		t.Fatal("id of a deleted topic kept")
	}
}
