package clustertest_test

import (
	"fmt"
	"testing"
	"time"

	"samsa/broker/brokertest"
	"samsa/zkutil"
)

// ledTopics creates one single-partition topic per broker, "<prefix>-<i>"
// preferring broker i as leader, and starts a checker on each.
func ledTopics(t *testing.T, c *brokertest.ProcCluster, prefix string) ([]string, []*ackChecker) {
	t.Helper()
	var topics []string
	var ks []*ackChecker
	for i := 0; i < c.N(); i++ {
		ids := []int32{c.ID(i)}
		for j := 1; j < c.N(); j++ {
			ids = append(ids, c.ID((i+j)%c.N()))
		}
		topic := fmt.Sprintf("%s-%d", prefix, i)
		createTopicOn(t, c, topic, ids)
		topics = append(topics, topic)
	}
	for _, topic := range topics {
		ks = append(ks, startProducing(t, c.Addrs(), topic, topic, 1_000_000))
	}
	waitAllAcks(ks, 100, 30*time.Second)
	return topics, ks
}

// TestClusterFault2ControllerAndLeaderKilled: the controller and the
// leader of another partition are SIGKILLed together under acks=all load
// on three partitions, one led by each broker. The survivor becomes
// controller and leads everything with ISR = itself (acks=all refused, not
// acknowledged); the two return, every partition gets its full ISR back,
// producing goes on, nothing acknowledged is lost, and the replicas of
// each partition end byte-identical.
func TestClusterFault2ControllerAndLeaderKilled(t *testing.T) {
	c := brokertest.NewProcCluster(t, 3, faultProps()...)
	topics, ks := ledTopics(t, c, "ck")
	ci := controllerIndex(t, c)
	li := (ci + 1) % c.N()
	survivor := 3 - ci - li
	c.Kill(ci)
	c.Kill(li)
	waitPartitions(t, c, topics, 30*time.Second, func(topic string, s zkutil.PartitionState) error {
		if s.Leader != c.ID(survivor) || len(s.ISR) != 1 {
			return fmt.Errorf("%s: leader %d ISR %v, want the survivor %d alone", topic, s.Leader, s.ISR, c.ID(survivor))
		}
		return nil
	})
	if got, err := c.ZK().GetController(); err != nil || got != c.ID(survivor) {
		t.Errorf("controller %d (%v), want the survivor %d", got, err, c.ID(survivor))
	}
	c.Start(ci)
	c.Start(li)
	waitFullISRs(t, c, topics, 30*time.Second)
	waitAllAcks(ks, 100, 60*time.Second)
	verifyAll(t, c, ks)
}

// TestClusterFault2RollingKill: every broker in turn is SIGKILLed under
// acks=all load on three partitions (one led by each broker) and started
// again as soon as its registration is gone, the next one killed as soon
// as the previous one is registered again, without waiting for the ISRs
// to refill. At the end every partition has a leader and a full ISR,
// producing goes on and nothing acknowledged is lost.
func TestClusterFault2RollingKill(t *testing.T) {
	c := brokertest.NewProcCluster(t, 3, faultProps()...)
	topics, ks := ledTopics(t, c, "rk")
	for round := 0; round < 2; round++ {
		for i := 0; i < c.N(); i++ {
			c.Kill(i)
			c.Start(i)
		}
	}
	waitFullISRs(t, c, topics, 40*time.Second)
	waitAllAcks(ks, 100, 60*time.Second)
	verifyAll(t, c, ks)
}
