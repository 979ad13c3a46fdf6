package clustertest_test

import (
	"errors"
	"fmt"
	"testing"
	"time"

	"github.com/IBM/sarama"
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"

	"samsa/broker/brokertest"
	"samsa/broker/record"
)

// TestClusterIsrShrinksAndExpands: Kafka's ISR rules (replica.lag.time.max.ms):
// a follower that stops fetching leaves the ISR so acks=all produces go on
// (with min.insync.replicas=1), and it rejoins once restarted and caught up
// to the high watermark.
func TestClusterIsrShrinksAndExpands(t *testing.T) {
	c := brokertest.NewCluster(t, 3, brokertest.WithProperty("replica.lag.time.max.ms", "1000"))
	c.CreateTopic(t, "isr", 1, 3)
	leader := c.WaitForLeader(t, "isr", 0)
	victim := -1
	for i := 0; i < 3; i++ {
		if c.Broker(i).ID() != leader && c.Broker(i).ID() != c.Broker(c.Controller()).ID() {
			victim = i
		}
	}
	if victim < 0 {
		// The leader is the controller's broker; any follower will do.
		for i := 0; i < 3; i++ {
			if c.Broker(i).ID() != leader {
				victim = i
			}
		}
	}
	cfg := brokertest.SaramaConfig(sarama.V2_8_0_0)
	cfg.Producer.RequiredAcks = sarama.WaitForAll
	brokertest.ProduceConsume(t, c, cfg, "isr", 1, 10)
	c.Kill(victim)
	c.WaitForISR(t, "isr", 0, 2)
	brokertest.ProduceConsume(t, c, cfg, "isr", 1, 10)
	c.Restart(victim)
	c.WaitForISR(t, "isr", 0, 3)
}

// TestClusterIsrLeaderShrinksStuckFollower: a live follower whose fetches
// the leader cannot answer (dropped by an interceptor) leaves the ISR after
// replica.lag.time.max.ms by the leader's own decision, acks=all produces
// complete without it, and it rejoins once its fetches get through.
func TestClusterIsrLeaderShrinksStuckFollower(t *testing.T) {
	c := brokertest.NewCluster(t, 3, brokertest.WithProperty("replica.lag.time.max.ms", "1000"))
	c.CreateTopic(t, "stuck", 1, 3)
	leader := c.WaitForLeader(t, "stuck", 0)
	li := c.Index(leader)
	stuck := int32(-1)
	for i := 0; i < 3; i++ {
		if id := c.Broker(i).ID(); id != leader {
			stuck = id
		}
	}
	c.Intercept(li, 1, func(req kmsg.Request) (kmsg.Response, error, bool) {
		if req.(*kmsg.FetchRequest).ReplicaID == stuck {
			return nil, errors.New("brokertest: dropped follower fetch"), true
		}
		return nil, nil, false
	})
	cfg := brokertest.SaramaConfig(sarama.V2_8_0_0)
	cfg.Producer.RequiredAcks = sarama.WaitForAll
	brokertest.ProduceConsume(t, c, cfg, "stuck", 1, 10)
	c.WaitForISR(t, "stuck", 0, 2)
	c.Intercept(li, 1, nil)
	c.WaitForISR(t, "stuck", 0, 3)
}

// TestClusterPartitionedFollower: a follower cut off from its leader (but
// still in ZooKeeper) is dropped from the ISR by the leader once it is
// behind for replica.lag.time.max.ms; acks=all
// producing goes on with min.insync.replicas=2; after the partition heals
// it catches up and rejoins.
func TestClusterPartitionedFollower(t *testing.T) {
	c := brokertest.NewCluster(t, 3, brokertest.WithProperty("replica.lag.time.max.ms", "1000"),
		brokertest.WithProperty("min.insync.replicas", "2"))
	c.CreateTopic(t, "split", 1, 3)
	li := c.Index(c.WaitForLeader(t, "split", 0))
	fi := (li + 1) % 3
	c.Partition(li, fi)
	// Kafka drops only a follower that is behind the log end: write one
	// message with acks=1 so the cut-off follower falls behind.
	p := c.SyncProducer(t, brokertest.SaramaConfig(sarama.V2_8_0_0))
	if _, _, err := p.SendMessage(&sarama.ProducerMessage{Topic: "split", Value: sarama.StringEncoder("behind")}); err != nil {
		t.Fatal(err)
	}
	// The cut-off broker may not hear of the new ISR (the controller may be
	// on the other side), so ask the leader.
	brokertest.WaitFor(t, 60*time.Second, func() error {
		if isr := c.Broker(li).Replicas().Partition(replicaTP("split", 0)).State().ISR; len(isr) != 2 {
			return fmt.Errorf("leader's ISR %v", isr)
		}
		return nil
	})
	cfg := brokertest.SaramaConfig(sarama.V2_8_0_0)
	cfg.Producer.RequiredAcks = sarama.WaitForAll
	brokertest.ProduceConsume(t, c, cfg, "split", 1, 20)
	c.Heal(li, fi)
	c.WaitForISR(t, "split", 0, 3)
}

// TestClusterAcksAllTimesOut: an acks=all produce whose follower cannot
// fetch answers REQUEST_TIMED_OUT at timeout_ms (the data stays in the
// leader's log, as Kafka), while the follower is still in the ISR.
func TestClusterAcksAllTimesOut(t *testing.T) {
	c := brokertest.NewCluster(t, 2)
	c.CreateTopic(t, "slow", 1, 2)
	li := c.Index(c.WaitForLeader(t, "slow", 0))
	c.Partition(li, 1-li)
	defer c.Heal(li, 1-li)
	batch, err := record.Build(record.NewBuildHeader(0, time.Now().UnixMilli()), []record.Record{{Value: []byte("v")}}, record.CodecNone)
	if err != nil {
		t.Fatal(err)
	}
	rc := brokertest.DialRaw(t, c.Addr(li))
	req := brokertest.ProduceRequest(8, -1, 300, "slow", 0, batch)
	start := time.Now()
	kr, err := rc.RoundTrip(req)
	if err != nil {
		t.Fatal(err)
	}
	if code := kr.(*kmsg.ProduceResponse).Topics[0].Partitions[0].ErrorCode; code != kerr.RequestTimedOut.Code {
		t.Fatalf("code %d, want REQUEST_TIMED_OUT", code)
	}
	if d := time.Since(start); d < 250*time.Millisecond {
		t.Fatalf("answered after %v, before timeout_ms", d)
	}
}
