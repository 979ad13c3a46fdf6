package zkconsumer

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"sync"
	"testing"
	"time"

	"samsa/broker/brokertest"
	"samsa/internal/testwait"
	"samsa/kafka"
	"samsa/zkutil"
	"samsa/zkutil/zktest"
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
	testwait.For(t, 25*time.Second, func() error {
		owners, _ := e.zkOwners("rrg", "rr", 12)
		for p := int32(0); p < 12; p++ {
			got := owners[kafka.TopicPartition{Topic: "rr", Partition: p}]
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
	testwait.For(t, 20*time.Second, func() error {
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

// TestZKConsumerRequiredOffsetsSurviveRestart: for offsets.storage
// zookeeper, kafka and kafka with dual.commit.enabled, offsets committed
// by one consumer survive its exit and a restart of the broker (the group
// coordinator reloads __consumer_offsets); the next consumer resumes
// exactly where the first stopped, and the offsets sit where each storage
// keeps them.
func TestZKConsumerRequiredOffsetsSurviveRestart(t *testing.T) {
	c := brokertest.NewCluster(t, 1,
		brokertest.WithProperty("offsets.topic.num.partitions", "3"),
		brokertest.WithProperty("offsets.topic.replication.factor", "1"))
	c.CreateTopic(t, "surv", 1, 1)
	e := &e2e{cluster: c, topic: "surv", parts: 1, seen: map[string]int{}}
	e.produce(t, 0, 30)
	zk := c.ZooKeeper(t)

	storages := []struct {
		group, storage string
		dual           bool
	}{{"s-zk", StorageZooKeeper, false}, {"s-kafka", StorageKafka, false}, {"s-dual", StorageKafka, true}}
	// consume reads n messages as a fresh member, commits them, exits and
	// returns the first offset it was given.
	consume := func(group, storage string, dual bool, n int) int64 {
		t.Helper()
		cfg := e.config(group, "c")
		cfg.OffsetsStorage = storage
		cfg.DualCommitEnabled = dual
		cfg.AutoCommitEnable = false
		conn := newConnector(t, cfg)
		s := startStatic(t, conn, map[string]int{"surv": 1})["surv"][0]
		msgs := consumeN(t, s, n)
		s.MarkDone()
		if err := conn.CommitOffsets(context.Background()); err != nil {
			t.Fatal(err)
		}
		if err := conn.Close(); err != nil {
			t.Fatal(err)
		}
		return msgs[0].Offset
	}
	for _, s := range storages {
		if first := consume(s.group, s.storage, s.dual, 10); first != 0 {
			t.Fatalf("%s: first consumer started at %d, want 0", s.group, first)
		}
	}
	c.Kill(0)
	c.Restart(0)
	c.WaitForLeader(t, "surv", 0)
	for _, s := range storages {
		if first := consume(s.group, s.storage, s.dual, 5); first != 10 {
			t.Fatalf("%s: after the restart the consumer started at %d, want 10", s.group, first)
		}
		zkOff, zkErr := zk.GetConsumerOffset(s.group, "surv", 0)
		switch {
		case s.storage == StorageZooKeeper || s.dual:
			if zkErr != nil || zkOff != 15 {
				t.Errorf("%s: zookeeper offset %d (%v), want 15", s.group, zkOff, zkErr)
			}
		case !errors.Is(zkErr, zkutil.ErrNoNode):
			t.Errorf("%s: zookeeper offset written with offsets.storage=kafka: %d %v", s.group, zkOff, zkErr)
		}
		if s.storage == StorageKafka {
			if got := kafkaOffset(t, e, s.group, "surv", 0); got != 15 {
				t.Errorf("%s: kafka offset %d, want 15", s.group, got)
			}
		}
	}
}

// TestZKConsumerRequiredSessionEndsMidStream: while records flow, c1's
// ZooKeeper session ends (expired on the server, as when its process
// dies); c2 rebalances, every partition ends with exactly one owner among
// the registered consumers, and consumption continues: every record,
// including those produced after the expiry, is delivered.
func TestZKConsumerRequiredSessionEndsMidStream(t *testing.T) {
	const n = 400
	e := newE2E(t, 1, "gone", 4)
	e.produce(t, 0, n/2)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	var wg sync.WaitGroup
	start := func(id string) *Connector {
		c := newConnector(t, e.config("g", id))
		for _, s := range startStatic(t, c, map[string]int{"gone": 1})["gone"] {
			e.read(ctx, &wg, s)
		}
		return c
	}
	c1, c2 := start("c1"), start("c2")
	testwait.For(t, 25*time.Second, func() error {
		if d := e.distinct(); d < n/4 {
			return fmt.Errorf("%d of %d consumed before the expiry", d, n/4)
		}
		return nil
	})
	before := mustRebalances(c2)
	zktest.ExpireSession(t, c1.zk)
	testwait.For(t, 25*time.Second, func() error {
		if got := mustRebalances(c2); got <= before {
			return errors.New("c2 has not rebalanced since c1's session ended")
		}
		return nil
	})
	e.produce(t, n/2, n/2)
	zk := e.cluster.ZooKeeper(t)
	testwait.For(t, 25*time.Second, func() error {
		if d := e.distinct(); d < n {
			return fmt.Errorf("%d of %d consumed", d, n)
		}
		ids, err := zk.GetConsumerIDs("g")
		if err != nil {
			return err
		}
		for p := int32(0); p < 4; p++ {
			o, err := zk.GetPartitionOwner("g", "gone", p)
			if err != nil {
				return fmt.Errorf("partition %d: %w", p, err)
			}
			if !slices.ContainsFunc(ids, func(id string) bool { return o == id+"-0" }) {
				return fmt.Errorf("partition %d owned by %q, not a thread of %v", p, o, ids)
			}
		}
		return nil
	})
	cancel()
	wg.Wait()
	e.checkAll(t, n, false)
}

// TestZKConsumerRequiredNoDuplicatesWhenCommittingAfterProcessing: processing is slower
// than fetching (records queue up ahead), members join and leave while the
// group consumes, and the application marks each record done right after
// processing it (auto.commit.enable commits at every rebalance): every
// record is seen, none twice.
func TestZKConsumerRequiredNoDuplicatesWhenCommittingAfterProcessing(t *testing.T) {
	const n = 300
	e := newE2E(t, 1, "slowp", 4)
	e.produce(t, 0, n)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	var wg sync.WaitGroup
	start := func(id string) *Connector {
		c := newConnector(t, e.config("g", id))
		for _, s := range startStatic(t, c, map[string]int{"slowp": 1})["slowp"] {
			wg.Add(1)
			go func() {
				defer wg.Done()
				for {
					m, err := s.Next(ctx)
					if err != nil {
						return
					}
					e.mu.Lock()
					e.seen[string(m.Value)]++
					e.mu.Unlock()
					time.Sleep(5 * time.Millisecond) // the work: slower than fetching
					s.MarkDone()
				}
			}()
		}
		return c
	}
	waitDistinct := func(want int) {
		testwait.For(t, 25*time.Second, func() error {
			if d := e.distinct(); d < want {
				return fmt.Errorf("%d of %d consumed", d, want)
			}
			return nil
		})
	}
	c1 := start("c1")
	waitDistinct(40)
	c2 := start("c2")
	waitDistinct(100)
	c3 := start("c3")
	waitDistinct(160)
	if err := c1.Close(); err != nil {
		t.Fatal(err)
	}
	waitDistinct(n)
	e.waitDrained(t, c2, c3)
	cancel()
	wg.Wait()
	e.checkAll(t, n, true)
}
