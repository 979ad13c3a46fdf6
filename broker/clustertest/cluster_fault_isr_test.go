package clustertest_test

import (
	"errors"
	"fmt"
	"slices"
	"testing"
	"time"

	"github.com/IBM/sarama"

	"samsa/broker/brokertest"
	"samsa/zkutil"
)

// ISR under process faults (issue 4, tests c, d and f).

func followerIndex(t *testing.T, c *brokertest.ProcCluster, topic string) (leader, follower int) {
	t.Helper()
	li := leaderIndex(t, c, topic)
	for i := 0; i < c.N(); i++ {
		if i != li {
			return li, i
		}
	}
	t.Fatal("no follower")
	return -1, -1
}

// loadedFollower creates topic (one partition on all three brokers of c)
// under acks=all load (values prefix-n, 200 acknowledged already) and
// picks a follower: the producer, the follower's index and its
// registration before the fault.
func loadedFollower(t *testing.T, c *brokertest.ProcCluster, topic, prefix string) (*ackChecker, int, zkutil.BrokerInfo) {
	t.Helper()
	c.CreateTopic(t, topic, 1, 3, nil)
	k := startProducing(t, c.Addrs(), topic, prefix, 1_000_000)
	k.waitAcks(200, 30*time.Second)
	_, fi := followerIndex(t, c, topic)
	before, err := c.ZK().GetBroker(c.ID(fi))
	if err != nil {
		t.Fatal(err)
	}
	return k, fi, before
}

// TestClusterFaultFollowerPaused (c): a follower stopped with SIGSTOP
// leaves the ISR by the leader's decision after replica.lag.time.max.ms
// (its ZooKeeper session still alive), acks=all produce goes on with
// ISR = 2, and the follower rejoins after SIGCONT.
func TestClusterFaultFollowerPaused(t *testing.T) {
	const lag = 1000 * time.Millisecond
	c := brokertest.NewProcCluster(t, 3, faultProps("replica.lag.time.max.ms", "1000", "zookeeper.session.timeout.ms", "4000")...)
	k, fi, before := loadedFollower(t, c, "fc", "c")
	id := c.ID(fi)
	paused := time.Now()
	c.Pause(fi)
	c.WaitForState(t, "fc", 0, 20*time.Second, func(s zkutil.PartitionState) error {
		if slices.Contains(s.ISR, id) {
			return fmt.Errorf("ISR %v still holds paused broker %d", s.ISR, id)
		}
		return nil
	})
	shrunk := time.Since(paused)
	reg, regErr := c.ZK().GetBroker(id)
	c.Resume(fi)
	if shrunk < lag {
		t.Errorf("ISR shrank %v after the pause, before replica.lag.time.max.ms %v", shrunk, lag)
	}
	if regErr != nil || reg.Epoch != before.Epoch {
		t.Logf("note: broker %d's registration changed during the pause (%v): the shrink may have come from the controller", id, regErr)
	}
	t.Logf("ISR shrank %v after SIGSTOP", shrunk)
	k.waitAcks(200, 30*time.Second)
	c.WaitForISR(t, "fc", 0, 3, 30*time.Second)
	k.waitAcks(100, 30*time.Second)
	k.verify(c.Addrs())
	waitLogsIdentical(t, c, "fc", 0, 30*time.Second)
}

// TestClusterFaultTwoBrokersDown (d): with both followers killed the ISR
// is the leader alone, below min.insync.replicas=2: acks=all produce fails
// with NOT_ENOUGH_REPLICAS, none of those records is acknowledged, and
// none of them appears once the followers are back.
func TestClusterFaultTwoBrokersDown(t *testing.T) {
	c := brokertest.NewProcCluster(t, 3, faultProps()...)
	c.CreateTopic(t, "fd", 1, 3, nil)
	k := startProducing(t, c.Addrs(), "fd", "d", 300)
	k.waitAcks(300, 30*time.Second)
	li := leaderIndex(t, c, "fd")
	var down []int
	for i := 0; i < c.N(); i++ {
		if i != li {
			c.Kill(i)
			down = append(down, i)
		}
	}
	c.WaitForISR(t, "fd", 0, 1, 30*time.Second)

	cfg := faultProducerConfig()
	cfg.Producer.Retry.Max = 1
	p, err := sarama.NewSyncProducer([]string{c.Addr(li)}, cfg)
	if err != nil {
		t.Fatal(err)
	}
	defer p.Close()
	var refused []string
	for n := 0; n < 20; n++ {
		v := fmt.Sprintf("refused-%d", n)
		_, off, err := p.SendMessage(&sarama.ProducerMessage{Topic: "fd", Partition: 0, Value: sarama.StringEncoder(v)})
		if err == nil {
			t.Fatalf("%s acknowledged at offset %d with ISR below min.insync.replicas", v, off)
		}
		if !errors.Is(err, sarama.ErrNotEnoughReplicas) {
			t.Errorf("%s: %v, want NOT_ENOUGH_REPLICAS", v, err)
		}
		refused = append(refused, v)
	}
	for _, i := range down {
		c.Start(i)
	}
	c.WaitForISR(t, "fd", 0, 3, 30*time.Second)
	log := k.verify(c.Addrs())
	for off, v := range log {
		if slices.Contains(refused, v) {
			t.Errorf("refused record %s is in the log at offset %d", v, off)
		}
	}
	waitLogsIdentical(t, c, "fd", 0, 30*time.Second)
}

// TestClusterFaultZKSessionExpiry (f): a follower paused for longer than
// zookeeper.session.timeout.ms loses its session (the controller drops it
// from the ISR); after SIGCONT it registers again under a new session
// (new broker epoch) and rejoins the ISR, with nothing acknowledged lost.
func TestClusterFaultZKSessionExpiry(t *testing.T) {
	c := brokertest.NewProcCluster(t, 3, faultProps("zookeeper.session.timeout.ms", "2000", "replica.lag.time.max.ms", "30000")...)
	k, fi, before := loadedFollower(t, c, "ff", "f")
	id := c.ID(fi)
	c.Pause(fi)
	brokertest.WaitFor(t, 30*time.Second, func() error {
		if _, err := c.ZK().GetBroker(id); !errors.Is(err, zkutil.ErrNoNode) {
			return fmt.Errorf("broker %d still registered (%v)", id, err)
		}
		return nil
	})
	c.WaitForISR(t, "ff", 0, 2, 30*time.Second)
	k.waitAcks(100, 30*time.Second)
	c.Resume(fi)
	brokertest.WaitFor(t, 30*time.Second, func() error {
		reg, err := c.ZK().GetBroker(id)
		if err != nil {
			return err
		}
		if reg.Epoch == before.Epoch {
			return fmt.Errorf("broker %d registration has the old epoch %d", id, reg.Epoch)
		}
		return nil
	})
	c.WaitForISR(t, "ff", 0, 3, 30*time.Second)
	k.waitAcks(100, 30*time.Second)
	k.verify(c.Addrs())
	waitLogsIdentical(t, c, "ff", 0, 30*time.Second)
}
