package broker_test

import (
	"context"
	"fmt"
	"os"
	"strconv"
	"testing"
	"time"

	"github.com/IBM/sarama"
	"github.com/sirupsen/logrus"

	"samsa/broker/brokertest"
)

// TestClusterScaleControlledShutdownAndFailover is the scale measurement
// of docs/benchmarks.md ("Controller operations at scale"). It runs only
// with SAMSA_SCALE_PARTITIONS=N (for example 10000): N partitions in
// topics of 100, RF 3 on three brokers; it reports the time to create them
// all with leaders, the controlled shutdown of a non-controller broker
// leading about N/3 of them (Broker.Shutdown with a grace period: the
// ControlledShutdown round trips, then stopping), and the controller
// failover after the controller is killed (until another broker is active
// and no partition names the dead broker as leader).
func TestClusterScaleControlledShutdownAndFailover(t *testing.T) {
	n, _ := strconv.Atoi(os.Getenv("SAMSA_SCALE_PARTITIONS"))
	if n <= 0 {
		t.Skip("set SAMSA_SCALE_PARTITIONS=10000 to run the scale measurement")
	}
	const perTopic = 100
	c := brokertest.NewCluster(t, 3, brokertest.WithLogLevel(logrus.WarnLevel),
		brokertest.WithProperty("auto.leader.rebalance.enable", "false"))
	admin := c.Admin(t, brokertest.SaramaConfig(sarama.V2_8_0_0))
	topics := (n + perTopic - 1) / perTopic
	start := time.Now()
	for i := 0; i < topics; i++ {
		err := admin.CreateTopic(fmt.Sprintf("s%04d", i), &sarama.TopicDetail{NumPartitions: perTopic, ReplicationFactor: 3}, false)
		if err != nil {
			t.Fatalf("create topic %d: %v", i, err)
		}
	}
	ctrl := c.Controller()
	leaderless := func(dead int32) int {
		snap := c.Broker(ctrl).Metadata()
		missing := 0
		for i := 0; i < topics; i++ {
			for p := int32(0); p < perTopic; p++ {
				ps, ok := snap.Partition(fmt.Sprintf("s%04d", i), p)
				if !ok || ps.Leader < 0 || ps.Leader == dead {
					missing++
				}
			}
		}
		return missing
	}
	brokertest.WaitFor(t, 10*time.Minute, func() error {
		if m := leaderless(-1); m > 0 {
			return fmt.Errorf("%d partitions without a leader", m)
		}
		return nil
	})
	t.Logf("created %d partitions (RF 3) with leaders in %v", topics*perTopic, time.Since(start))

	// Controlled shutdown of a broker that is not the controller.
	victim := (ctrl + 1) % c.N()
	led := 0
	for _, p := range c.Broker(victim).Replicas().Partitions() {
		if p.State().IsLeader {
			led++
		}
	}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Minute)
	start = time.Now()
	if err := c.Broker(victim).Shutdown(ctx); err != nil {
		t.Logf("shutdown: %v", err)
	}
	cancel()
	t.Logf("controlled shutdown of broker %d leading %d partitions took %v", c.Broker(victim).ID(), led, time.Since(start))
	c.Restart(victim)
	brokertest.WaitFor(t, 10*time.Minute, func() error {
		if m := leaderless(-1); m > 0 {
			return fmt.Errorf("%d partitions without a leader", m)
		}
		return nil
	})

	// Controller failover.
	deadID := c.Broker(ctrl).ID()
	start = time.Now()
	c.Kill(ctrl)
	next := -1
	brokertest.WaitFor(t, 10*time.Minute, func() error {
		for i := 0; i < c.N(); i++ {
			if b := c.Broker(i); b != nil && b.IsController() {
				next = i
				return nil
			}
		}
		return fmt.Errorf("no controller yet")
	})
	elected := time.Since(start)
	ctrl = next
	brokertest.WaitFor(t, 10*time.Minute, func() error {
		if m := leaderless(deadID); m > 0 {
			return fmt.Errorf("%d partitions still led by the dead broker or leaderless", m)
		}
		return nil
	})
	t.Logf("controller failover: new controller active after %v, every partition re-led after %v", elected, time.Since(start))
}
