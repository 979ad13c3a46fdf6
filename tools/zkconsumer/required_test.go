package zkconsumer

import (
	"context"
	"fmt"
	"sync"
	"testing"
	"time"
)

// Tests required by issue 7 (legacy ZooKeeper consumer) that the other
// tests do not cover; docs/zkconsumer.md maps every required test to its
// place.

// TestZKConsumerRequiredRoundRobinOwners: consumers c1, c2, c3 of group
// rrg (ids rrg_c1..rrg_c3, Kafka's <group>_<consumer.id>) with two streams
// each on the 12-partition topic "rr" own exactly what Kafka's roundrobin
// assignor gives, worked out here by hand rather than with the package's
// assignor. Threads sort as text: rrg_c1-0 rrg_c1-1 rrg_c2-0 ... rrg_c3-1.
// Partitions sort by the Java hash of "[rr,p]": [rr,10] (-1766146867),
// [rr,11] (-1766146836), then [rr,0] (-1580993122) to [rr,9] (each +31).
// Dealing them in turn gives the table below.
func TestZKConsumerRequiredRoundRobinOwners(t *testing.T) {
	e := newZKEnv(t)
	e.addBroker(t, 1)
	e.addTopic(t, "rr", 12)
	want := map[int32]string{
		10: "rrg_c1-0", 11: "rrg_c1-1", 0: "rrg_c2-0", 1: "rrg_c2-1", 2: "rrg_c3-0", 3: "rrg_c3-1",
		4: "rrg_c1-0", 5: "rrg_c1-1", 6: "rrg_c2-0", 7: "rrg_c2-1", 8: "rrg_c3-0", 9: "rrg_c3-1",
	}
	for _, id := range []string{"c1", "c2", "c3"} {
		cfg := testConfig(e.connect, "rrg", id)
		cfg.PartitionAssignmentStrategy = StrategyRoundRobin
		startStatic(t, newConnector(t, cfg), map[string]int{"rr": 2})
	}
	waitFor(t, 25*time.Second, func() error {
		owners, _ := e.zkOwners("rrg", "rr", 12)
		for p := int32(0); p < 12; p++ {
			got := owners[TopicPartition{Topic: "rr", Partition: p}]
			if got != want[p] {
				return fmt.Errorf("partition %d owned by %q, want %q (owners %v)", p, got, want[p], owners)
			}
		}
		return nil
	})
}

// TestZKConsumerRequiredTenJoinAtOnce: ten consumers that register at the
// same moment settle within Kafka's default retry budget
// (rebalance.max.retries = 4, here with a 500 ms backoff): every first
// rebalance (CreateMessageStreams) succeeds, every consumer's latest
// rebalance succeeded, every partition of a 12-partition topic has exactly one owner,
// each consumer owns one or two, and ZooKeeper and every consumer agree.
func TestZKConsumerRequiredTenJoinAtOnce(t *testing.T) {
	e := newZKEnv(t)
	e.addBroker(t, 1)
	e.addTopic(t, "ten", 12)
	members := make([]*Connector, 10)
	for i := range members {
		cfg := testConfig(e.connect, "teng", fmt.Sprintf("c%02d", i))
		cfg.PartitionAssignmentStrategy = StrategyRoundRobin
		cfg.RebalanceMaxRetries = 4
		cfg.RebalanceBackoff = 500 * time.Millisecond
		members[i] = newConnector(t, cfg)
	}
	var wg sync.WaitGroup
	errs := make([]error, len(members))
	for i, c := range members {
		wg.Add(1)
		go func() {
			defer wg.Done()
			ctx, cancel := context.WithTimeout(context.Background(), 25*time.Second)
			defer cancel()
			_, errs[i] = c.CreateMessageStreams(ctx, map[string]int{"ten": 1})
		}()
	}
	wg.Wait()
	for i, err := range errs {
		if err != nil {
			t.Fatalf("consumer %d: %v", i, err)
		}
	}
	waitFor(t, 20*time.Second, func() error {
		for _, c := range members {
			if _, err := c.Rebalances(); err != nil {
				return fmt.Errorf("%s: %w", c.ConsumerID(), err)
			}
		}
		owners, _ := e.zkOwners("teng", "ten", 12)
		perThread := map[string]int{}
		for _, o := range owners {
			perThread[o]++
		}
		if len(owners) != 12 || len(perThread) != 10 {
			return fmt.Errorf("%d partitions owned by %d threads: %v", len(owners), len(perThread), owners)
		}
		for th, n := range perThread {
			if n < 1 || n > 2 {
				return fmt.Errorf("thread %s owns %d partitions", th, n)
			}
		}
		return e.converged("teng", map[string]int{"ten": 12}, members, StrategyRoundRobin)
	})
}
