package clustertest_test

import (
	"errors"
	"fmt"
	"testing"
	"time"

	"samsa/broker/brokertest"
	"samsa/zkutil"
	"samsa/zkutil/zktest"
)

// TestClusterFault2ZKOutage: every broker loses ZooKeeper at once (their
// connections go through one proxy, which cuts and refuses them) for
// longer than the session timeout, while producers write with acks=all to
// two partitions, one led by the controller and one by another broker.
// Leaders keep serving without ZooKeeper (their followers still fetch);
// ZooKeeper expires every session; when it is reachable again every broker
// registers anew, a controller is elected, every partition has a leader
// again, producers go on, and nothing acknowledged is lost. A broker
// killed during the outage (its ISR shrink has to wait for ZooKeeper) is
// dropped from the ISRs once ZooKeeper is back, and rejoins on restart.
func TestClusterFault2ZKOutage(t *testing.T) {
	c := brokertest.NewProcCluster(t, 3, faultProps()...)
	zkp := zktest.Start(t).Proxy(t)
	for i := 0; i < c.N(); i++ {
		c.ZKThrough(i, zkp.Addr)
	}
	ci := controllerIndex(t, c)
	other := (ci + 1) % c.N()
	ks := []*ackChecker{produceLedBy(t, c, "zo1", ci), produceLedBy(t, c, "zo2", other)}
	topics := []string{"zo1", "zo2"}

	start := time.Now()
	zkp.Block()
	// Without ZooKeeper the leaders and their followers go on.
	waitAllAcks(ks, 100, 20*time.Second)
	t.Logf("%.1fs: producing goes on without ZooKeeper", time.Since(start).Seconds())
	// ZooKeeper expires every broker session.
	brokertest.WaitFor(t, 30*time.Second, func() error {
		ids, err := c.ZK().GetBrokerIDs()
		if err != nil {
			return err
		}
		if len(ids) > 0 {
			return fmt.Errorf("brokers %v still registered", ids)
		}
		return nil
	})
	t.Logf("%.1fs: every session expired", time.Since(start).Seconds())
	// Hold the outage for 15 s, checking that producing goes on.
	for round := 0; round < 100 && time.Since(start) < 15*time.Second; round++ {
		waitAllAcks(ks, 50, 20*time.Second)
	}
	// The broker that leads neither partition dies while ZooKeeper is
	// out: nobody can shrink the ISRs now, so acks=all stalls until
	// ZooKeeper returns.
	third := 3 - ci - other
	c.Kill(third)
	t.Logf("%.1fs: broker %d killed", time.Since(start).Seconds(), c.ID(third))

	zkp.Unblock()
	brokertest.WaitFor(t, 30*time.Second, func() error {
		ids, err := c.ZK().GetBrokerIDs()
		if err != nil {
			return err
		}
		if len(ids) != c.N()-1 {
			return fmt.Errorf("registered brokers %v", ids)
		}
		if _, err := c.ZK().GetController(); errors.Is(err, zkutil.ErrNoNode) {
			return fmt.Errorf("no controller")
		}
		return nil
	})
	t.Logf("%.1fs: brokers registered again", time.Since(start).Seconds())
	for _, topic := range topics {
		c.WaitForISR(t, topic, 0, 2, 30*time.Second)
	}
	waitAllAcks(ks, 50, 30*time.Second)
	t.Logf("%.1fs: producing with ISR 2", time.Since(start).Seconds())
	c.Start(third)
	waitFullISRs(t, c, topics, 30*time.Second)
	t.Logf("%.1fs: ISRs full", time.Since(start).Seconds())
	waitAllAcks(ks, 100, 30*time.Second)
	verifyAll(t, c, ks)
}
