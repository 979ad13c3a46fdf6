package clustertest_test

import (
	"fmt"
	"testing"
	"time"

	"samsa/zkutil"
)

// TestClusterFault2ZKRestart: the ZooKeeper server itself goes down for
// 30 s and comes back on the same data (sessions survive: the server
// restarts their clocks), under acks=all load on three partitions, one led
// by each broker. Leaders keep serving while ZooKeeper is down. One leader
// is SIGKILLed at the end of the outage: nobody can replace it until
// ZooKeeper returns, and then its session expires and the controller
// elects a follower. Every partition has a live leader again, producing goes on
// everywhere, and nothing acknowledged is lost.
func TestClusterFault2ZKRestart(t *testing.T) {
	f := startZKServerFault(t, "zr") // victim leads topics[victim], not the controller
	c, topics, ks, srv, victim := f.c, f.topics, f.ks, f.srv, f.victim
	resume := undoOnce(t, func() {
		if err := srv.Resume(); err != nil {
			t.Fatalf("zookeeper did not come back: %v", err)
		}
	})
	start := time.Now()
	srv.Halt()
	t.Logf("%.1fs: zookeeper down", time.Since(start).Seconds())
	// Hold the outage for 30 s, checking that producing goes on.
	for round := 0; round < 10000 && time.Since(start) < 30*time.Second; round++ {
		waitAllAcks(ks, 20, 20*time.Second)
	}
	t.Logf("%.1fs: producing went on without ZooKeeper", time.Since(start).Seconds())
	// A leader dies just before ZooKeeper returns. While ZooKeeper is down
	// nobody can replace it, nor take it out of the other partitions'
	// ISRs (acks=all stalls there until then).
	c.Kill(victim)
	resume()
	t.Logf("%.1fs: zookeeper back", time.Since(start).Seconds())
	waitPartitions(t, c, topics, 30*time.Second, func(topic string, s zkutil.PartitionState) error {
		if s.Leader < 0 || s.Leader == c.ID(victim) {
			return fmt.Errorf("%s: leader %d (killed broker %d), ISR %v", topic, s.Leader, c.ID(victim), s.ISR)
		}
		return nil
	})
	t.Logf("%.1fs: every partition led by a live broker", time.Since(start).Seconds())
	rejoinAndVerify(t, c, victim, topics, ks)
}
