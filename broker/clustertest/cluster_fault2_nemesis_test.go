package clustertest_test

import (
	"fmt"
	"math/rand/v2"
	"os"
	"strconv"
	"testing"
	"time"

	"samsa/broker/brokertest"
	"samsa/zkutil"
	"samsa/zkutil/zktest"
)

// nemesisCluster is a ProcCluster whose brokers each reach ZooKeeper
// through a zktest.Proxy and each other through a blackholing TCPProxy.
type nemesisCluster struct {
	*brokertest.ProcCluster
	zk  []*zktest.Proxy
	net []*brokertest.TCPProxy
}

func newNemesisCluster(t *testing.T, extraProps ...string) *nemesisCluster {
	t.Helper()
	c := &nemesisCluster{ProcCluster: brokertest.NewProcCluster(t, 3, faultProps(extraProps...)...)}
	srv := zktest.Start(t)
	// Every broker gets the inter-broker listener before any is restarted
	// again: a controller using it cannot reach a broker without it.
	c.net = interBrokerProxies(t, c.ProcCluster)
	for i := 0; i < c.N(); i++ {
		c.zk = append(c.zk, srv.Proxy(t))
		c.ZKThrough(i, c.zk[i].Addr)
	}
	return c
}

// waitHealthy waits until every partition of topics has a live leader and
// a full ISR.
func (c *nemesisCluster) waitHealthy(t *testing.T, topics []string, timeout time.Duration) {
	t.Helper()
	waitPartitions(t, c.ProcCluster, topics, timeout, func(topic string, s zkutil.PartitionState) error {
		if s.Leader < 0 || len(s.ISR) != c.N() {
			return fmt.Errorf("%s: leader %d ISR %v", topic, s.Leader, s.ISR)
		}
		return nil
	})
}

// TestClusterFault2Nemesis is a seeded random sequence of faults (Jepsen's
// combined nemesis), one at a time on a random broker under acks=all load
// on three partitions (one led by each broker): SIGKILL and restart (of
// one broker, or of two at once), and for 0.5-8 s (past the 3 s session
// and the 4 s replica lag, or not) SIGSTOP, a ZooKeeper cut, an
// inter-broker blackhole, or both of the latter (full isolation from
// everything but the clients). After each fault heals the
// cluster must recover within 40 s (every partition led, full ISR) and
// producing go on; at the end nothing acknowledged is lost and the
// replicas are identical. SAMSA_NEMESIS_SEED picks the sequence (default
// 1), SAMSA_NEMESIS_FAULTS its length (default 6).
func TestClusterFault2Nemesis(t *testing.T) {
	seed, faults := uint64(1), 6
	if s := os.Getenv("SAMSA_NEMESIS_SEED"); s != "" {
		v, err := strconv.ParseUint(s, 10, 64)
		if err != nil {
			t.Fatalf("SAMSA_NEMESIS_SEED=%q: %v", s, err)
		}
		seed = v
	}
	if s := os.Getenv("SAMSA_NEMESIS_FAULTS"); s != "" {
		v, err := strconv.Atoi(s)
		if err != nil || v < 1 || v > 1000 {
			t.Fatalf("SAMSA_NEMESIS_FAULTS=%q", s)
		}
		faults = v
	}
	rng := rand.New(rand.NewPCG(seed, 0))
	c := newNemesisCluster(t)
	topics, ks := ledTopics(t, c.ProcCluster, "nm")
	c.runFaults(t, rng, faults, topics, ks)
	verifyAll(t, c.ProcCluster, ks)
}

// runFaults applies n random faults one at a time (see
// TestClusterFault2Nemesis), each followed by recovery: every partition of
// topics led with a full ISR and every checker acknowledging again.
func (c *nemesisCluster) runFaults(t *testing.T, rng *rand.Rand, faults int, topics []string, ks []*ackChecker) {
	t.Helper()
	start := time.Now()
	for f := 0; f < faults; f++ {
		i := rng.IntN(c.N())
		hold := time.Duration(500+rng.IntN(7500)) * time.Millisecond
		kind := rng.IntN(6)
		names := []string{"kill", "pause", "zk-cut", "blackhole", "isolate", "kill-two"}
		t.Logf("%6.1fs fault %d: %s broker %d for %v", time.Since(start).Seconds(), f, names[kind], c.ID(i), hold)
		switch kind {
		case 0:
			c.Kill(i)
			c.Start(i)
		case 1:
			c.Pause(i)
			time.Sleep(hold) // the fault's duration
			c.Resume(i)
		case 2:
			c.zk[i].Block()
			time.Sleep(hold)
			c.zk[i].Unblock()
		case 3:
			c.net[i].Blackhole()
			time.Sleep(hold)
			c.net[i].Heal()
		case 4:
			c.zk[i].Block()
			c.net[i].Blackhole()
			time.Sleep(hold)
			c.net[i].Heal()
			c.zk[i].Unblock()
		case 5:
			j := (i + 1) % c.N()
			c.Kill(i)
			c.Kill(j)
			c.Start(i)
			c.Start(j)
		}
		c.waitHealthy(t, topics, 40*time.Second)
		waitAllAcks(ks, 20, 60*time.Second)
		t.Logf("%6.1fs recovered", time.Since(start).Seconds())
	}
}
