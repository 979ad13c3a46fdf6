package clustertest_test

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/IBM/sarama"
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"

	"samsa/broker/brokertest"
)

// TestClusterStaleControlRequestsRejected: Kafka 2.8 rejects
// LeaderAndIsr/UpdateMetadata/StopReplica from an older controller epoch
// (STALE_CONTROLLER_EPOCH) and for an older broker epoch
// (STALE_BROKER_EPOCH, KIP-380), and applies nothing.
func TestClusterStaleControlRequestsRejected(t *testing.T) {
	c := brokertest.NewCluster(t, 1)
	b := c.Broker(0)
	epoch := b.Replicas().ControllerEpoch()
	if epoch < 1 {
		t.Fatalf("controller epoch %d", epoch)
	}
	rc := brokertest.DialRaw(t, c.Addr(0))

	lai := kmsg.NewPtrLeaderAndISRRequest()
	lai.SetVersion(5)
	lai.ControllerID, lai.ControllerEpoch, lai.BrokerEpoch = 99, epoch-1, -1
	ts := kmsg.NewLeaderAndISRRequestTopicState()
	ts.Topic = "ghost"
	ps := kmsg.NewLeaderAndISRRequestTopicPartition()
	ps.Leader, ps.LeaderEpoch, ps.ISR, ps.Replicas = b.ID(), 0, []int32{b.ID()}, []int32{b.ID()}
	ts.PartitionStates = append(ts.PartitionStates, ps)
	lai.TopicStates = append(lai.TopicStates, ts)
	kr, err := rc.RoundTrip(lai)
	if err != nil {
		t.Fatal(err)
	}
	if code := kr.(*kmsg.LeaderAndISRResponse).ErrorCode; code != kerr.StaleControllerEpoch.Code {
		t.Fatalf("LeaderAndIsr: %d, want STALE_CONTROLLER_EPOCH", code)
	}
	if b.Replicas().Partition(replicaTP("ghost", 0)) != nil {
		t.Fatal("stale LeaderAndIsr was applied")
	}
	lai.ControllerEpoch, lai.BrokerEpoch = epoch, b.Epoch()-1
	kr, err = rc.RoundTrip(lai)
	if err != nil {
		t.Fatal(err)
	}
	if code := kr.(*kmsg.LeaderAndISRResponse).ErrorCode; code != kerr.StaleBrokerEpoch.Code {
		t.Fatalf("LeaderAndIsr old broker epoch: %d, want STALE_BROKER_EPOCH", code)
	}

	um := kmsg.NewPtrUpdateMetadataRequest()
	um.SetVersion(7)
	um.ControllerID, um.ControllerEpoch, um.BrokerEpoch = 99, epoch-1, -1
	kr, err = rc.RoundTrip(um)
	if err != nil {
		t.Fatal(err)
	}
	if code := kr.(*kmsg.UpdateMetadataResponse).ErrorCode; code != kerr.StaleControllerEpoch.Code {
		t.Fatalf("UpdateMetadata: %d, want STALE_CONTROLLER_EPOCH", code)
	}
	if n := len(b.Metadata().BrokerIDs); n != 1 {
		t.Fatalf("stale UpdateMetadata applied: %d brokers", n)
	}
	um.ControllerEpoch, um.BrokerEpoch = epoch, b.Epoch()-1
	kr, err = rc.RoundTrip(um)
	if err != nil {
		t.Fatal(err)
	}
	if code := kr.(*kmsg.UpdateMetadataResponse).ErrorCode; code != kerr.StaleBrokerEpoch.Code {
		t.Fatalf("UpdateMetadata old broker epoch: %d, want STALE_BROKER_EPOCH", code)
	}

	sr := kmsg.NewPtrStopReplicaRequest()
	sr.SetVersion(3)
	sr.ControllerID, sr.ControllerEpoch, sr.BrokerEpoch = 99, epoch-1, -1
	kr, err = rc.RoundTrip(sr)
	if err != nil {
		t.Fatal(err)
	}
	if code := kr.(*kmsg.StopReplicaResponse).ErrorCode; code != kerr.StaleControllerEpoch.Code {
		t.Fatalf("StopReplica: %d, want STALE_CONTROLLER_EPOCH", code)
	}
}

// TestClusterControllerMovesWhenKilled: killing the controller's broker
// elects another controller, which every live broker learns, and the
// partitions it led get new leaders; producing keeps working.
func TestClusterControllerMovesWhenKilled(t *testing.T) {
	c := brokertest.NewCluster(t, 3)
	c.CreateTopic(t, "moves", 3, 3)
	first := c.Controller()
	firstID := c.Broker(first).ID()
	c.Kill(first)
	next := c.Controller()
	if next == first {
		t.Fatal("controller did not move")
	}
	nextID := c.Broker(next).ID()
	brokertest.WaitFor(t, 60*time.Second, func() error {
		for i := 0; i < 3; i++ {
			b := c.Broker(i)
			if b == nil {
				continue
			}
			snap := b.Metadata()
			if snap.ControllerID != nextID {
				return fmt.Errorf("broker %d sees controller %d, want %d", b.ID(), snap.ControllerID, nextID)
			}
			if snap.Alive(firstID) {
				return fmt.Errorf("broker %d still lists killed broker %d", b.ID(), firstID)
			}
		}
		return nil
	})
	for p := int32(0); p < 3; p++ {
		if l := c.WaitForLeader(t, "moves", p); l == firstID {
			t.Fatalf("partition %d still led by the killed broker", p)
		}
	}
	cfg := brokertest.SaramaConfig(sarama.V2_8_0_0)
	cfg.Producer.RequiredAcks = sarama.WaitForAll
	brokertest.ProduceConsume(t, c, cfg, "moves", 3, 30)
	c.Restart(first)
	brokertest.WaitFor(t, 60*time.Second, func() error {
		if n := len(c.Broker(next).Metadata().BrokerIDs); n != 3 {
			return fmt.Errorf("%d live brokers after restart", n)
		}
		return nil
	})
}

// TestClusterZKSessionExpiryReregisters: after its ZooKeeper session
// expires a broker registers again with a new broker epoch and stays in
// the cluster.
func TestClusterZKSessionExpiryReregisters(t *testing.T) {
	c := brokertest.NewCluster(t, 2)
	b := c.Broker(1)
	old := b.Epoch()
	c.ExpireZKSession(1)
	brokertest.WaitFor(t, 60*time.Second, func() error {
		if b.Epoch() == old {
			return fmt.Errorf("broker epoch still %d", old)
		}
		for i := 0; i < 2; i++ {
			if n := len(c.Broker(i).Metadata().BrokerIDs); n != 2 {
				return fmt.Errorf("broker %d sees %d live brokers", i, n)
			}
		}
		return nil
	})
	c.CreateTopic(t, "after-expiry", 2, 2)
	brokertest.ProduceConsume(t, c, brokertest.SaramaConfig(sarama.V2_1_0_0), "after-expiry", 2, 20)
}

// TestClusterControlledShutdown: with controlled.shutdown.enable the
// controller moves leadership off a stopping broker before it deregisters
// (Kafka's controlled shutdown), so by the time Shutdown returns no
// partition is led by it and producing with acks=all goes on.
func TestClusterControlledShutdown(t *testing.T) {
	c := brokertest.NewCluster(t, 3, brokertest.WithProperty("controlled.shutdown.enable", "true"),
		brokertest.WithProperty("controlled.shutdown.retry.backoff.ms", "100"))
	c.CreateTopic(t, "cs", 3, 3)
	ctrl := c.Controller()
	victim := (ctrl + 1) % 3
	victimID := c.Broker(victim).ID()
	led := 0
	for p := int32(0); p < 3; p++ {
		if c.WaitForLeader(t, "cs", p) == victimID {
			led++
		}
		// A leadership can only move to another ISR member: under load an
		// ISR may have shrunk while the followers started, so wait until
		// it is full again.
		c.WaitForISR(t, "cs", p, 3)
	}
	b := c.Broker(victim)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	if err := b.Shutdown(ctx); err != nil {
		t.Fatal(err)
	}
	snap := c.Broker(ctrl).Metadata()
	for p := int32(0); p < 3; p++ {
		ps, _ := snap.Partition("cs", p)
		if ps.Leader == victimID {
			t.Fatalf("partition %d still led by the stopped broker %d (it led %d)", p, victimID, led)
		}
	}
	c.Restart(victim)
	cfg := brokertest.SaramaConfig(sarama.V2_8_0_0)
	cfg.Producer.RequiredAcks = sarama.WaitForAll
	brokertest.ProduceConsume(t, c, cfg, "cs", 3, 30)
}

// TestClusterRestartKeepsData: after every broker is killed and restarted
// on its data dir, the acknowledged messages are all there and the
// cluster keeps accepting writes (log recovery, HW checkpoint, leader
// epochs after restart).
func TestClusterRestartKeepsData(t *testing.T) {
	c := brokertest.NewCluster(t, 3)
	c.CreateTopic(t, "durable", 2, 3)
	cfg := brokertest.SaramaConfig(sarama.V2_8_0_0)
	cfg.Producer.RequiredAcks = sarama.WaitForAll
	brokertest.ProduceConsume(t, c, cfg, "durable", 2, 40)
	for i := 0; i < 3; i++ {
		c.Kill(i)
	}
	for i := 0; i < 3; i++ {
		c.Restart(i)
	}
	for p := int32(0); p < 2; p++ {
		c.WaitForLeader(t, "durable", p)
	}
	cl := c.Sarama(t, cfg)
	total := int64(0)
	for p := int32(0); p < 2; p++ {
		var hw int64
		brokertest.WaitFor(t, 30*time.Second, func() error {
			var err error
			hw, err = cl.GetOffset("durable", p, sarama.OffsetNewest)
			return err
		})
		total += hw
	}
	if total != 40 {
		t.Fatalf("%d messages after restart, want 40", total)
	}
	brokertest.ProduceConsume(t, c, cfg, "durable", 2, 20)
}

// TestClusterDeleteRecords: DeleteRecords moves the log start offset on
// the leader (earliest offset and consumers start there) and the followers
// follow it; offsets above the high watermark are refused.
func TestClusterDeleteRecords(t *testing.T) {
	c := brokertest.NewCluster(t, 2)
	c.CreateTopic(t, "dr", 1, 2)
	cfg := brokertest.SaramaConfig(sarama.V2_8_0_0)
	cfg.Producer.RequiredAcks = sarama.WaitForAll
	p := c.SyncProducer(t, cfg)
	for i := 0; i < 10; i++ {
		if _, _, err := p.SendMessage(&sarama.ProducerMessage{Topic: "dr", Value: sarama.StringEncoder(fmt.Sprint(i))}); err != nil {
			t.Fatal(err)
		}
	}
	admin := c.Admin(t, cfg)
	if err := admin.DeleteRecords("dr", map[int32]int64{0: 6}); err != nil {
		t.Fatal(err)
	}
	cl := c.Sarama(t, cfg)
	if off, err := cl.GetOffset("dr", 0, sarama.OffsetOldest); err != nil || off != 6 {
		t.Fatalf("earliest after DeleteRecords: %d %v", off, err)
	}
	leader := c.WaitForLeader(t, "dr", 0)
	follower := c.Broker(1 - c.Index(leader))
	brokertest.WaitFor(t, 30*time.Second, func() error {
		if s := follower.Replicas().Partition(replicaTP("dr", 0)).State().LogStartOffset; s != 6 {
			return fmt.Errorf("follower log start %d", s)
		}
		return nil
	})
	if err := admin.DeleteRecords("dr", map[int32]int64{0: 100}); err == nil {
		t.Fatal("delete beyond the high watermark accepted")
	}
}
