package zkconsumer

import (
	"context"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/IBM/sarama"
	metrics "github.com/rcrowley/go-metrics"

	"samsa/broker/brokertest"
	"samsa/internal/testwait"
	"samsa/kafka"
)

// e2e is a running cluster with one topic and a record of what the
// consumers saw.
type e2e struct {
	cluster *brokertest.Cluster
	topic   string
	parts   int

	mu   sync.Mutex
	seen map[string]int // message value → deliveries
}

func newE2E(t *testing.T, brokers int, topic string, partitions int) *e2e {
	t.Helper()
	c := brokertest.NewCluster(t, brokers)
	c.CreateTopic(t, topic, int32(partitions), 1)
	return &e2e{cluster: c, topic: topic, parts: partitions, seen: map[string]int{}}
}

func (e *e2e) produce(t *testing.T, from, n int) {
	t.Helper()
	p := e.cluster.SyncProducer(t, nil)
	msgs := make([]*sarama.ProducerMessage, 0, n)
	for i := from; i < from+n; i++ {
		msgs = append(msgs, &sarama.ProducerMessage{
			Topic: e.topic, Key: sarama.StringEncoder(fmt.Sprint(i)), Value: sarama.StringEncoder(fmt.Sprintf("m%05d", i)),
		})
	}
	if err := p.SendMessages(msgs); err != nil {
		t.Fatal(err)
	}
}

func (e *e2e) config(group, id string) Config {
	cfg := testConfig(e.cluster.ZKConnect(), group, id)
	cfg.AutoOffsetReset = ResetSmallest
	cfg.Sarama = brokertest.SaramaConfig(sarama.V2_1_0_0)
	return cfg
}

// read consumes s on a goroutine until ctx ends, recording every message.
func (e *e2e) read(ctx context.Context, wg *sync.WaitGroup, s *Stream) {
	wg.Add(1)
	go func() {
		defer wg.Done()
		for {
			m, err := s.Next(ctx)
			if err != nil {
				s.MarkDone()
				return
			}
			e.mu.Lock()
			e.seen[string(m.Value)]++
			e.mu.Unlock()
		}
	}()
}

func (e *e2e) distinct() int {
	e.mu.Lock()
	defer e.mu.Unlock()
	return len(e.seen)
}

// checkAll checks that messages 0..n-1 were all seen, and with exact
// that none was seen twice.
func (e *e2e) checkAll(t *testing.T, n int, exact bool) {
	t.Helper()
	e.mu.Lock()
	defer e.mu.Unlock()
	dups := 0
	for i := 0; i < n; i++ {
		k := fmt.Sprintf("m%05d", i)
		switch c := e.seen[k]; {
		case c == 0:
			t.Errorf("message %s never delivered", k)
		case c > 1:
			dups++
			if exact {
				t.Errorf("message %s delivered %d times", k, c)
			}
		}
	}
	if len(e.seen) != n {
		t.Errorf("%d distinct messages seen, want %d", len(e.seen), n)
	}
	t.Logf("%d messages, %d delivered more than once", n, dups)
}

// checkOffsets checks that the offsets committed in ZooKeeper equal the log
// end offsets.
func (e *e2e) checkOffsets(t *testing.T, group string) {
	t.Helper()
	client := e.cluster.Sarama(t, nil)
	zk := e.cluster.ZooKeeper(t)
	for p := int32(0); p < int32(e.parts); p++ {
		end, err := client.GetOffset(e.topic, p, sarama.OffsetNewest)
		if err != nil {
			t.Fatal(err)
		}
		got, err := zk.GetConsumerOffset(group, e.topic, p)
		if err != nil || got != end {
			t.Errorf("partition %d: committed %d (%v), log end %d", p, got, err, end)
		}
	}
}

// waitDrained waits until the live members own every partition and have
// processed each up to its log end, so that what they commit next is
// complete (a message in hand at a rebalance is delivered again, and the
// test must not stop reading before that).
func (e *e2e) waitDrained(t *testing.T, live ...*Connector) {
	t.Helper()
	client := e.cluster.Sarama(t, nil)
	testwait.For(t, 60*time.Second, func() error {
		for p := int32(0); p < int32(e.parts); p++ {
			end, err := client.GetOffset(e.topic, p, sarama.OffsetNewest)
			if err != nil {
				return err
			}
			var processed int64 = -2
			for _, c := range live {
				c.mu.Lock()
				if ps := c.mu.owned[kafka.TopicPartition{Topic: e.topic, Partition: p}]; ps != nil {
					processed = ps.processed
				}
				c.mu.Unlock()
			}
			if processed != end {
				return fmt.Errorf("partition %d: processed %d, log end %d", p, processed, end)
			}
		}
		return nil
	})
}

// TestZKConsumerEndToEnd: two consumers in one group on a 2-broker
// cluster; after they converge, N messages are produced; each is consumed
// exactly once (no rebalance in between), and the committed offsets in
// ZooKeeper equal the log end offsets.
func TestZKConsumerEndToEnd(t *testing.T) {
	const n = 400
	e := newE2E(t, 2, "events", 4)
	regs := []metrics.Registry{metrics.NewRegistry(), metrics.NewRegistry()}
	cfg1, cfg2 := e.config("g", "c1"), e.config("g", "c2")
	cfg1.Metrics, cfg2.Metrics = regs[0], regs[1]
	c1 := newConnector(t, cfg1)
	c2 := newConnector(t, cfg2)
	s1 := startStatic(t, c1, map[string]int{"events": 2})
	s2 := startStatic(t, c2, map[string]int{"events": 1})
	zkEnvOf := &zkEnv{admin: e.cluster.ZooKeeper(t)}
	testwait.For(t, 60*time.Second, func() error {
		return zkEnvOf.converged("g", map[string]int{"events": 4}, []*Connector{c1, c2}, StrategyRange)
	})
	r1, _ := c1.Rebalances()
	r2, _ := c2.Rebalances()

	ctx, cancel := context.WithCancel(context.Background())
	var wg sync.WaitGroup
	for _, s := range append(s1["events"], s2["events"]...) {
		e.read(ctx, &wg, s)
	}
	e.produce(t, 0, n)
	testwait.For(t, 60*time.Second, func() error {
		if d := e.distinct(); d < n {
			return fmt.Errorf("%d of %d messages consumed", d, n)
		}
		return nil
	})
	cancel()
	wg.Wait()
	if a, b := mustRebalances(c1), mustRebalances(c2); a != r1 || b != r2 {
		t.Fatalf("a rebalance happened during consumption (%d→%d, %d→%d)", r1, a, r2, b)
	}
	e.checkAll(t, n, true)
	for _, c := range []*Connector{c1, c2} {
		if err := c.CommitOffsets(context.Background()); err != nil {
			t.Fatal(err)
		}
	}
	e.checkOffsets(t, "g")

	var messages, owned int64
	for _, reg := range regs {
		messages += metrics.GetOrRegisterMeter(MetricMessagesPerSec, reg).Count()
		owned += reg.Get(MetricOwnedPartitionsCount).(metrics.Gauge).Value()
		if n := metrics.GetOrRegisterTimer(MetricRebalanceRateAndTime, reg).Count(); n < 1 {
			t.Errorf("rebalance timer count %d", n)
		}
		if n := metrics.GetOrRegisterMeter(MetricZooKeeperCommitsPerSec, reg).Count(); n < 1 {
			t.Errorf("zookeeper commits %d", n)
		}
	}
	if messages != n || owned != 4 {
		t.Errorf("metrics: %d messages (want %d), %d owned partitions (want 4)", messages, n, owned)
	}
}

func mustRebalances(c *Connector) int {
	n, _ := c.Rebalances()
	return n
}

// TestZKConsumerEndToEndRebalance: consumption goes on while a second
// consumer joins and the first one leaves; every message is delivered at
// least once, and after Close (which commits) the offsets equal the log
// end offsets.
func TestZKConsumerEndToEndRebalance(t *testing.T) {
	const n = 600
	e := newE2E(t, 1, "moves", 3)
	e.produce(t, 0, n/3)

	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	var wg sync.WaitGroup
	c1 := newConnector(t, e.config("g", "c1"))
	for _, s := range startStatic(t, c1, map[string]int{"moves": 1})["moves"] {
		e.read(ctx, &wg, s)
	}
	testwait.For(t, 60*time.Second, func() error {
		if d := e.distinct(); d < n/6 {
			return fmt.Errorf("%d messages consumed", d)
		}
		return nil
	})
	c2 := newConnector(t, e.config("g", "c2"))
	for _, s := range startStatic(t, c2, map[string]int{"moves": 2})["moves"] {
		e.read(ctx, &wg, s)
	}
	e.produce(t, n/3, n/3)
	testwait.For(t, 60*time.Second, func() error {
		if d := e.distinct(); d < n/2 {
			return fmt.Errorf("%d messages consumed", d)
		}
		return nil
	})
	// c1 leaves (committing what it processed); c2 takes everything over.
	cancel1 := c1.Close()
	if cancel1 != nil {
		t.Fatal(cancel1)
	}
	e.produce(t, 2*n/3, n/3)
	testwait.For(t, 60*time.Second, func() error {
		if d := e.distinct(); d < n {
			return fmt.Errorf("%d of %d messages consumed", d, n)
		}
		return nil
	})
	e.waitDrained(t, c2)
	cancel()
	wg.Wait()
	e.checkAll(t, n, false)
	if err := c2.Close(); err != nil {
		t.Fatal(err)
	}
	e.checkOffsets(t, "g")
}

// TestZKConsumerLeaderFailover: the partition leader dies mid-stream; the
// fetcher follows the new leader (Sarama refreshes metadata) and every
// message is still delivered, without a group rebalance.
func TestZKConsumerLeaderFailover(t *testing.T) {
	const n = 100
	e := &e2e{cluster: brokertest.NewCluster(t, 2), topic: "ha", parts: 1, seen: map[string]int{}}
	e.cluster.CreateTopic(t, "ha", 1, 2)
	e.cluster.WaitForISR(t, "ha", 0, 2)
	e.produce(t, 0, n/2)
	c := newConnector(t, e.config("g", "c"))
	s := startStatic(t, c, map[string]int{"ha": 1})["ha"][0]
	for _, m := range consumeN(t, s, n/4) {
		e.seen[string(m.Value)]++
	}
	rebalances := mustRebalances(c)

	leader := e.cluster.WaitForLeader(t, "ha", 0)
	e.cluster.Kill(e.cluster.Index(leader))
	testwait.For(t, 30*time.Second, func() error {
		if l := e.cluster.WaitForLeader(t, "ha", 0); l == leader {
			return fmt.Errorf("broker %d still leads", l)
		}
		return nil
	})
	e.produce(t, n/2, n/2)
	for i := 0; e.distinct() < n && i < 10*n; i++ {
		m := consumeN(t, s, 1)[0]
		e.seen[string(m.Value)]++
	}
	e.checkAll(t, n, true)
	if got := mustRebalances(c); got != rebalances {
		t.Errorf("rebalances %d → %d: a leader change must not rebalance the group", rebalances, got)
	}
}

// TestZKConsumerEndToEndChurn: members keep joining and leaving while
// messages are produced; every message is still delivered at least once,
// and once the last member has closed (committing) the committed offsets
// equal the log end offsets.
func TestZKConsumerEndToEndChurn(t *testing.T) {
	const batches, per = 6, 100
	e := newE2E(t, 2, "churn", 4)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	var wg sync.WaitGroup
	start := func(id string) *Connector {
		c := newConnector(t, e.config("g", id))
		for _, s := range startStatic(t, c, map[string]int{"churn": 2})["churn"] {
			e.read(ctx, &wg, s)
		}
		return c
	}
	live := []*Connector{start("c0")}
	for b := 0; b < batches; b++ {
		e.produce(t, b*per, per)
		switch {
		case b%2 == 0:
			live = append(live, start(fmt.Sprintf("c%d", b+1)))
		case len(live) > 1:
			if err := live[0].Close(); err != nil {
				t.Fatal(err)
			}
			live = live[1:]
		}
		want := (b + 1) * per
		testwait.For(t, 60*time.Second, func() error {
			if d := e.distinct(); d < want {
				return fmt.Errorf("batch %d: %d of %d messages consumed", b, d, want)
			}
			return nil
		})
	}
	e.waitDrained(t, live...)
	cancel()
	wg.Wait()
	e.checkAll(t, batches*per, false)
	for _, c := range live {
		if err := c.Close(); err != nil {
			t.Fatal(err)
		}
	}
	e.checkOffsets(t, "g")
}
