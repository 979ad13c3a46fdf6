package clustertest_test

import (
	"net"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"

	"samsa/broker/brokertest"
	"samsa/broker/record"
	"samsa/broker/wire"
)

// TestClusterFaultZombieLeader (Jepsen's pause, B5.2): the leader is
// frozen past its ZooKeeper session while its followers elect a new
// leader; an acks=all Produce is already waiting in its socket when it
// resumes. By then replica.lag.time.max.ms has passed, so the zombie wants
// to shrink its ISR to itself; that write must fail (stale zkVersion), and
// the Produce must not be acknowledged unless the record really is in the
// new leader's log at that offset.
func TestClusterFaultZombieLeader(t *testing.T) {
	c := brokertest.NewProcCluster(t, 3, faultProps("zookeeper.session.timeout.ms", "2000", "replica.lag.time.max.ms", "1000")...)
	c.CreateTopic(t, "fz", 1, 3, nil)
	k := startProducing(t, c.Addrs(), "fz", "z", 1_000_000)
	k.waitAcks(200, 30*time.Second)
	li := leaderIndex(t, c, "fz")
	c.Pause(li)
	waitNewLeader(t, c, "fz", c.ID(li))
	k.waitAcks(100, 60*time.Second)

	// The kernel accepts the connection and buffers the request of the
	// frozen process.
	conn, err := net.DialTimeout("tcp", c.Addr(li), 5*time.Second)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	h := record.NewBuildHeader(0, time.Now().UnixMilli())
	batch, err := record.Build(h, []record.Record{{Value: []byte("zombie")}}, record.CodecNone)
	if err != nil {
		t.Fatal(err)
	}
	req := brokertest.ProduceRequest(7, -1, 5000, "fz", 0, batch)
	id := "zombie"
	if _, err := conn.Write(wire.AppendRequest(nil, req, 1, &id)); err != nil {
		t.Fatal(err)
	}
	c.Resume(li)
	if err := conn.SetDeadline(time.Now().Add(30 * time.Second)); err != nil {
		t.Fatal(err)
	}
	var acked bool
	var ackedAt int64
	frame, err := wire.ReadFrame(conn, 1<<20, nil)
	if err != nil {
		t.Logf("zombie produce: connection ended: %v", err)
	} else {
		resp, err := wire.ParseResponse(frame, req, 1)
		if err != nil {
			t.Fatal(err)
		}
		p := resp.(*kmsg.ProduceResponse).Topics[0].Partitions[0]
		t.Logf("zombie produce answered: %v at offset %d", kerr.ErrorForCode(p.ErrorCode), p.BaseOffset)
		acked, ackedAt = p.ErrorCode == 0, p.BaseOffset
	}
	c.WaitForISR(t, "fz", 0, 3, 30*time.Second)
	k.waitAcks(100, 30*time.Second)
	log := k.verify(c.Addrs())
	if acked && log[ackedAt] != "zombie" {
		t.Errorf("the zombie leader acknowledged a record at offset %d that the log holds as %q", ackedAt, log[ackedAt])
	}
	waitLogsIdentical(t, c, "fz", 0, 30*time.Second)
}
