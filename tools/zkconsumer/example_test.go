package zkconsumer_test

import (
	"context"
	"fmt"
	"sync"

	"samsa/tools/zkconsumer"
)

// Kafka's own RangeAssignor example: two consumers with two streams each
// and five partitions.
func ExampleAssignRange() {
	a, err := zkconsumer.AssignRange(zkconsumer.GroupState{
		Members: map[string]map[string]int{
			"grp_C1": {"events": 2},
			"grp_C2": {"events": 2},
		},
		Partitions: map[string][]int32{"events": {0, 1, 2, 3, 4}},
	})
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println(a)
	// Output: [events,0]->grp_C1-0 [events,1]->grp_C1-0 [events,2]->grp_C1-1 [events,3]->grp_C2-0 [events,4]->grp_C2-1
}

// Round robin deals partitions in the order of the Java hash code of
// "[topic,partition]": "[a,10]" hashes negative and comes first.
func ExampleAssignRoundRobin() {
	a, err := zkconsumer.AssignRoundRobin(zkconsumer.GroupState{
		Members: map[string]map[string]int{
			"g_c1": {"a": 1},
			"g_c2": {"a": 1},
		},
		Partitions: map[string][]int32{"a": {0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10}},
	})
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println("g_c1:", a.Of("g_c1"))
	fmt.Println("g_c2:", a.Of("g_c2"))
	// Output:
	// g_c1: [a,1]->g_c1-0 [a,3]->g_c1-0 [a,5]->g_c1-0 [a,7]->g_c1-0 [a,9]->g_c1-0 [a,10]->g_c1-0
	// g_c2: [a,0]->g_c2-0 [a,2]->g_c2-0 [a,4]->g_c2-0 [a,6]->g_c2-0 [a,8]->g_c2-0
}

// Round robin refuses groups whose members subscribe differently.
func ExampleAssignRoundRobin_differentSubscriptions() {
	_, err := zkconsumer.AssignRoundRobin(zkconsumer.GroupState{
		Members: map[string]map[string]int{
			"g_c1": {"a": 1, "b": 1},
			"g_c2": {"a": 1},
		},
	})
	fmt.Println(err)
	// Output: zkconsumer: roundrobin assignment requires every consumer in the group to subscribe to the same topics with the same stream count: topic b has streams [g_c1-0] but topic a has streams [g_c1-0 g_c2-0]
}

// ParseProperties reads the old consumer's property names over Kafka's
// defaults and returns the keys it does not know.
func ExampleParseProperties() {
	cfg, unknown, err := zkconsumer.ParseProperties(map[string]string{
		"group.id":                      "billing",
		"zookeeper.connect":             "zk1:2181,zk2:2181/kafka",
		"partition.assignment.strategy": "roundrobin",
		"offsets.storage":               "kafka",
		"socket.receive.buffer.bytes":   "65536",
	})
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println(cfg.GroupID, cfg.PartitionAssignmentStrategy, cfg.OffsetsStorage, cfg.DualCommitEnabled)
	fmt.Println(cfg.RebalanceMaxRetries, cfg.RebalanceBackoff, cfg.AutoOffsetReset, cfg.AutoCommitInterval)
	fmt.Println("unknown:", unknown)
	// Output:
	// billing roundrobin kafka true
	// 4 2s largest 1m0s
	// unknown: [socket.receive.buffer.bytes]
}

// A group member reading one topic with two streams. Each stream is read by
// its own goroutine; asking for the next message marks the previous one
// processed, and only processed offsets are committed.
func ExampleConnector() {
	cfg := zkconsumer.DefaultConfig()
	cfg.GroupID = "billing"
	cfg.ZooKeeperConnect = "127.0.0.1:2181/kafka"
	ctx := context.Background()

	c, err := zkconsumer.NewConnector(ctx, cfg)
	if err != nil {
		fmt.Println(err)
		return
	}
	defer c.Close() // commits processed offsets (auto.commit.enable) and leaves the group

	streams, err := c.CreateMessageStreams(ctx, map[string]int{"invoices": 2})
	if err != nil {
		fmt.Println(err)
		return
	}
	var wg sync.WaitGroup
	for _, s := range streams["invoices"] {
		wg.Add(1)
		go func(s *zkconsumer.Stream) {
			defer wg.Done()
			for {
				m, err := s.Next(ctx)
				if err != nil {
					return // ErrClosed after Close
				}
				fmt.Printf("%s/%d@%d: %s\n", m.Topic, m.Partition, m.Offset, m.Value)
			}
		}(s)
	}
	wg.Wait()
}
