package controller

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"testing"
	"time"

	"samsa/internal/testwait"
	"samsa/kafka"
	"samsa/zkutil"
)

// preferredSetup: brokers 1 (controller), 2 and 3; topic "p" with p0 [2,3] and p1 [3,2];
// broker 2 bounces so that broker 3 leads both. It returns broker 2's new session.
func preferredSetup(t *testing.T, cl *cluster, mod func(*Config)) (*node, *zkutil.Client) {
	t.Helper()
	n1 := cl.startNode(1, mod)
	waitActive(t, n1)
	z2, z3, admin := cl.zk(), cl.zk(), cl.zk()
	cl.registerBroker(z2, 2, "")
	cl.registerBroker(z3, 3, "")
	waitBrokerKnown(t, cl, 3)
	createTopic(t, admin, "p", map[int32][]int32{0: {2, 3}, 1: {3, 2}})
	wantState(t, admin, "p", 0, 2, []int32{2, 3}, 0)
	z2.Close()
	wantState(t, admin, "p", 0, 3, []int32{3}, 1)
	z2b := cl.zk()
	cl.registerBroker(z2b, 2, "")
	// The leader (3) would expand the ISR when 2 catches up; do it as the leader would.
	st, zkv, err := admin.GetPartitionState("p", 0)
	if err != nil {
		t.Fatal(err)
	}
	st.ISR = []int32{3, 2}
	if _, err := admin.UpdatePartitionStateFromLeader(kafka.TopicPartition{Topic: "p", Partition: 0}, st, zkv); err != nil {
		t.Fatal(err)
	}
	if err := admin.WriteIsrChangeNotification([]kafka.TopicPartition{{Topic: "p", Partition: 0}}); err != nil {
		t.Fatal(err)
	}
	testwait.For(t, waitTimeout, func() error {
		var isr []int32
		if err := n1.c.sync(context.Background(), func() { isr = n1.c.cc.leadership[kafka.TopicPartition{Topic: "p", Partition: 0}].Isr }); err != nil {
			return err
		}
		if len(isr) != 2 {
			return fmt.Errorf("controller ISR %v", isr)
		}
		return nil
	})
	return n1, admin
}

// TestControllerElectLeadersPreferred: ElectLeaders(PREFERRED) moves leadership back to the
// first replica when it is live and in the ISR, and reports ELECTION_NOT_NEEDED and
// UNKNOWN_TOPIC_OR_PARTITION per partition.
func TestControllerElectLeadersPreferred(t *testing.T) {
	t.Parallel()
	cl := newCluster(t)
	n1, admin := preferredSetup(t, cl, nil)
	ctx, cancel := context.WithTimeout(context.Background(), waitTimeout)
	defer cancel()
	res, err := n1.c.ElectLeaders(ctx, ElectionPreferred, []kafka.TopicPartition{{Topic: "p", Partition: 0}, {Topic: "p", Partition: 1}, {Topic: "nope", Partition: 0}})
	if err != nil {
		t.Fatal(err)
	}
	if res[kafka.TopicPartition{Topic: "p", Partition: 0}] != nil || !errors.Is(res[kafka.TopicPartition{Topic: "p", Partition: 1}], ErrElectionNotNeeded) ||
		!errors.Is(res[kafka.TopicPartition{Topic: "nope", Partition: 0}], ErrUnknownTopicOrPartition) {
		t.Fatalf("results %v", res)
	}
	wantState(t, admin, "p", 0, 2, []int32{3, 2}, 2)
}

// TestControllerPreferredReplicaElectionZnode: the /admin/preferred_replica_election znode
// triggers the election and is deleted afterwards.
func TestControllerPreferredReplicaElectionZnode(t *testing.T) {
	t.Parallel()
	cl := newCluster(t)
	_, admin := preferredSetup(t, cl, nil)
	if err := admin.CreatePreferredReplicaElection([]kafka.TopicPartition{{Topic: "p", Partition: 0}}); err != nil {
		t.Fatal(err)
	}
	wantState(t, admin, "p", 0, 2, []int32{3, 2}, 2)
	testwait.For(t, waitTimeout, func() error {
		if _, err := admin.GetPreferredReplicaElection(); !errors.Is(err, zkutil.ErrNoNode) {
			return fmt.Errorf("znode still there: %v", err)
		}
		return nil
	})
}

// TestControllerAutoLeaderRebalance: with auto.leader.rebalance.enable the imbalance check
// moves leadership back without any trigger. The timer is injected (Config.AfterFunc): the
// test fires it instead of waiting leader.imbalance.check.interval.seconds.
func TestControllerAutoLeaderRebalance(t *testing.T) {
	t.Parallel()
	cl := newCluster(t)
	var mu sync.Mutex
	var pending []func()
	fire := func() {
		mu.Lock()
		fs := pending
		pending = nil
		mu.Unlock()
		for _, f := range fs {
			f()
		}
	}
	_, admin := preferredSetup(t, cl, func(c *Config) {
		c.AutoLeaderRebalanceEnable = true
		c.LeaderImbalanceCheckInterval = time.Hour
		c.AfterFunc = func(_ time.Duration, f func()) func() bool {
			mu.Lock()
			pending = append(pending, f)
			mu.Unlock()
			return func() bool { return true }
		}
	})
	testwait.For(t, waitTimeout, func() error {
		fire()
		st, err := partitionState(t, admin, "p", 0)
		if err != nil {
			return err
		}
		if st.Leader != 2 {
			return fmt.Errorf("state %+v", st)
		}
		return nil
	})
	wantState(t, admin, "p", 0, 2, []int32{3, 2}, 2)
}

// TestControllerElectLeadersUnclean: ElectLeaders(UNCLEAN) elects a live replica outside
// the ISR for a leaderless partition even though the topic does not allow it by config.
func TestControllerElectLeadersUnclean(t *testing.T) {
	t.Parallel()
	cl, n1 := newActiveCluster(t, nil)
	z2, admin := cl.zk(), cl.zk()
	cl.registerBroker(z2, 2, "")
	waitBrokerKnown(t, cl, 2) // live before the topic arrives (see TestControllerBouncedBroker)
	createTopic(t, admin, "u", map[int32][]int32{0: {2, 3}})
	wantState(t, admin, "u", 0, 2, []int32{2}, 0)
	cl.registerBroker(cl.zk(), 3, "")
	z2.Close()
	wantState(t, admin, "u", 0, NoLeader, []int32{2}, 1)
	ctx, cancel := context.WithTimeout(context.Background(), waitTimeout)
	defer cancel()
	res, err := n1.c.ElectLeaders(ctx, ElectionUnclean, []kafka.TopicPartition{{Topic: "u", Partition: 0}})
	if err != nil || res[kafka.TopicPartition{Topic: "u", Partition: 0}] != nil {
		t.Fatalf("results %v, %v", res, err)
	}
	wantState(t, admin, "u", 0, 3, []int32{3}, 2)
}

// TestControllerElectLeadersPreferredStaleCachedISR: a leader's ISR expansion that the
// controller has not heard of yet (no change notification read) does not make a preferred
// election fail: a decision on the cached state that finds no eligible leader is taken again
// on the state read from ZooKeeper (Kafka reads it before every election). CI saw
// TestClusterFencedController's preferred election fail this way.
func TestControllerElectLeadersPreferredStaleCachedISR(t *testing.T) {
	t.Parallel()
	cl := newCluster(t)
	n1 := cl.startNode(1, nil)
	waitActive(t, n1)
	z2, z3, admin := cl.zk(), cl.zk(), cl.zk()
	cl.registerBroker(z2, 2, "")
	cl.registerBroker(z3, 3, "")
	waitBrokerKnown(t, cl, 3)
	createTopic(t, admin, "p", map[int32][]int32{0: {2, 3}})
	wantState(t, admin, "p", 0, 2, []int32{2, 3}, 0)
	z2.Close()
	wantState(t, admin, "p", 0, 3, []int32{3}, 1)
	cl.registerBroker(cl.zk(), 2, "")
	testwait.For(t, waitTimeout, func() error {
		live := false
		if err := n1.c.sync(context.Background(), func() { live = n1.c.cc.isLive(2) }); err != nil {
			return err
		}
		if !live {
			return fmt.Errorf("broker 2 not live again at the controller")
		}
		return nil
	})
	// The leader (3) expands the ISR in ZooKeeper; no notification, so the cache keeps [3].
	st, zkv, err := admin.GetPartitionState("p", 0)
	if err != nil {
		t.Fatal(err)
	}
	st.ISR = []int32{3, 2}
	if _, err := admin.UpdatePartitionStateFromLeader(kafka.TopicPartition{Topic: "p", Partition: 0}, st, zkv); err != nil {
		t.Fatal(err)
	}
	var cached []int32
	if err := n1.c.sync(context.Background(), func() { cached = n1.c.cc.leadership[kafka.TopicPartition{Topic: "p", Partition: 0}].Isr }); err != nil {
		t.Fatal(err)
	}
	if len(cached) != 1 {
		t.Fatalf("cached ISR %v, want the stale [3] this test is about", cached)
	}
	ctx, cancel := context.WithTimeout(context.Background(), waitTimeout)
	defer cancel()
	res, err := n1.c.ElectLeaders(ctx, ElectionPreferred, []kafka.TopicPartition{{Topic: "p", Partition: 0}})
	if err != nil {
		t.Fatal(err)
	}
	if res[kafka.TopicPartition{Topic: "p", Partition: 0}] != nil {
		t.Fatalf("preferred election of p-0: %v, want success on ZooKeeper's ISR [3 2]", res[kafka.TopicPartition{Topic: "p", Partition: 0}])
	}
	wantState(t, admin, "p", 0, 2, []int32{3, 2}, 2)
}
