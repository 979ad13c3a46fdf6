package clustertest_test

import (
	"fmt"
	"testing"
	"time"

	"samsa/broker/brokertest"
	"samsa/zkutil"
)

// Leader failures under continuous acks=all produce (issue 4, tests a, b
// and h): brokers are processes, faults are real signals.

// waitNewLeader waits until topic-partition has a live leader other than
// old and returns its state.
func waitNewLeader(t *testing.T, c *brokertest.ProcCluster, topic string, old int32) zkutil.PartitionState {
	t.Helper()
	return c.WaitForState(t, topic, 0, 30*time.Second, func(s zkutil.PartitionState) error {
		if s.Leader < 0 || s.Leader == old {
			return fmt.Errorf("leader is %d (old %d), ISR %v", s.Leader, old, s.ISR)
		}
		return nil
	})
}

func leaderIndex(t *testing.T, c *brokertest.ProcCluster, topic string) int {
	t.Helper()
	st := c.WaitForISR(t, topic, 0, 3, 30*time.Second)
	return c.Index(st.Leader)
}

// killLeaderAndRestart SIGKILLs the leader of partition 0 of topic, runs
// whileDown on its index (nil: nothing), waits for a new leader and n more
// acknowledgements of k, restarts it, and waits for the full ISR and n
// more; each wait is bounded by timeout. It returns the old leader's index.
func killLeaderAndRestart(t *testing.T, c *brokertest.ProcCluster, topic string, k *ackChecker, n int, timeout time.Duration, whileDown func(li int)) int {
	t.Helper()
	li := leaderIndex(t, c, topic)
	c.Kill(li)
	if whileDown != nil {
		whileDown(li)
	}
	waitNewLeader(t, c, topic, c.ID(li))
	k.waitAcks(n, timeout)
	c.Start(li)
	c.WaitForISR(t, topic, 0, 3, timeout)
	k.waitAcks(n, timeout)
	return li
}

// TestClusterFaultLeaderSigkill (a): the partition leader is SIGKILLed
// while a producer writes with acks=all, and restarted later; every
// acknowledged record is read back at its offset, in order, and the three
// replicas end byte-identical.
func TestClusterFaultLeaderSigkill(t *testing.T) {
	c := brokertest.NewProcCluster(t, 3, faultProps()...)
	c.CreateTopic(t, "fa", 1, 3, nil)
	k := startProducing(t, c.Addrs(), "fa", "a", 1_000_000)
	k.waitAcks(200, 30*time.Second)
	killLeaderAndRestart(t, c, "fa", k, 200, 30*time.Second, nil)
	k.verify(c.Addrs())
	waitLogsIdentical(t, c, "fa", 0, 30*time.Second)
}

// TestClusterFaultLeaderGracefulStop (b): the leader gets SIGTERM
// (controlled shutdown) while a producer writes with acks=all; the
// producer sees no non-retriable error and nothing acknowledged is lost.
func TestClusterFaultLeaderGracefulStop(t *testing.T) {
	c := brokertest.NewProcCluster(t, 3, faultProps("controlled.shutdown.enable", "true")...)
	c.CreateTopic(t, "fb", 1, 3, nil)
	k := startProducing(t, c.Addrs(), "fb", "b", 1_000_000)
	k.waitAcks(200, 30*time.Second)
	li := leaderIndex(t, c, "fb")
	c.Stop(li)
	st, err := c.PartitionState("fb", 0)
	if err != nil {
		t.Fatal(err)
	}
	if st.Leader == c.ID(li) || st.Leader < 0 {
		t.Errorf("after controlled shutdown the leader is %d (stopped broker %d)", st.Leader, c.ID(li))
	}
	k.waitAcks(200, 30*time.Second)
	c.Start(li)
	c.WaitForISR(t, "fb", 0, 3, 30*time.Second)
	k.waitAcks(200, 30*time.Second)
	k.verify(c.Addrs())
	if bad := k.nonRetriable(); len(bad) > 0 {
		t.Errorf("non-retriable producer errors: %v", bad)
	}
	waitLogsIdentical(t, c, "fb", 0, 30*time.Second)
}

// TestClusterFaultLeaderKilledTwice (h, KIP-279): the leader is SIGKILLed
// and the new leader is SIGKILLed right after its election; once both are
// back, nothing acknowledged is lost and the replicas' logs are identical.
func TestClusterFaultLeaderKilledTwice(t *testing.T) {
	c := brokertest.NewProcCluster(t, 3, faultProps()...)
	c.CreateTopic(t, "fh", 1, 3, nil)
	k := startProducing(t, c.Addrs(), "fh", "h", 1_000_000)
	k.waitAcks(300, 30*time.Second)
	first := leaderIndex(t, c, "fh")
	c.Kill(first)
	st := waitNewLeader(t, c, "fh", c.ID(first))
	second := c.Index(st.Leader)
	c.Kill(second)
	waitNewLeader(t, c, "fh", c.ID(second))
	c.Start(first)
	c.Start(second)
	c.WaitForISR(t, "fh", 0, 3, 30*time.Second)
	k.waitAcks(200, 30*time.Second)
	k.verify(c.Addrs())
	waitLogsIdentical(t, c, "fh", 0, 30*time.Second)
}

// TestClusterFaultChaseTheLeader (Kafka's replication_test "chase the
// leader"): three rounds, each hitting the current leader — SIGKILL, a
// pause past its ZooKeeper session (a zombie leader that resumes), SIGKILL
// again — with the broker back and the ISR full before the next round;
// nothing acknowledged is lost and the logs end identical.
func TestClusterFaultChaseTheLeader(t *testing.T) {
	c := brokertest.NewProcCluster(t, 3, faultProps("zookeeper.session.timeout.ms", "2000")...)
	c.CreateTopic(t, "fx", 1, 3, nil)
	k := startProducing(t, c.Addrs(), "fx", "x", 1_000_000)
	start := time.Now()
	phase := func(format string, args ...any) {
		t.Logf("%6.2fs "+format, append([]any{time.Since(start).Seconds()}, args...)...)
	}
	for round := 0; round < 3; round++ {
		k.waitAcks(150, 30*time.Second)
		li := leaderIndex(t, c, "fx")
		phase("round %d: leader %d", round, c.ID(li))
		if round == 1 {
			c.Pause(li)
			waitNewLeader(t, c, "fx", c.ID(li))
			phase("new leader elected")
			// The producer gets past the paused broker by read timeouts only.
			k.waitAcks(100, 60*time.Second)
			phase("producing again")
			c.Resume(li)
		} else {
			c.Kill(li)
			waitNewLeader(t, c, "fx", c.ID(li))
			phase("new leader elected")
			k.waitAcks(100, 30*time.Second)
			phase("producing again")
			c.Start(li)
		}
		c.WaitForISR(t, "fx", 0, 3, 30*time.Second)
		phase("ISR full")
	}
	k.waitAcks(100, 30*time.Second)
	k.verify(c.Addrs())
	waitLogsIdentical(t, c, "fx", 0, 30*time.Second)
}
