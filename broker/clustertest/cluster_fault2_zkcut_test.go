package clustertest_test

import (
	"fmt"
	"net"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"

	"samsa/broker/brokertest"
	"samsa/broker/record"
	"samsa/broker/wire"
	"samsa/zkutil/zktest"
)

// rawProduce sends one acks=all Produce v7 of value to topic-partition 0
// on addr and waits up to wait for the answer. ok reports an
// acknowledgement (error code 0) at offset; answered is false when the
// connection ended or timed out without an answer.
func rawProduce(t *testing.T, addr, topic, value string, wait time.Duration) (answered, ok bool, offset int64, code int16) {
	t.Helper()
	conn, err := net.DialTimeout("tcp", addr, 5*time.Second)
	if err != nil {
		t.Logf("raw produce to %s: %v", addr, err)
		return false, false, -1, 0
	}
	defer conn.Close()
	h := record.NewBuildHeader(0, time.Now().UnixMilli())
	batch, err := record.Build(h, []record.Record{{Value: []byte(value)}}, record.CodecNone)
	if err != nil {
		t.Fatal(err)
	}
	req := brokertest.ProduceRequest(7, -1, int32(wait/time.Millisecond/2), topic, 0, batch)
	id := "fault2"
	if err := conn.SetDeadline(time.Now().Add(wait)); err != nil {
		t.Fatal(err)
	}
	if _, err := conn.Write(wire.AppendRequest(nil, req, 1, &id)); err != nil {
		t.Logf("raw produce to %s: %v", addr, err)
		return false, false, -1, 0
	}
	frame, err := wire.ReadFrame(conn, 1<<20, nil)
	if err != nil {
		t.Logf("raw produce to %s: no answer: %v", addr, err)
		return false, false, -1, 0
	}
	resp, err := wire.ParseResponse(frame, req, 1)
	if err != nil {
		t.Fatal(err)
	}
	p := resp.(*kmsg.ProduceResponse).Topics[0].Partitions[0]
	t.Logf("raw produce %s to %s: %v at offset %d", value, addr, kerr.ErrorForCode(p.ErrorCode), p.BaseOffset)
	return true, p.ErrorCode == 0, p.BaseOffset, p.ErrorCode
}

// createTopicOn creates topic with one partition whose replica list is
// ids (the first is the preferred leader) and waits for the full ISR.
func createTopicOn(t *testing.T, c *brokertest.ProcCluster, topic string, ids []int32) {
	t.Helper()
	createAssigned(t, c.Admin(t), topic, map[int32][]int32{0: ids}, nil)
	st := c.WaitForISR(t, topic, 0, len(ids), 60*time.Second)
	if st.Leader != ids[0] {
		t.Fatalf("%s: leader %d, want %d", topic, st.Leader, ids[0])
	}
}

// nonController returns the index of a broker that is not the controller.
func nonController(t *testing.T, c *brokertest.ProcCluster) int {
	t.Helper()
	ci := controllerIndex(t, c)
	for i := 0; i < c.N(); i++ {
		if i != ci {
			return i
		}
	}
	t.Fatal("every broker is the controller")
	return -1
}

// TestClusterFault2LeaderZKCut: the partition leader alone loses
// ZooKeeper (its connections through a proxy are cut and refused) while
// its followers and the clients still reach it. Its session expires, the
// controller elects a follower, and from then on the old leader must not
// acknowledge acks=all writes: a record it acknowledged after the
// election would be lost. When ZooKeeper comes back it registers again
// (new session) and rejoins as a follower, truncating what it held alone.
func TestClusterFault2LeaderZKCut(t *testing.T) {
	c := brokertest.NewProcCluster(t, 3, faultProps()...)
	x := nonController(t, c)
	zkp := zktest.Start(t).Proxy(t)
	c.ZKThrough(x, zkp.Addr)
	k := produceLedBy(t, c, "zc", x)

	zkp.Block()
	st := waitNewLeader(t, c, "zc", c.ID(x))
	t.Logf("leader %d cut from ZooKeeper; new leader %d (ISR %v)", c.ID(x), st.Leader, st.ISR)
	// The old leader's clients, followers and metadata are unchanged: a
	// Produce sent to it now must not be acknowledged unless the record
	// really is in the new leader's log.
	_, acked, ackedAt, _ := rawProduce(t, c.Addr(x), "zc", "cut-leader", 8*time.Second)
	k.waitAcks(100, 60*time.Second)

	zkp.Unblock()
	c.WaitForISR(t, "zc", 0, 3, 30*time.Second)
	log := verifyCutLeader(t, c, k, "cut-leader", acked, ackedAt)
	for off, v := range log {
		if v == "cut-leader" && !acked {
			t.Logf("note: unacknowledged cut-leader record survived at offset %d", off)
		}
	}
}

// TestClusterFault2ControllerZKCut: the controller, also leader of a
// partition, alone loses ZooKeeper while brokers and clients still reach
// it. Another broker becomes controller and elects a new leader; the old
// controller's requests (older controller epoch) must be refused, the old
// leader must not acknowledge acks=all any more, and once ZooKeeper is
// back it rejoins as a plain broker and follower.
func TestClusterFault2ControllerZKCut(t *testing.T) {
	c := brokertest.NewProcCluster(t, 3, faultProps()...)
	proxies := zkProxyEach(t, c)
	x := controllerIndex(t, c)
	ctl := c.ID(x)
	k := produceLedBy(t, c, "cz", x)

	proxies[x].Block()
	st := waitNewLeader(t, c, "cz", ctl)
	newCtl, err := c.ZK().GetController()
	t.Logf("controller %d cut from ZooKeeper; controller now %d (%v), leader %d (ISR %v)", ctl, newCtl, err, st.Leader, st.ISR)
	if err == nil && newCtl == ctl {
		t.Errorf("the cut-off broker %d is still controller", ctl)
	}
	_, acked, ackedAt, _ := rawProduce(t, c.Addr(x), "cz", "cut-controller", 8*time.Second)
	k.waitAcks(100, 60*time.Second)

	proxies[x].Unblock()
	c.WaitForISR(t, "cz", 0, 3, 30*time.Second)
	verifyCutLeader(t, c, k, "cut-controller", acked, ackedAt)
	// A partition created now (by the new controller) gets replicas on
	// every broker, the old controller included.
	c.CreateTopic(t, "cz2", 1, 3, nil)
}

// TestClusterFault2LeaderZKFlap: three rounds, each cutting the current
// leader from ZooKeeper just long enough for its session to expire and
// letting it back at once, so that its new registration races the
// controller's handling of the old one's loss (a bounced broker). Every
// round ends with a live leader and a full ISR; nothing acknowledged is
// lost and the replicas end identical.
func TestClusterFault2LeaderZKFlap(t *testing.T) {
	c := brokertest.NewProcCluster(t, 3, faultProps()...)
	proxies := zkProxyEach(t, c)
	c.CreateTopic(t, "zf", 1, 3, nil)
	k := startProducing(t, c.Addrs(), "zf", "zf", 1_000_000)
	for round := 0; round < 3; round++ {
		k.waitAcks(100, 60*time.Second)
		li := leaderIndex(t, c, "zf")
		before, err := c.ZK().GetBroker(c.ID(li))
		if err != nil {
			t.Fatal(err)
		}
		proxies[li].Block()
		brokertest.WaitFor(t, 30*time.Second, func() error {
			if _, err := c.ZK().GetBroker(c.ID(li)); err == nil {
				return fmt.Errorf("broker %d still registered", c.ID(li))
			}
			return nil
		})
		proxies[li].Unblock()
		brokertest.WaitFor(t, 30*time.Second, func() error {
			reg, err := c.ZK().GetBroker(c.ID(li))
			if err != nil {
				return err
			}
			if reg.Epoch == before.Epoch {
				return fmt.Errorf("broker %d: old registration", c.ID(li))
			}
			return nil
		})
		st := c.WaitForISR(t, "zf", 0, 3, 30*time.Second)
		t.Logf("round %d: leader %d flapped; leader now %d", round, c.ID(li), st.Leader)
	}
	k.waitAcks(100, 60*time.Second)
	k.verify(c.Addrs())
	waitLogsIdentical(t, c, "zf", 0, 30*time.Second)
}
