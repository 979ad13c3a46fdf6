package clustertest_test

import (
	"context"
	"fmt"
	"slices"
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
	n := scalePartitions(t)
	const perTopic = scalePerTopic
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

// TestClusterScaleProcControlledShutdownAndFailover is the same
// measurement on three `samsa` processes (brokertest.NewProcCluster), so
// each process holds its own N replicas (within the 20,000 open-file
// limit at N = 10,000), with real signals: SIGTERM for the controlled
// shutdown (timed to the process's exit, and by the broker's own log from
// "shutting down" to "controlled shutdown succeeded") and SIGKILL for the
// controller failover (its ZooKeeper session expires after
// zookeeper.session.timeout.ms, 6 s here), timed by ZooKeeper's own clock
// and a Metadata poll (measureScaleFailover). Opt-in with
// SAMSA_SCALE_PARTITIONS=N like the in-process variant;
// SAMSA_SCALE_LOG_DIR=dir keeps the brokers' logs there.
func TestClusterScaleProcControlledShutdownAndFailover(t *testing.T) {
	c, topics := scaleProcCluster(t, "")
	live := createScaleTopics(t, c, topics)
	for i := 0; i < c.N(); i++ {
		if n, err := c.OpenFiles(i); err == nil {
			t.Logf("broker %d has %d open files", c.ID(i), n)
		}
	}

	// Controlled shutdown of a broker that is not the controller.
	ctrlID, err := c.ZK().GetController()
	if err != nil {
		t.Fatal(err)
	}
	victim := (c.Index(ctrlID) + 1) % c.N()
	victimID := c.ID(victim)
	led := scaleLeaderCount(t, c, topics, victimID)
	sent := time.Now()
	took := c.StopTimed(victim, scaleLong)
	t.Logf("controlled shutdown of broker %d leading %d partitions: SIGTERM to exit %v%s",
		victimID, led, took, scaleLogSpan(c, victim, sent, "shutting down", "controlled shutdown succeeded"))
	delete(live, victimID)
	waitScaleStates(t, c, topics, len(topics)*scalePerTopic, live, 2, scaleLong)
	if m := scaleLeaderCount(t, c, topics, victimID); m != 0 {
		t.Fatalf("%d partitions still led by the stopped broker", m)
	}
	start := time.Now()
	c.StartWithin(victim, scaleLong)
	live[victimID] = true
	waitScaleStates(t, c, topics, len(topics)*scalePerTopic, live, 3, scaleLong)
	t.Logf("broker %d restarted, every ISR full again after %v", victimID, time.Since(start))

	measureScaleFailover(t, c, topics, live, ctrlID)
}

// waitScaleStates waits until ZooKeeper holds want partition states of
// topics, each with a live leader and isr ISR members, all live. Every
// snapshot read meanwhile is also checked for a partition with leader -1
// although a live broker is in its ISR (it could be led): that fails the
// test.
func waitScaleStates(t *testing.T, c *brokertest.ProcCluster, topics []string, want int,
	live map[int32]bool, isr int, timeout time.Duration) {
	t.Helper()
	brokertest.WaitFor(t, timeout, func() error {
		states, err := c.PartitionStates(topics)
		if err != nil {
			return err
		}
		for tp, s := range states {
			if s.Leader < 0 && slices.ContainsFunc(s.ISR, func(r int32) bool { return live[r] }) {
				t.Errorf("%s-%d has leader %d with live ISR members %v", tp.Topic, tp.Partition, s.Leader, s.ISR)
			}
		}
		if len(states) < want {
			return fmt.Errorf("%d of %d partition states", len(states), want)
		}
		bad, example := 0, ""
		for tp, s := range states {
			ok := live[s.Leader] && len(s.ISR) == isr
			for _, r := range s.ISR {
				ok = ok && live[r]
			}
			if !ok {
				bad++
				example = fmt.Sprintf("%s-%d leader %d ISR %v", tp.Topic, tp.Partition, s.Leader, s.ISR)
			}
		}
		if bad > 0 {
			return fmt.Errorf("%d partitions not led by a live broker with ISR %d (e.g. %s)", bad, isr, example)
		}
		return nil
	})
}

// waitScaleMetadata waits until every live broker's Metadata answer names
// a live leader for every partition of topics.
func waitScaleMetadata(t *testing.T, c *brokertest.ProcCluster, topics []string, live map[int32]bool, timeout time.Duration) {
	t.Helper()
	for i := 0; i < c.N(); i++ {
		if !live[c.ID(i)] {
			continue
		}
		brokertest.WaitFor(t, timeout, func() error {
			b := sarama.NewBroker(c.Addr(i))
			cfg := brokertest.SaramaConfig(sarama.V2_1_0_0)
			cfg.Net.ReadTimeout = time.Minute
			if err := b.Open(cfg); err != nil {
				return err
			}
			defer b.Close()
			resp, err := b.GetMetadata(&sarama.MetadataRequest{Version: 1, Topics: topics})
			if err != nil {
				return err
			}
			bad := 0
			for _, tm := range resp.Topics {
				for _, pm := range tm.Partitions {
					if !live[pm.Leader] {
						bad++
					}
				}
				if tm.Err != sarama.ErrNoError {
					bad++
				}
			}
			if bad > 0 || len(resp.Topics) != len(topics) {
				return fmt.Errorf("broker %d: %d partitions without a live leader, %d topics", c.ID(i), bad, len(resp.Topics))
			}
			return nil
		})
	}
}

// scaleLeaderCount returns how many partitions of topics ZooKeeper names
// id as leader of.
func scaleLeaderCount(t *testing.T, c *brokertest.ProcCluster, topics []string, id int32) int {
	t.Helper()
	states, err := c.PartitionStates(topics)
	if err != nil {
		t.Fatal(err)
	}
	n := 0
	for _, s := range states {
		if s.Leader == id {
			n++
		}
	}
	return n
}

// scaleLogSpan renders the time between the first from and the first
// later to line of broker i's log since since, or "" when either is
// missing.
func scaleLogSpan(c *brokertest.ProcCluster, i int, since time.Time, from, to string) string {
	a := c.LogTimes(i, from, since)
	if len(a) == 0 {
		return ""
	}
	b := c.LogTimes(i, to, a[0])
	if len(b) == 0 {
		return ""
	}
	return fmt.Sprintf(" (log: %q to %q %v)", from, to, b[0].Sub(a[0]))
}
