package clustertest_test

import (
	"fmt"
	"slices"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kerr"

	"samsa/broker/brokertest"
	"samsa/zkutil"
	"samsa/zkutil/zktest"
)

// interBrokerProxies restarts every broker of c with its inter-broker
// listener behind a TCPProxy of its own (clients and ZooKeeper connect
// directly) and returns the proxies by broker index.
func interBrokerProxies(t *testing.T, c *brokertest.ProcCluster) []*brokertest.TCPProxy {
	t.Helper()
	proxies := make([]*brokertest.TCPProxy, c.N())
	for i := 0; i < c.N(); i++ {
		port, err := brokertest.FreePort()
		if err != nil {
			t.Fatal(err)
		}
		proxies[i] = brokertest.NewTCPProxy(t, fmt.Sprintf("127.0.0.1:%d", port))
		c.InterBrokerThrough(i, port, proxies[i].Addr)
	}
	return proxies
}

// TestClusterFault2LeaderIsolated: the partition leader (not the
// controller) is cut from both followers and the controller: everything
// sent to its inter-broker listener is held (a blackhole: connections stay
// open, nothing arrives), while clients and ZooKeeper still reach it. Its
// followers' fetches stall, so it shrinks the ISR to itself after
// replica.lag.time.max.ms and refuses acks=all with NOT_ENOUGH_REPLICAS;
// nothing is acknowledged with fewer than min.insync.replicas copies and no
// other leader is elected. Once healed the followers catch up, the ISR is
// full again, producing goes on and nothing acknowledged is lost.
func TestClusterFault2LeaderIsolated(t *testing.T) {
	c := brokertest.NewProcCluster(t, 3, faultProps()...)
	proxies := interBrokerProxies(t, c)
	x := nonController(t, c)
	k := produceLedBy(t, c, "iso", x)

	start := time.Now()
	proxies[x].Blackhole()
	st := c.WaitForState(t, "iso", 0, 30*time.Second, func(s zkutil.PartitionState) error {
		if len(s.ISR) != 1 {
			return fmt.Errorf("leader %d ISR %v", s.Leader, s.ISR)
		}
		return nil
	})
	t.Logf("%.1fs: ISR %v, leader %d", time.Since(start).Seconds(), st.ISR, st.Leader)
	if st.Leader != c.ID(x) || !slices.Equal(st.ISR, []int32{c.ID(x)}) {
		t.Errorf("isolated leader %d: state leader %d ISR %v, want the leader alone", c.ID(x), st.Leader, st.ISR)
	}
	// Anything acknowledged from now on would sit on the leader alone.
	answered, acked, off, code := rawProduce(t, c.Addr(x), "iso", "isolated", 10*time.Second)
	if acked {
		t.Errorf("the isolated leader acknowledged a record at offset %d with ISR %v", off, st.ISR)
	} else if answered && code != kerr.NotEnoughReplicas.Code {
		t.Errorf("the isolated leader answered %v, want NOT_ENOUGH_REPLICAS", kerr.ErrorForCode(code))
	}
	before := k.ackCount()

	proxies[x].Heal()
	t.Logf("%.1fs: healed", time.Since(start).Seconds())
	c.WaitForISR(t, "iso", 0, 3, 30*time.Second)
	t.Logf("%.1fs: ISR full", time.Since(start).Seconds())
	k.waitAcks(200, 30*time.Second)
	k.verify(c.Addrs())
	if final, err := c.PartitionState("iso", 0); err == nil && final.Leader != c.ID(x) {
		t.Logf("note: leader moved to %d (preferred-leader rebalance or election)", final.Leader)
	}
	t.Logf("%d acknowledged before heal", before)
	waitLogsIdentical(t, c, "iso", 0, 30*time.Second)
}

// TestClusterFault2LeaderFullyIsolated: the partition leader (not the
// controller) loses its followers, the controller and ZooKeeper at once
// (inter-broker traffic to it blackholed, its ZooKeeper connections cut)
// while clients still reach it. Its followers' fetches hang on the
// blackholed connections; when its session expires the controller elects
// a follower, and the followers must leave the hung fetches behind and
// follow the new leader. Producing resumes; the old leader acknowledges
// nothing after the election, and after healing it rejoins as a follower.
func TestClusterFault2LeaderFullyIsolated(t *testing.T) {
	c := brokertest.NewProcCluster(t, 3, faultProps()...)
	proxies := interBrokerProxies(t, c)
	x := nonController(t, c)
	zkp := zktest.Start(t).Proxy(t)
	c.ZKThrough(x, zkp.Addr)
	k := produceLedBy(t, c, "fi", x)

	start := time.Now()
	proxies[x].Blackhole()
	zkp.Block()
	st := waitNewLeader(t, c, "fi", c.ID(x))
	t.Logf("%.1fs: new leader %d, ISR %v", time.Since(start).Seconds(), st.Leader, st.ISR)
	// Both survivors must be replicating from the new leader: the ISR
	// holds both again (or never lost the other).
	c.WaitForISR(t, "fi", 0, 2, 30*time.Second)
	_, acked, ackedAt, _ := rawProduce(t, c.Addr(x), "fi", "isolated", 8*time.Second)
	k.waitAcks(100, 60*time.Second)
	t.Logf("%.1fs: producing again", time.Since(start).Seconds())

	proxies[x].Heal()
	zkp.Unblock()
	c.WaitForISR(t, "fi", 0, 3, 30*time.Second)
	t.Logf("%.1fs: ISR full", time.Since(start).Seconds())
	verifyCutLeader(t, c, k, "isolated", acked, ackedAt)
}
