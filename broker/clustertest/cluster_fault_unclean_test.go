package clustertest_test

import (
	"fmt"
	"strings"
	"testing"
	"time"

	"samsa/broker/brokertest"
	"samsa/zkutil"
)

// Unclean leader election (issue 4, test e). The ISR is narrowed to the
// leader by killing both followers, then the leader is killed too, and the
// followers (out of the ISR) come back first.

// lastLeaderStanding runs the sequence up to "leader killed, followers
// back" and returns the old leader's index and the checker.
func lastLeaderStanding(t *testing.T, c *brokertest.ProcCluster, topic string, unclean bool) (int, *ackChecker) {
	t.Helper()
	v := fmt.Sprint(unclean)
	c.CreateTopic(t, topic, 1, 3, map[string]*string{"unclean.leader.election.enable": &v})
	k := startProducing(t, c.Addrs(), topic, "e", 1_000_000)
	k.waitAcks(200, 30*time.Second)
	li, fa := followerIndex(t, c, topic)
	fb := 3 - li - fa
	c.Kill(fa)
	c.WaitForISR(t, topic, 0, 2, 30*time.Second)
	k.waitAcks(100, 30*time.Second)
	c.Kill(fb)
	c.WaitForISR(t, topic, 0, 1, 30*time.Second)
	c.Kill(li)
	// With every broker down nobody is controller; the first broker back
	// is, and finds the leader dead.
	c.Start(fa)
	c.Start(fb)
	return li, k
}

// TestClusterFaultUncleanElectionOff: with unclean election off the
// partition stays offline while only out-of-sync replicas live, comes back
// when the last ISR member returns, and loses nothing acknowledged.
func TestClusterFaultUncleanElectionOff(t *testing.T) {
	c := brokertest.NewProcCluster(t, 3, faultProps()...)
	li, k := lastLeaderStanding(t, c, "fe", false)
	c.WaitForState(t, "fe", 0, 30*time.Second, func(s zkutil.PartitionState) error {
		if s.Leader >= 0 {
			return fmt.Errorf("leader %d, ISR %v: want offline", s.Leader, s.ISR)
		}
		return nil
	})
	// Offline must last: observe it for a bounded period.
	for deadline := time.Now().Add(3 * time.Second); time.Now().Before(deadline); time.Sleep(100 * time.Millisecond) {
		st, err := c.PartitionState("fe", 0)
		if err != nil {
			t.Fatal(err)
		}
		if st.Leader >= 0 {
			t.Fatalf("partition came back with leader %d (ISR %v) while its only ISR member %d is down", st.Leader, st.ISR, c.ID(li))
		}
	}
	c.Start(li)
	st := c.WaitForISR(t, "fe", 0, 3, 30*time.Second)
	if st.Leader != c.ID(li) {
		t.Errorf("leader %d after the last ISR member %d returned", st.Leader, c.ID(li))
	}
	k.waitAcks(100, 30*time.Second)
	k.verify(c.Addrs())
	waitLogsIdentical(t, c, "fe", 0, 30*time.Second)
	for i := 0; i < c.N(); i++ {
		if strings.Contains(c.Log(i), "unclean leader election; data may be lost") {
			t.Errorf("broker %d logged an unclean election with unclean.leader.election.enable=false", c.ID(i))
		}
	}
}

// TestClusterFaultUncleanElectionOn: with unclean election on a returning
// out-of-sync replica leads at once, the controller warns, and the old
// leader rejoins as a follower with a log identical to the new leader's.
func TestClusterFaultUncleanElectionOn(t *testing.T) {
	c := brokertest.NewProcCluster(t, 3, faultProps()...)
	li, k := lastLeaderStanding(t, c, "fu", true)
	st := c.WaitForState(t, "fu", 0, 10*time.Second, func(s zkutil.PartitionState) error {
		if s.Leader < 0 {
			return fmt.Errorf("still offline (ISR %v)", s.ISR)
		}
		return nil
	})
	if st.Leader == c.ID(li) {
		t.Fatalf("the down broker %d is leader", st.Leader)
	}
	brokertest.WaitFor(t, 10*time.Second, func() error {
		for i := 0; i < c.N(); i++ {
			for _, line := range strings.Split(c.Log(i), "\n") {
				if strings.Contains(line, "level=warning") && strings.Contains(line, "unclean leader election") {
					return nil
				}
			}
		}
		return fmt.Errorf("no broker logged a warning about the unclean election")
	})
	k.waitAcks(100, 30*time.Second)
	c.Start(li)
	c.WaitForISR(t, "fu", 0, 3, 30*time.Second)
	k.halt()
	waitLogsIdentical(t, c, "fu", 0, 30*time.Second)
}
