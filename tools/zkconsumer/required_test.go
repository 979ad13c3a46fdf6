package zkconsumer

import (
	"fmt"
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
