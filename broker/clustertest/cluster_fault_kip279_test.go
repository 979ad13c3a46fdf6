package clustertest_test

import (
	"fmt"
	"sync/atomic"
	"testing"
	"time"

	"github.com/IBM/sarama"
	"github.com/twmb/franz-go/pkg/kmsg"

	"samsa/broker/brokertest"
)

// TestClusterFaultFastFailoverDivergence reproduces KIP-279's fast double
// failover (KAFKA-6361) deterministically with the in-process harness.
// Replicas [1 2 3], leader 1 at epoch E:
//
//  1. broker 2 lags (its fetches from 1 go unanswered) while broker 3
//     copies record e at offset X;
//  2. 1 dies; 2 leads at E+1 and appends a1 at X (acks=1), which 3 never
//     sees (3 cannot reach 2 for OffsetsForLeaderEpoch or Fetch);
//  3. 2 dies; 3 leads at E+2 with e at X and appends b1 at X+1;
//  4. 2 returns and asks 3 for epoch E+1, which 3 never had: 3 answers
//     (E, X+1). 2 must truncate to its own end of epoch E (X), not to
//     X+1, or it keeps a1 where 3 has e.
//
// All replicas must end byte-identical.
func TestClusterFaultFastFailoverDivergence(t *testing.T) {
	c := brokertest.NewCluster(t, 3, brokertest.WithProperty("replica.lag.time.max.ms", "60000"),
		brokertest.WithProperty("auto.leader.rebalance.enable", "false"))
	const topic = "kip279"
	createAssigned(t, c.Admin(t, nil), topic, map[int32][]int32{0: {1, 2, 3}}, nil)
	c.WaitForISR(t, topic, 0, 3)
	iL, iA, iB := c.Index(1), c.Index(2), c.Index(3)
	if l := c.WaitForLeader(t, topic, 0); l != 1 {
		t.Fatalf("leader %d, want 1", l)
	}
	produce := func(v string) int64 { t.Helper(); return produceAcks1(t, c, topic, v) }
	for i := 0; i < 5; i++ {
		produce(fmt.Sprintf("base-%d", i))
	}
	leo := func(i int) int64 { return replicaLEO(c, i, topic) }
	brokertest.WaitFor(t, 10*time.Second, func() error {
		if leo(iA) != 5 || leo(iB) != 5 {
			return fmt.Errorf("followers at %d and %d, want 5", leo(iA), leo(iB))
		}
		return nil
	})

	// 1. Broker 2 lags: its fetches from 1 go unanswered.
	var dropped atomic.Int32
	dropFrom := func(id int32) brokertest.InterceptFunc { return dropReplicaRequests(id, &dropped) }
	c.Intercept(iL, int16(kmsg.Fetch), dropFrom(2))
	brokertest.WaitFor(t, 10*time.Second, func() error {
		if dropped.Load() == 0 {
			return fmt.Errorf("no fetch of broker 2 dropped yet")
		}
		return nil
	})
	x := produce("e")
	brokertest.WaitFor(t, 10*time.Second, func() error {
		if leo(iB) != x+1 {
			return fmt.Errorf("broker 3 at %d, want %d", leo(iB), x+1)
		}
		return nil
	})
	if leo(iA) != x {
		t.Fatalf("broker 2 at %d, want %d (lagging)", leo(iA), x)
	}

	// 2. Broker 3 cannot reach 2; 1 dies and 2 leads.
	c.Intercept(iA, int16(kmsg.Fetch), dropFrom(3))
	c.Intercept(iA, int16(kmsg.OffsetForLeaderEpoch), dropFrom(3))
	c.Kill(iL)
	waitLeaderIs(t, c, topic, 2)
	if off := produce("a1"); off != x {
		t.Fatalf("a1 at %d, want %d", off, x)
	}

	// 3. 2 dies; 3 leads and appends after e.
	c.Kill(iA)
	c.Intercept(iA, int16(kmsg.Fetch), nil)
	c.Intercept(iA, int16(kmsg.OffsetForLeaderEpoch), nil)
	c.Intercept(iL, int16(kmsg.Fetch), nil)
	waitLeaderIs(t, c, topic, 3)
	if off := produce("b1"); off != x+1 {
		t.Fatalf("b1 at %d, want %d", off, x+1)
	}

	// 4. Both return as followers of 3.
	c.Restart(iA)
	c.Restart(iL)
	c.WaitForISR(t, topic, 0, 3)
	waitSegmentsAsLeader(t, c, topic, iB, iL, iA)
	got := readPartition(t, c.Addrs(), topic, 0)
	if got[x] != "e" || got[x+1] != "b1" {
		t.Errorf("offsets %d,%d hold %q,%q, want e,b1", x, x+1, got[x], got[x+1])
	}
}

// waitLeaderIs waits until every running broker's metadata names leader
// id for partition 0 of topic.
// produceAcks1 writes v to partition 0 of topic with acks=1 and returns
// its offset.
func produceAcks1(t *testing.T, c *brokertest.Cluster, topic, v string) int64 {
	t.Helper()
	acks1 := brokertest.SaramaConfig(sarama.V2_8_0_0)
	acks1.Producer.RequiredAcks = sarama.WaitForLocal
	acks1.Producer.Partitioner = sarama.NewManualPartitioner
	p := c.SyncProducer(t, acks1)
	_, off, err := p.SendMessage(&sarama.ProducerMessage{Topic: topic, Partition: 0, Value: sarama.StringEncoder(v)})
	if err != nil {
		t.Fatalf("produce %s: %v", v, err)
	}
	return off
}

// replicaLEO is broker i's log end offset of partition 0 of topic, -1
// when it has no such replica (or is down).
func replicaLEO(c *brokertest.Cluster, i int, topic string) int64 {
	b := c.Broker(i)
	if b == nil {
		return -1
	}
	p := b.Replicas().Partition(replicaTP(topic, 0))
	if p == nil || p.Log() == nil {
		return -1
	}
	return p.Log().LogEndOffset()
}

// dropReplicaRequests is an interceptor that drops the Fetch and
// OffsetForLeaderEpoch requests of replica id unanswered, counting them.
func dropReplicaRequests(id int32, dropped *atomic.Int32) brokertest.InterceptFunc {
	return func(req kmsg.Request) (kmsg.Response, error, bool) {
		var rid int32 = -1
		switch r := req.(type) {
		case *kmsg.FetchRequest:
			rid = r.ReplicaID
		case *kmsg.OffsetForLeaderEpochRequest:
			rid = r.ReplicaID
		}
		if rid != id {
			return nil, nil, false
		}
		dropped.Add(1)
		return nil, nil, true
	}
}

// waitSegmentsAsLeader waits until the segments of partition 0 of topic
// on brokers others are byte-identical to those on broker leader.
func waitSegmentsAsLeader(t *testing.T, c *brokertest.Cluster, topic string, leader int, others ...int) {
	t.Helper()
	dirs := func(i int) string { return c.Broker(i).Config().LogDirs()[0] }
	brokertest.WaitFor(t, 30*time.Second, func() error {
		ref, err := segmentFiles(t, dirs(leader), topic, 0)
		if err != nil {
			return err
		}
		for _, i := range others {
			got, err := segmentFiles(t, dirs(i), topic, 0)
			if err != nil {
				return err
			}
			if err := sameSegments(ref, got); err != nil {
				return fmt.Errorf("broker %d vs leader %d: %w", c.Broker(i).ID(), c.Broker(leader).ID(), err)
			}
		}
		return nil
	})
}

func waitLeaderIs(t *testing.T, c *brokertest.Cluster, topic string, id int32) {
	t.Helper()
	brokertest.WaitFor(t, 30*time.Second, func() error {
		for i := 0; i < c.N(); i++ {
			b := c.Broker(i)
			if b == nil {
				continue
			}
			ps, ok := b.Metadata().Partition(topic, 0)
			if !ok || ps.Leader != id {
				return fmt.Errorf("broker %d: leader %d, want %d", b.ID(), ps.Leader, id)
			}
		}
		return nil
	})
}

// sameSegments compares two sets of segment files.
func sameSegments(ref, got map[string][]byte) error {
	if len(got) != len(ref) {
		return fmt.Errorf("%d segments, want %d", len(got), len(ref))
	}
	for name, b := range ref {
		g, ok := got[name]
		if !ok {
			return fmt.Errorf("segment %s missing", name)
		}
		if string(g) != string(b) {
			return fmt.Errorf("segment %s differs: %d bytes vs %d, first difference at byte %d", name, len(g), len(b), firstDiff(b, g))
		}
	}
	return nil
}
