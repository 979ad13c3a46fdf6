package clustertest_test

import (
	"sync"
	"testing"
	"time"

	"samsa/broker/brokertest"
	"samsa/zkutil"
	"samsa/zkutil/zktest"
)

// Helpers of the second fault wave (cluster_fault2_*_test.go): picking
// brokers, placing partitions, routing brokers through ZooKeeper proxies,
// and the end-of-scenario checks shared by the ackChecker runs.

// controllerIndex returns the index in c of the broker that is controller
// now.
func controllerIndex(t *testing.T, c *brokertest.ProcCluster) int {
	t.Helper()
	ctl, err := c.ZK().GetController()
	if err != nil {
		t.Fatal(err)
	}
	return c.Index(ctl)
}

// replicasLedBy returns the ids of c's brokers with broker x first (the
// preferred leader) and the others in index order.
func replicasLedBy(c *brokertest.ProcCluster, x int) []int32 {
	ids := []int32{c.ID(x)}
	for i := 0; i < c.N(); i++ {
		if i != x {
			ids = append(ids, c.ID(i))
		}
	}
	return ids
}

// produceLedBy creates topic with one partition on every broker of c,
// broker x its leader (createTopicOn waits for that and the full ISR),
// starts an ackChecker writing "<topic>-<n>" to it and waits for its first
// 200 acknowledgements.
func produceLedBy(t *testing.T, c *brokertest.ProcCluster, topic string, x int) *ackChecker {
	t.Helper()
	createTopicOn(t, c, topic, replicasLedBy(c, x))
	k := startProducing(t, c.Addrs(), topic, topic, 1_000_000)
	k.waitAcks(200, 30*time.Second)
	return k
}

// zkProxyEach restarts every broker of c with its ZooKeeper connection
// through a zktest.Proxy of its own and returns the proxies by broker
// index.
func zkProxyEach(t *testing.T, c *brokertest.ProcCluster) []*zktest.Proxy {
	t.Helper()
	srv := zktest.Start(t)
	proxies := make([]*zktest.Proxy, c.N())
	for i := range proxies {
		proxies[i] = srv.Proxy(t)
		c.ZKThrough(i, proxies[i].Addr)
	}
	return proxies
}

// undoOnce returns undo wrapped to run at most once and registers it with
// t.Cleanup, so a fault on the shared ZooKeeper server is undone even when
// the test stops early (later tests share the server).
func undoOnce(t *testing.T, undo func()) func() {
	var once sync.Once
	f := func() { once.Do(undo) }
	t.Cleanup(f)
	return f
}

// waitPartitions waits until cond holds for partition 0 of every topic.
func waitPartitions(t *testing.T, c *brokertest.ProcCluster, topics []string, timeout time.Duration,
	cond func(topic string, s zkutil.PartitionState) error) {
	t.Helper()
	for _, topic := range topics {
		c.WaitForState(t, topic, 0, timeout, func(s zkutil.PartitionState) error { return cond(topic, s) })
	}
}

// waitFullISRs waits until partition 0 of every topic has all of c's
// brokers in its ISR.
func waitFullISRs(t *testing.T, c *brokertest.ProcCluster, topics []string, timeout time.Duration) {
	t.Helper()
	for _, topic := range topics {
		c.WaitForISR(t, topic, 0, c.N(), timeout)
	}
}

// waitAllAcks waits until each checker has n more acknowledgements than
// when its turn came.
func waitAllAcks(ks []*ackChecker, n int, timeout time.Duration) {
	for _, k := range ks {
		k.waitAcks(n, timeout)
	}
}

// verifyAll checks every checker's acknowledged records (ackChecker.verify)
// and then waits until the replicas of each checker's partition are
// byte-identical.
func verifyAll(t *testing.T, c *brokertest.ProcCluster, ks []*ackChecker) {
	t.Helper()
	for _, k := range ks {
		k.verify(c.Addrs())
	}
	for _, k := range ks {
		waitLogsIdentical(t, c, k.topic, 0, 30*time.Second)
	}
}

// rejoinAndVerify ends a led-topics scenario (ledTopics) whose broker
// victim was killed and every partition has a live leader again: producing
// goes on without it (100 more acknowledgements per checker), it starts
// again, every ISR fills, 50 more acknowledgements, then verifyAll.
func rejoinAndVerify(t *testing.T, c *brokertest.ProcCluster, victim int, topics []string, ks []*ackChecker) {
	t.Helper()
	waitAllAcks(ks, 100, 60*time.Second)
	c.Start(victim)
	waitFullISRs(t, c, topics, 30*time.Second)
	waitAllAcks(ks, 50, 30*time.Second)
	verifyAll(t, c, ks)
}

// verifyCutLeader ends a scenario in which a leader cut off from
// ZooKeeper or its followers was sent value directly (rawProduce): after
// 100 more acknowledgements it checks every record k acknowledged, that
// value is in the log at offset at if the cut-off leader acknowledged it
// there, and waits for byte-identical replicas. It returns the log.
func verifyCutLeader(t *testing.T, c *brokertest.ProcCluster, k *ackChecker, value string, acked bool, at int64) map[int64]string {
	t.Helper()
	k.waitAcks(100, 30*time.Second)
	log := k.verify(c.Addrs())
	if acked && log[at] != value {
		t.Errorf("the cut-off leader acknowledged a record at offset %d that the log holds as %q", at, log[at])
	}
	waitLogsIdentical(t, c, k.topic, 0, 30*time.Second)
	return log
}

// zkServerFault is the opening of the tests that fault the ZooKeeper
// server itself (cluster_fault2_zkfrozen, _zkrestart): three broker
// processes, one acks=all-loaded topic led by each (ledTopics), the
// shared server the fault hits, and the victim that the test kills during
// the fault, the broker after the controller (it leads topics[victim]
// and is not the controller).
type zkServerFault struct {
	c      *brokertest.ProcCluster
	topics []string
	ks     []*ackChecker
	srv    *zktest.Server
	victim int
}

func startZKServerFault(t *testing.T, prefix string) *zkServerFault {
	t.Helper()
	c := brokertest.NewProcCluster(t, 3, faultProps()...)
	topics, ks := ledTopics(t, c, prefix)
	return &zkServerFault{c: c, topics: topics, ks: ks, srv: zktest.Start(t), victim: (controllerIndex(t, c) + 1) % c.N()}
}
