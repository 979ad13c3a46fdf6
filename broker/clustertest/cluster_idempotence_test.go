package clustertest_test

import (
	"testing"
	"time"

	"samsa/broker/brokertest"
)

// TestClusterSaramaIdempotentLeaderFailover: a Sarama producer with
// Producer.Idempotent (acks=all, one request in flight, retries) writes
// while the partition leader is killed. KIP-98's guarantee: every
// acknowledged record is in the log exactly once, in order; retries of
// batches the old leader had replicated are recognised by the new leader
// (its producer state comes from follower appends) and not appended again.
func TestClusterSaramaIdempotentLeaderFailover(t *testing.T) {
	c := brokertest.NewCluster(t, 3, faultProps()...)
	c.CreateTopic(t, "idem-fo", 1, 3)
	leader := c.WaitForLeader(t, "idem-fo", 0)
	c.WaitForISR(t, "idem-fo", 0, 3)

	k := startIdempotentProducing(t, c.Addrs(), "idem-fo", "i", 100_000)
	k.waitAcks(200, 60*time.Second)
	li := c.Index(leader)
	c.Kill(li)
	k.waitAcks(200, 60*time.Second)
	c.Restart(li)
	c.WaitForISR(t, "idem-fo", 0, 3)
	k.waitAcks(100, 60*time.Second)
	k.verifyExactlyOnce(c.Addrs(), true)
}

// TestClusterFaultIdempotentLeaderSigkill: as above with broker processes
// and SIGKILL, so the killed leader restarts without a clean shutdown and
// rebuilds its producer state from the snapshot of its last roll plus the
// log after it, then catches up as a follower. No acknowledged record is
// lost or duplicated, and the replicas end byte-identical.
func TestClusterFaultIdempotentLeaderSigkill(t *testing.T) {
	c := brokertest.NewProcCluster(t, 3, faultProps("log.segment.bytes", "65536")...)
	c.CreateTopic(t, "idem-kill", 1, 3, nil)
	k := startIdempotentProducing(t, c.Addrs(), "idem-kill", "k", 1_000_000)
	k.waitAcks(300, 60*time.Second)
	killLeaderAndRestart(t, c, "idem-kill", k, 300, 60*time.Second, nil)
	k.verifyExactlyOnce(c.Addrs(), false)
	waitLogsIdentical(t, c, "idem-kill", 0, 60*time.Second)
}
