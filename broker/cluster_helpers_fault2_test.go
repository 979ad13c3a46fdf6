package broker_test

import (
	"sync"
	"testing"
	"time"

	"samsa/broker/brokertest"
	"samsa/zkutil"
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
