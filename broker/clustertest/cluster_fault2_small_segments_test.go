package clustertest_test

import (
	"testing"
	"time"

	"samsa/broker/brokertest"
)

// TestClusterFault2SmallSegmentsKill: with 4 KiB segments (a roll every
// few dozen records, so SIGKILL often lands during or right after a roll
// with several unflushed segments), the leader and then a follower are
// SIGKILLed three times under acks=all load and restarted at once (as soon
// as their registration is gone). Recovery must rebuild every unflushed
// segment; nothing acknowledged is lost and the replicas end identical.
func TestClusterFault2SmallSegmentsKill(t *testing.T) {
	c := brokertest.NewProcCluster(t, 3, faultProps()...)
	seg := "4096"
	c.CreateTopic(t, "ss", 1, 3, map[string]*string{"segment.bytes": &seg})
	k := startProducing(t, c.Addrs(), "ss", "ss", 1_000_000)
	for round := 0; round < 3; round++ {
		k.waitAcks(300, 30*time.Second)
		li, fi := followerIndex(t, c, "ss")
		c.Kill(li)
		waitNewLeader(t, c, "ss", c.ID(li))
		k.waitAcks(100, 30*time.Second)
		c.Kill(fi)
		c.Start(li)
		c.Start(fi)
		c.WaitForISR(t, "ss", 0, 3, 30*time.Second)
	}
	k.waitAcks(200, 30*time.Second)
	k.verify(c.Addrs())
	waitLogsIdentical(t, c, "ss", 0, 30*time.Second)
	segs, err := segmentFiles(t, c.Proc(0).Dir, "ss", 0)
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("%d segments", len(segs))
}
