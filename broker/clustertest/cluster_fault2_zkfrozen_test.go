package clustertest_test

import (
	"fmt"
	"testing"
	"time"

	"samsa/broker/brokertest"
	"samsa/zkutil"
)

// TestClusterFault2ZKFrozen: the ZooKeeper server hangs (SIGSTOP) for
// 10 s, past every session timeout, under acks=all load on three
// partitions, one led by each broker; a follower dies during the freeze,
// so the leaders' ISR shrinks block on a server that accepts requests and
// never answers. After SIGCONT ZooKeeper expires the sessions; every broker
// registers again, every partition has a live leader, producing goes on
// with the dead broker out of the ISRs, it rejoins after a restart, and
// nothing acknowledged is lost.
func TestClusterFault2ZKFrozen(t *testing.T) {
	f := startZKServerFault(t, "zs")
	c, topics, ks, srv, victim := f.c, f.topics, f.ks, f.srv, f.victim
	thaw := undoOnce(t, func() {
		if err := srv.Thaw(); err != nil {
			t.Errorf("thaw: %v", err)
		}
	})
	start := time.Now()
	if err := srv.Freeze(); err != nil {
		t.Fatal(err)
	}
	waitAllAcks(ks, 50, 20*time.Second)
	t.Logf("%.1fs: producing goes on with ZooKeeper frozen", time.Since(start).Seconds())
	c.Kill(victim)
	// Hold the freeze for 10 s; the leaders now want to shrink their ISRs.
	for round := 0; round < 1000 && time.Since(start) < 10*time.Second; round++ {
		time.Sleep(100 * time.Millisecond) // the fault's duration, not a synchronisation
	}
	thaw()
	t.Logf("%.1fs: zookeeper thawed", time.Since(start).Seconds())
	brokertest.WaitFor(t, 30*time.Second, func() error {
		ids, err := c.ZK().GetBrokerIDs()
		if err != nil {
			return err
		}
		if len(ids) != c.N()-1 {
			return fmt.Errorf("registered brokers %v", ids)
		}
		return nil
	})
	waitPartitions(t, c, topics, 30*time.Second, func(topic string, s zkutil.PartitionState) error {
		if s.Leader < 0 || s.Leader == c.ID(victim) || len(s.ISR) != 2 {
			return fmt.Errorf("%s: leader %d ISR %v (dead broker %d)", topic, s.Leader, s.ISR, c.ID(victim))
		}
		return nil
	})
	t.Logf("%.1fs: every partition led by a live broker, ISR 2", time.Since(start).Seconds())
	rejoinAndVerify(t, c, victim, topics, ks)
}
