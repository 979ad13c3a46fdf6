package controller

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"testing"

	"github.com/twmb/franz-go/pkg/kmsg"

	"samsa/internal/testwait"
	"samsa/kafka"
	"samsa/zkutil"
)

// leaderAndIsrFor returns the partition states for topic/p found in LeaderAndIsr requests
// recorded for broker.
func leaderAndIsrFor(rec *recorder, broker int32, topic string, p int32) []kmsg.LeaderAndISRRequestTopicPartition {
	var out []kmsg.LeaderAndISRRequestTopicPartition
	for _, r := range rec.requests(broker, 4) {
		req := r.(*kmsg.LeaderAndISRRequest)
		for _, ts := range req.TopicStates {
			for _, ps := range ts.PartitionStates {
				if ts.Topic == topic && ps.Partition == p {
					out = append(out, ps)
				}
			}
		}
	}
	return out
}

// updateMetadataFor returns the partition states for topic/p found in UpdateMetadata
// requests recorded for broker, oldest first, with the request they came in.
func updateMetadataFor(rec *recorder, broker int32, topic string, p int32) ([]kmsg.UpdateMetadataRequestTopicPartition, []*kmsg.UpdateMetadataRequest) {
	var out []kmsg.UpdateMetadataRequestTopicPartition
	var reqs []*kmsg.UpdateMetadataRequest
	for _, r := range rec.requests(broker, 6) {
		req := r.(*kmsg.UpdateMetadataRequest)
		for _, ts := range req.TopicStates {
			for _, ps := range ts.PartitionStates {
				if ts.Topic == topic && ps.Partition == p {
					out = append(out, ps)
					reqs = append(reqs, req)
				}
			}
		}
	}
	return out, reqs
}

// TestControllerTopicCreation follows Kafka's topic creation flow (reference §3.7): "create
// /state (leader = first live replica, ISR = live replicas, leader_epoch 0), send
// LeaderAndIsr IsNew to the replicas and UpdateMetadata to all brokers".
func TestControllerTopicCreation(t *testing.T) {
	t.Parallel()
	cl, n1 := newActiveCluster(t, nil)
	zc := cl.zk()
	cl.registerBroker(zc, 2, "")
	cl.registerBroker(zc, 3, "")
	waitBrokerKnown(t, cl, 3)
	assignment := map[int32][]int32{0: {2, 3, 1}, 1: {3, 1, 2}}
	createTopic(t, zc, "orders", assignment)
	for p, replicas := range assignment {
		waitCreatedState(t, zc, p, replicas)
		waitCreatedLeaderAndIsr(t, cl, p, replicas)
		waitCreatedUpdateMetadata(t, cl, p, replicas)
	}
	// Each LeaderAndIsr carries the leaders it names, with their inter-broker endpoints.
	for _, r := range cl.rec.requests(2, 4) {
		req := r.(*kmsg.LeaderAndISRRequest)
		if req.ControllerID != 1 || req.ControllerEpoch != 1 || req.BrokerEpoch <= 0 || len(req.LiveLeaders) == 0 {
			t.Fatalf("LeaderAndIsr header %+v", req)
		}
		for _, l := range req.LiveLeaders {
			if l.Port != brokerPort(l.BrokerID) {
				t.Fatalf("live leader %+v", l)
			}
		}
	}
	waitCreatedTopicID(t, cl, zc)
	testwait.For(t, waitTimeout, func() error {
		if v := n1.c.metrics.partitions.Load(); v != 2 {
			return fmt.Errorf("GlobalPartitionCount %d", v)
		}
		if v := n1.c.metrics.topics.Load(); v != 1 {
			return fmt.Errorf("GlobalTopicCount %d", v)
		}
		return nil
	})
}

// waitCreatedState waits for orders-p's new /state: the first replica
// leads, every replica in the ISR, leader epoch 0.
func waitCreatedState(t *testing.T, zc *zkutil.Client, p int32, replicas []int32) {
	testwait.For(t, waitTimeout, func() error {
		st, err := partitionState(t, zc, "orders", p)
		if err != nil {
			return err
		}
		if st.Leader != replicas[0] || !slices.Equal(st.ISR, replicas) || st.LeaderEpoch != 0 || st.ControllerEpoch != 1 {
			return fmt.Errorf("partition %d state %+v", p, st)
		}
		return nil
	})
}

// waitCreatedLeaderAndIsr waits for each replica's LeaderAndIsr of the new
// orders-p (IsNew, the full ISR, ZooKeeper version 0).
func waitCreatedLeaderAndIsr(t *testing.T, cl *cluster, p int32, replicas []int32) {
	for _, b := range replicas {
		testwait.For(t, waitTimeout, func() error {
			got := leaderAndIsrFor(cl.rec, b, "orders", p)
			if len(got) == 0 {
				return fmt.Errorf("broker %d: no LeaderAndIsr for orders-%d", b, p)
			}
			ps := got[len(got)-1]
			if !ps.IsNew || ps.Leader != replicas[0] || !slices.Equal(ps.Replicas, replicas) || !slices.Equal(ps.ISR, replicas) ||
				ps.ControllerEpoch != 1 || ps.ZKVersion != 0 {
				return fmt.Errorf("broker %d: partition state %+v", b, ps)
			}
			return nil
		})
	}
}

// waitCreatedUpdateMetadata waits for every broker's UpdateMetadata of
// orders-p, with the controller's header and the live brokers' endpoints.
func waitCreatedUpdateMetadata(t *testing.T, cl *cluster, p int32, replicas []int32) {
	for _, b := range []int32{1, 2, 3} {
		testwait.For(t, waitTimeout, func() error {
			got, reqs := updateMetadataFor(cl.rec, b, "orders", p)
			if len(got) == 0 {
				return fmt.Errorf("broker %d: no UpdateMetadata for orders-%d", b, p)
			}
			ps, req := got[len(got)-1], reqs[len(reqs)-1]
			if ps.Leader != replicas[0] || !slices.Equal(ps.Replicas, replicas) || len(ps.OfflineReplicas) != 0 {
				return fmt.Errorf("broker %d: partition state %+v", b, ps)
			}
			if req.ControllerID != 1 || req.ControllerEpoch != 1 || len(req.LiveBrokers) != 3 || req.BrokerEpoch <= 0 {
				return fmt.Errorf("broker %d: request header %+v", b, req)
			}
			for _, lb := range req.LiveBrokers {
				if len(lb.Endpoints) != 1 || lb.Endpoints[0].Port != brokerPort(lb.ID) || lb.Endpoints[0].ListenerName != "PLAINTEXT" {
					return fmt.Errorf("broker %d: live broker %+v", b, lb)
				}
			}
			return nil
		})
	}
}

// waitCreatedTopicID waits for the topic id the controller gave orders
// (Kafka 2.8's processTopicIds) and for it in every broker's last
// UpdateMetadata v7.
func waitCreatedTopicID(t *testing.T, cl *cluster, zc *zkutil.Client) {
	var id [16]byte
	testwait.For(t, waitTimeout, func() error {
		a, _, err := zc.GetTopicAssignment("orders")
		if err != nil {
			return err
		}
		if id = decodeTopicID(a.TopicID); id == ([16]byte{}) || len(a.TopicID) != 22 {
			return fmt.Errorf("topic id %q", a.TopicID)
		}
		return nil
	})
	testwait.For(t, waitTimeout, func() error {
		for _, b := range []int32{1, 2, 3} {
			ums := cl.rec.requests(b, 6)
			last := ums[len(ums)-1].(*kmsg.UpdateMetadataRequest)
			for _, ts := range last.TopicStates {
				if ts.Topic == "orders" && ts.TopicID != id {
					return fmt.Errorf("broker %d UpdateMetadata topic id %x, want %x", b, ts.TopicID, id)
				}
			}
		}
		return nil
	})
}

// TestControllerTopicCreationDeadReplica: a replica whose broker is down is left out of the
// initial ISR and the first live replica leads.
func TestControllerTopicCreationDeadReplica(t *testing.T) {
	t.Parallel()
	cl, n1 := newActiveCluster(t, nil)
	zc := cl.zk()
	createTopic(t, zc, "t", map[int32][]int32{0: {5, 1}, 1: {5}})
	testwait.For(t, waitTimeout, func() error {
		st, err := partitionState(t, zc, "t", 0)
		if err != nil {
			return err
		}
		if st.Leader != 1 || !slices.Equal(st.ISR, []int32{1}) {
			return fmt.Errorf("state %+v", st)
		}
		return nil
	})
	// t-1 has no live replica: it stays New without a state znode, and is offline.
	if _, err := partitionState(t, zc, "t", 1); err == nil {
		t.Fatal("t-1 got a state without live replicas")
	}
	testwait.For(t, waitTimeout, func() error {
		if v := n1.c.metrics.offline.Load(); v != 1 {
			return fmt.Errorf("OfflinePartitionsCount %d", v)
		}
		return nil
	})
	// When broker 5 starts, t-1 comes online with it as leader.
	cl.registerBroker(zc, 5, "")
	testwait.For(t, waitTimeout, func() error {
		st, err := partitionState(t, zc, "t", 1)
		if err != nil {
			return err
		}
		if st.Leader != 5 || st.LeaderEpoch != 0 {
			return fmt.Errorf("state %+v", st)
		}
		if v := n1.c.metrics.offline.Load(); v != 0 {
			return fmt.Errorf("OfflinePartitionsCount %d", v)
		}
		return nil
	})
}

// TestControllerPartitionsAdded: rewriting /brokers/topics/<t> with more partitions creates
// the new ones (PartitionModifications).
func TestControllerPartitionsAdded(t *testing.T) {
	t.Parallel()
	cl, _ := newActiveCluster(t, nil)
	zc := cl.zk()
	cl.registerBroker(zc, 2, "")
	waitBrokerKnown(t, cl, 2) // live before the topic arrives (see TestControllerBouncedBroker)
	createTopic(t, zc, "grow", map[int32][]int32{0: {1, 2}})
	testwait.For(t, waitTimeout, func() error { _, err := partitionState(t, zc, "grow", 0); return err })
	a, v, err := zc.GetTopicAssignment("grow")
	if err != nil {
		t.Fatal(err)
	}
	a.Partitions[1] = []int32{2, 1}
	if _, err := zc.SetTopicAssignment("grow", a, v); err != nil {
		t.Fatal(err)
	}
	testwait.For(t, waitTimeout, func() error {
		st, err := partitionState(t, zc, "grow", 1)
		if err != nil {
			return err
		}
		if st.Leader != 2 || !slices.Equal(st.ISR, []int32{2, 1}) {
			return fmt.Errorf("state %+v", st)
		}
		if len(leaderAndIsrFor(cl.rec, 2, "grow", 1)) == 0 {
			return fmt.Errorf("no LeaderAndIsr for grow-1 to broker 2")
		}
		return nil
	})
}

// TestControllerIsrChangeNotification follows reference §3.12: the controller re-reads the
// partitions named by isr_change notifications, sends UpdateMetadata to all brokers and
// deletes the notifications.
func TestControllerIsrChangeNotification(t *testing.T) {
	t.Parallel()
	cl, _ := newActiveCluster(t, nil)
	zc := cl.zk()
	cl.registerBroker(zc, 2, "")
	waitBrokerKnown(t, cl, 2) // live before the topic arrives (see TestControllerBouncedBroker)
	createTopic(t, zc, "isr", map[int32][]int32{0: {1, 2}})
	var st zkutil.PartitionState
	var zkv int32
	testwait.For(t, waitTimeout, func() error {
		var err error
		st, zkv, err = zc.GetPartitionState("isr", 0)
		return err
	})
	// The leader shrinks the ISR itself and tells the controller.
	st.ISR = []int32{1}
	newZkv, err := zc.UpdatePartitionStateFromLeader(kafka.TopicPartition{Topic: "isr", Partition: 0}, st, zkv)
	if err != nil {
		t.Fatal(err)
	}
	if err := zc.WriteIsrChangeNotification([]kafka.TopicPartition{{Topic: "isr", Partition: 0}}); err != nil {
		t.Fatal(err)
	}
	for _, b := range []int32{1, 2} {
		testwait.For(t, waitTimeout, func() error {
			got, _ := updateMetadataFor(cl.rec, b, "isr", 0)
			if len(got) == 0 {
				return fmt.Errorf("no UpdateMetadata")
			}
			ps := got[len(got)-1]
			if !slices.Equal(ps.ISR, []int32{1}) || ps.ZKVersion != newZkv {
				return fmt.Errorf("broker %d: latest state %+v", b, ps)
			}
			return nil
		})
	}
	waitNoneLeft(t, "notifications", zc.GetIsrChangeNotifications)
}

// TestControllerEmptyAssignment: a partition with an empty replica list in ZooKeeper (bad
// input) stays offline without breaking the controller or its request handlers.
func TestControllerEmptyAssignment(t *testing.T) {
	t.Parallel()
	cl, n1 := newActiveCluster(t, func(c *Config) { c.AutoLeaderRebalanceEnable = true })
	zc := cl.zk()
	createTopic(t, zc, "empty", map[int32][]int32{0: {}, 1: {1}})
	wantState(t, zc, "empty", 1, 1, []int32{1}, 0)
	ctx, cancel := context.WithTimeout(context.Background(), waitTimeout)
	defer cancel()
	tp := kafka.TopicPartition{Topic: "empty", Partition: 0}
	res, err := n1.c.ElectLeaders(ctx, ElectionPreferred, nil)
	if err != nil || !errors.Is(res[tp], ErrUnknownTopicOrPartition) {
		t.Fatalf("elect: %v %v", res, err)
	}
	if res, err := n1.c.AlterPartitionReassignments(ctx, map[kafka.TopicPartition][]int32{tp: {1}}); err != nil || !errors.Is(res[tp], ErrUnknownTopicOrPartition) {
		t.Fatalf("reassign: %v %v", res, err)
	}
	if _, err := n1.c.ControlledShutdown(ctx, 1, -1); err != nil {
		t.Fatal(err)
	}
	if !n1.c.IsActive() {
		t.Fatal("controller resigned")
	}
}
