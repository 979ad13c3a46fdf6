package controller

import (
	"fmt"
	"slices"
	"testing"

	"github.com/twmb/franz-go/pkg/kmsg"

	"samsa/internal/testwait"
	"samsa/zkutil"
	"samsa/zkutil/zktest"
)

// wantState waits until topic/p's state znode has leader, ISR and leader epoch.
func wantState(t *testing.T, zc *zkutil.Client, topic string, p, leader int32, isr []int32, leaderEpoch int32) {
	t.Helper()
	testwait.For(t, waitTimeout, func() error {
		st, err := partitionState(t, zc, topic, p)
		if err != nil {
			return err
		}
		if st.Leader != leader || !slices.Equal(st.ISR, isr) || st.LeaderEpoch != leaderEpoch {
			return fmt.Errorf("%s-%d state %+v, want leader %d isr %v leader epoch %d", topic, p, st, leader, isr, leaderEpoch)
		}
		return nil
	})
}

// TestControllerBrokerFailure follows onBrokerFailure (reference §3.3, §3.5): partitions led by
// the dead broker elect "the first live replica in assignment order that is in the ISR", the
// dead replica leaves every ISR, and a partition without an eligible replica keeps its ISR
// with leader -1.
func TestControllerBrokerFailure(t *testing.T) {
	t.Parallel()
	cl, n1 := newActiveCluster(t, nil)
	z2, z3 := cl.zk(), cl.zk()
	cl.registerBroker(z2, 2, "")
	cl.registerBroker(z3, 3, "")
	admin := cl.zk()
	waitBrokerKnown(t, cl, 3)
	createTopic(t, admin, "f", map[int32][]int32{0: {2, 3}, 1: {3, 2}, 2: {2}})
	wantState(t, admin, "f", 0, 2, []int32{2, 3}, 0)
	wantState(t, admin, "f", 2, 2, []int32{2}, 0)

	z2.Close() // broker 2 dies

	wantState(t, admin, "f", 0, 3, []int32{3}, 1)
	wantState(t, admin, "f", 1, 3, []int32{3}, 1)
	wantState(t, admin, "f", 2, NoLeader, []int32{2}, 1)
	testwait.For(t, waitTimeout, func() error {
		got := leaderAndIsrFor(cl.rec, 3, "f", 0)
		if len(got) == 0 || got[len(got)-1].Leader != 3 || got[len(got)-1].LeaderEpoch != 1 {
			return fmt.Errorf("broker 3 LeaderAndIsr for f-0: %+v", got)
		}
		um, reqs := updateMetadataFor(cl.rec, 1, "f", 0)
		if len(um) == 0 {
			return fmt.Errorf("no UpdateMetadata")
		}
		last := um[len(um)-1]
		if last.Leader != 3 || !slices.Equal(last.OfflineReplicas, []int32{2}) || len(reqs[len(reqs)-1].LiveBrokers) != 2 {
			return fmt.Errorf("UpdateMetadata f-0 %+v", last)
		}
		if v := n1.c.metrics.offline.Load(); v != 1 {
			return fmt.Errorf("OfflinePartitionsCount %d, want 1", v)
		}
		return nil
	})

	// Broker 2 comes back: it gets every partition's metadata and LeaderAndIsr for its
	// replicas, and f-2 (only replica 2, still in its ISR) elects it again.
	z2b := cl.zk()
	cl.registerBroker(z2b, 2, "")
	wantState(t, admin, "f", 2, 2, []int32{2}, 2)
	testwait.For(t, waitTimeout, func() error {
		for _, p := range []int32{0, 1, 2} {
			if len(leaderAndIsrFor(cl.rec, 2, "f", p)) == 0 {
				return fmt.Errorf("broker 2 has no LeaderAndIsr for f-%d", p)
			}
		}
		if v := n1.c.metrics.offline.Load(); v != 0 {
			return fmt.Errorf("OfflinePartitionsCount %d, want 0", v)
		}
		return nil
	})
}

// TestControllerUncleanLeaderElection: with no live ISR member, "unclean.leader.election.enable
// (topic override read from ZK)" lets the first live replica lead with ISR [leader].
func TestControllerUncleanLeaderElection(t *testing.T) {
	t.Parallel()
	cl, n1 := newActiveCluster(t, nil)
	z2 := cl.zk()
	cl.registerBroker(z2, 2, "")
	admin := cl.zk()
	waitBrokerKnown(t, cl, 2)
	// Broker 3 is down at creation, so the ISR is [2] only.
	createTopic(t, admin, "clean", map[int32][]int32{0: {2, 3}})
	if err := admin.CreateTopic("dirty", map[int32][]int32{0: {2, 3}}, map[string]string{"unclean.leader.election.enable": "true"}); err != nil {
		t.Fatal(err)
	}
	wantState(t, admin, "clean", 0, 2, []int32{2}, 0)
	wantState(t, admin, "dirty", 0, 2, []int32{2}, 0)
	z3 := cl.zk()
	cl.registerBroker(z3, 3, "")
	testwait.For(t, waitTimeout, func() error {
		if len(leaderAndIsrFor(cl.rec, 3, "dirty", 0)) == 0 {
			return fmt.Errorf("broker 3 not started on the controller")
		}
		return nil
	})
	z2.Close()
	wantState(t, admin, "clean", 0, NoLeader, []int32{2}, 1)
	wantState(t, admin, "dirty", 0, 3, []int32{3}, 1)
	if c := n1.reg.Get(MetricUncleanLeaderElectionsPerSec); c == nil {
		t.Fatal("no unclean meter")
	} else if n := c.(interface{ Count() int64 }).Count(); n != 1 {
		t.Fatalf("unclean elections %d, want 1", n)
	}
}

// TestControllerFailoverResendsState: a new controller sends every broker an UpdateMetadata
// with the live brokers and no partition before any LeaderAndIsr (Kafka 2.8's
// onControllerFailover: sendUpdateMetadataRequest(liveOrShuttingDownBrokerIds, Set.empty)),
// then LeaderAndIsr to each live replica, each followed by its partitions' UpdateMetadata,
// all with its new epoch; partitions whose leader died meanwhile get a new leader.
func TestControllerFailoverResendsState(t *testing.T) {
	t.Parallel()
	cl, n1 := newActiveCluster(t, nil)
	z3 := cl.zk()
	cl.registerBroker(z3, 3, "")
	admin := cl.zk()
	createTopic(t, admin, "keep", map[int32][]int32{0: {1, 3}, 1: {3, 1}})
	wantState(t, admin, "keep", 0, 1, []int32{1, 3}, 0)
	wantState(t, admin, "keep", 1, 3, []int32{3, 1}, 0)
	n2 := cl.startNode(2, nil)
	// Broker 1 (controller and leader of keep-0) goes away entirely.
	n1.c.Shutdown()
	n1.zk.Close()
	waitActive(t, n2)
	if n2.c.Epoch() != 2 {
		t.Fatalf("epoch %d", n2.c.Epoch())
	}
	// One write (epoch 1): the election replaces the dead leader 1 and drops it from the
	// ISR together. Kafka 2.8 first writes leader -1 (epoch 1) and then elects (epoch 2);
	// here the partition never shows leader -1 while ISR member 3 is alive, and broker 3
	// never hears of a leaderless keep-0.
	wantState(t, admin, "keep", 0, 3, []int32{3}, 1)
	testwait.For(t, waitTimeout, func() error {
		reqs := cl.rec.requests(3, 6)
		var firstUM *kmsg.UpdateMetadataRequest
		for _, r := range reqs {
			if um := r.(*kmsg.UpdateMetadataRequest); um.ControllerEpoch == 2 {
				firstUM = um
				break
			}
		}
		if firstUM == nil {
			return fmt.Errorf("no UpdateMetadata from epoch 2")
		}
		n := 0
		for _, ts := range firstUM.TopicStates {
			n += len(ts.PartitionStates)
		}
		if n != 0 || len(firstUM.LiveBrokers) != 2 {
			return fmt.Errorf("first UpdateMetadata of epoch 2 has %d partitions and %d brokers", n, len(firstUM.LiveBrokers))
		}
		if um, _ := updateMetadataFor(cl.rec, 3, "keep", 0); len(um) == 0 || um[len(um)-1].Leader != 3 {
			return fmt.Errorf("UpdateMetadata for keep-0: %+v", um)
		}
		got := leaderAndIsrFor(cl.rec, 3, "keep", 1)
		if len(got) == 0 || got[len(got)-1].ControllerEpoch > 2 {
			return fmt.Errorf("LeaderAndIsr keep-1: %+v", got)
		}
		umAt := cl.rec.firstIndex(3, 6, func(r kmsg.Request) bool { return r.(*kmsg.UpdateMetadataRequest).ControllerEpoch == 2 })
		laiAt := cl.rec.firstIndex(3, 4, func(r kmsg.Request) bool {
			lai := r.(*kmsg.LeaderAndISRRequest)
			return lai.ControllerEpoch == 2 && lai.ControllerID == 2
		})
		if laiAt < 0 {
			return fmt.Errorf("no LeaderAndIsr from controller 2 epoch 2")
		}
		if umAt > laiAt {
			return fmt.Errorf("LeaderAndIsr (request %d) before UpdateMetadata (request %d)", laiAt, umAt)
		}
		return nil
	})
	for _, lai := range leaderAndIsrFor(cl.rec, 3, "keep", 0) {
		if lai.Leader < 0 {
			t.Fatalf("LeaderAndIsr for keep-0 with leader %d: %+v", lai.Leader, lai)
		}
	}
}

// TestControllerBouncedBroker: a broker whose session expired re-registers with a new broker
// epoch (czxid); the controller treats it as failed then started (Kafka's bounced brokers)
// and its next requests carry the new broker epoch.
func TestControllerBouncedBroker(t *testing.T) {
	t.Parallel()
	cl, _ := newActiveCluster(t, nil)
	z2, admin := cl.zk(), cl.zk()
	reg := zkutil.BrokerRegistration{ID: 2, Version: 4, JMXPort: -1,
		Endpoints: []zkutil.Endpoint{{ListenerName: "PLAINTEXT", SecurityProtocol: "PLAINTEXT", Host: "127.0.0.1", Port: brokerPort(2)}}}
	epoch1, err := z2.RegisterBroker(reg)
	if err != nil {
		t.Fatal(err)
	}
	// The topic must find broker 2 live. zkutil delivers watch events in
	// ZooKeeper's order, but the controller is marked active when its
	// failover starts: a broker registered while the failover still reads
	// the cluster, then a topic, can give the topic's first election only
	// the brokers the load saw (leader 1, ISR [1]), as in Kafka; broker 2's
	// change then follows. The bounce is what this test is about.
	waitBrokerKnown(t, cl, 2)
	createTopic(t, admin, "b", map[int32][]int32{0: {2, 1}})
	wantState(t, admin, "b", 0, 2, []int32{2, 1}, 0)
	reregistered := make(chan int64, 1)
	z2.OnNewSession(func() {
		go func() {
			e, err := z2.RegisterBroker(reg)
			if err != nil {
				t.Error(err)
			}
			reregistered <- e
		}()
	})
	zktest.ExpireSession(t, z2)
	epoch2 := <-reregistered
	if epoch2 <= epoch1 {
		t.Fatalf("broker epoch %d after %d", epoch2, epoch1)
	}
	testwait.For(t, waitTimeout, func() error {
		lais := cl.rec.requests(2, 4)
		if len(lais) == 0 {
			return fmt.Errorf("no LeaderAndIsr")
		}
		last := lais[len(lais)-1].(*kmsg.LeaderAndISRRequest)
		if last.BrokerEpoch != epoch2 {
			return fmt.Errorf("last LeaderAndIsr to broker 2 has broker epoch %d, want %d", last.BrokerEpoch, epoch2)
		}
		return nil
	})
	// Whatever order the controller saw (one bounce, or a death then a start), broker 2 leads
	// again or broker 1 took over with a bumped epoch, and both are live in UpdateMetadata.
	testwait.For(t, waitTimeout, func() error {
		st, err := partitionState(t, admin, "b", 0)
		if err != nil {
			return err
		}
		if st.Leader != 1 && st.Leader != 2 {
			return fmt.Errorf("state %+v", st)
		}
		_, reqs := updateMetadataFor(cl.rec, 1, "b", 0)
		if len(reqs) == 0 || len(reqs[len(reqs)-1].LiveBrokers) != 2 {
			return fmt.Errorf("UpdateMetadata live brokers")
		}
		return nil
	})
}

// TestControllerBrokerModification: a broker that rewrites its registration (same session,
// new endpoint) is announced to every broker, and the controller connects to the new endpoint.
func TestControllerBrokerModification(t *testing.T) {
	t.Parallel()
	cl, _ := newActiveCluster(t, nil)
	z2, admin := cl.zk(), cl.zk()
	reg := zkutil.BrokerRegistration{ID: 2, Version: 4, JMXPort: -1,
		Endpoints: []zkutil.Endpoint{{ListenerName: "PLAINTEXT", SecurityProtocol: "PLAINTEXT", Host: "127.0.0.1", Port: brokerPort(2)}}}
	if _, err := z2.RegisterBroker(reg); err != nil {
		t.Fatal(err)
	}
	waitBrokerKnown(t, cl, 2)
	moved := brokerPort(2) + 100 // the recorder sees this port as "broker 102"
	reg.Endpoints[0].Port = moved
	if _, err := z2.RegisterBroker(reg); err != nil {
		t.Fatal(err)
	}
	testwait.For(t, waitTimeout, func() error {
		ums := cl.rec.requests(1, 6)
		last := ums[len(ums)-1].(*kmsg.UpdateMetadataRequest)
		for _, lb := range last.LiveBrokers {
			if lb.ID == 2 && lb.Endpoints[0].Port == moved {
				return nil
			}
		}
		return fmt.Errorf("last UpdateMetadata to broker 1: %+v", last.LiveBrokers)
	})
	createTopic(t, admin, "m", map[int32][]int32{0: {2}})
	testwait.For(t, waitTimeout, func() error {
		if len(leaderAndIsrFor(cl.rec, 102, "m", 0)) == 0 {
			return fmt.Errorf("no LeaderAndIsr at the new endpoint")
		}
		return nil
	})
}
