package clustertest_test

import (
	"fmt"
	"slices"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/IBM/sarama"

	"samsa/broker/brokertest"
)

// TestClusterReassignUnderAcksAllLoad: partition 0 moves from brokers
// {1,2} to {2,3} while a producer with acks=all keeps writing; every
// acknowledged message is in the partition afterwards, in order.
func TestClusterReassignUnderAcksAllLoad(t *testing.T) {
	c := brokertest.NewCluster(t, 3)
	ids := []int32{c.Broker(0).ID(), c.Broker(1).ID(), c.Broker(2).ID()}
	admin := c.Admin(t, brokertest.SaramaConfig(sarama.V2_8_0_0))
	createAssigned(t, admin, "load", map[int32][]int32{0: {ids[0], ids[1]}}, nil)
	c.WaitForISR(t, "load", 0, 2)
	cfg := brokertest.SaramaConfig(sarama.V2_8_0_0)
	cfg.Producer.RequiredAcks = sarama.WaitForAll
	cfg.Producer.Return.Successes = true
	cfg.Producer.Retry.Max = 50
	cfg.Producer.Retry.Backoff = 50 * time.Millisecond
	p := c.SyncProducer(t, cfg)

	var (
		mu    sync.Mutex
		acked = map[int64]string{} // offset -> value
		stop  atomic.Bool
		wg    sync.WaitGroup
	)
	wg.Add(1)
	go func() {
		defer wg.Done()
		for i := 0; i < 1_000_000 && !stop.Load(); i++ {
			v := fmt.Sprintf("v%d", i)
			_, off, err := p.SendMessage(&sarama.ProducerMessage{Topic: "load", Value: sarama.StringEncoder(v)})
			if err == nil {
				mu.Lock()
				acked[off] = v
				mu.Unlock()
			}
		}
	}()
	defer func() { stop.Store(true); wg.Wait() }()
	count := func() int { mu.Lock(); defer mu.Unlock(); return len(acked) }
	brokertest.WaitFor(t, 30*time.Second, func() error {
		if count() < 200 {
			return fmt.Errorf("%d acknowledged", count())
		}
		return nil
	})
	target := []int32{ids[1], ids[2]}
	if err := admin.AlterPartitionReassignments("load", [][]int32{target}); err != nil {
		t.Fatal(err)
	}
	brokertest.WaitFor(t, 60*time.Second, func() error {
		for i := 0; i < c.N(); i++ {
			ps, ok := c.Broker(i).Metadata().Partition("load", 0)
			if !ok || !slices.Equal(ps.Replicas, target) || !slices.Contains(target, ps.Leader) {
				return fmt.Errorf("broker %d: partition state %+v", ids[i], ps)
			}
		}
		return nil
	})
	n := count()
	brokertest.WaitFor(t, 30*time.Second, func() error {
		if count() < n+100 {
			return fmt.Errorf("producer stuck after the move (%d acknowledged)", count())
		}
		return nil
	})
	stop.Store(true)
	wg.Wait()

	mu.Lock()
	defer mu.Unlock()
	checkAckedPresent(t, c, "load", acked)
}

// checkAckedPresent reads partition 0 of topic from the start and checks
// that every acknowledged offset holds its value (acked: offset -> value).
func checkAckedPresent(t *testing.T, c *brokertest.Cluster, topic string, acked map[int64]string) {
	t.Helper()
	var maxOff int64
	for off := range acked {
		maxOff = max(maxOff, off)
	}
	cons, err := sarama.NewConsumer(c.Addrs(), brokertest.SaramaConfig(sarama.V2_8_0_0))
	if err != nil {
		t.Fatal(err)
	}
	defer cons.Close()
	pc, err := cons.ConsumePartition(topic, 0, sarama.OffsetOldest)
	if err != nil {
		t.Fatal(err)
	}
	defer pc.Close()
	found := 0
	deadline := time.After(60 * time.Second)
	for found < len(acked) {
		select {
		case m := <-pc.Messages():
			if v, ok := acked[m.Offset]; ok {
				if v != string(m.Value) {
					t.Fatalf("offset %d holds %q, acknowledged %q", m.Offset, m.Value, v)
				}
				found++
			}
			if m.Offset >= maxOff && found < len(acked) {
				t.Fatalf("reached offset %d with %d of %d acknowledged messages found", m.Offset, found, len(acked))
			}
		case err := <-pc.Errors():
			t.Fatal(err)
		case <-deadline:
			t.Fatalf("found %d of %d acknowledged messages", found, len(acked))
		}
	}
	t.Logf("%d acknowledged messages, all present after the move", len(acked))
}

// TestClusterPreferredElectionAfterRollingRestart: after a rolling restart
// leadership piles up on the brokers restarted first; a preferred election
// (ElectLeaders, as kafka-leader-election.sh sends) gives every partition
// back to its first replica. Auto rebalance is off so the API does it.
func TestClusterPreferredElectionAfterRollingRestart(t *testing.T) {
	c := brokertest.NewCluster(t, 3, brokertest.WithProperty("auto.leader.rebalance.enable", "false"))
	c.CreateTopic(t, "pref", 6, 3)
	for p := int32(0); p < 6; p++ {
		c.WaitForISR(t, "pref", p, 3)
	}
	for i := 0; i < c.N(); i++ {
		c.Restart(i)
		for p := int32(0); p < 6; p++ {
			c.WaitForISR(t, "pref", p, 3)
		}
	}
	notPreferred := func() []int32 {
		var out []int32
		for p := int32(0); p < 6; p++ {
			ps, ok := c.Broker(0).Metadata().Partition("pref", p)
			if !ok || len(ps.Replicas) == 0 || ps.Leader != ps.Replicas[0] {
				out = append(out, p)
			}
		}
		return out
	}
	if len(notPreferred()) == 0 {
		t.Fatal("the rolling restart left every leader preferred; the test proves nothing")
	}
	admin := c.Admin(t, brokertest.SaramaConfig(sarama.V2_8_0_0))
	res, err := admin.ElectLeaders(sarama.PreferredElection, map[string][]int32{"pref": {0, 1, 2, 3, 4, 5}})
	if err != nil {
		t.Fatal(err)
	}
	for p, r := range res["pref"] {
		if r.ErrorCode != sarama.ErrNoError && r.ErrorCode != sarama.ErrElectionNotNeeded {
			t.Fatalf("partition %d: %v", p, r.ErrorCode)
		}
	}
	brokertest.WaitFor(t, 30*time.Second, func() error {
		if np := notPreferred(); len(np) > 0 {
			return fmt.Errorf("partitions %v not led by their preferred replica", np)
		}
		return nil
	})
}
