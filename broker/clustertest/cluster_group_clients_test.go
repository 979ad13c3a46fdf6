package clustertest_test

import (
	"context"
	"fmt"
	"sort"
	"sync"
	"testing"
	"time"

	"github.com/IBM/sarama"
	"github.com/twmb/franz-go/pkg/kgo"

	"samsa/broker/brokertest"
)

// groupConsumer is one franz-go group member that records what it
// consumed and what it currently owns.
type groupConsumer struct {
	cl     *kgo.Client
	cancel context.CancelFunc
	done   chan struct{}

	mu    sync.Mutex
	owned map[int32]bool
}

func (g *groupConsumer) ownedCount() int {
	g.mu.Lock()
	defer g.mu.Unlock()
	return len(g.owned)
}

// consumedSet is the values consumed by all members of a test.
type consumedSet struct {
	mu   sync.Mutex
	seen map[string]bool
}

func (s *consumedSet) count() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return len(s.seen)
}

func startGroupConsumer(t *testing.T, c *brokertest.Cluster, group, topic string, seen *consumedSet, opts ...kgo.Opt) *groupConsumer {
	t.Helper()
	g := &groupConsumer{owned: map[int32]bool{}, done: make(chan struct{})}
	track := func(add bool) func(context.Context, *kgo.Client, map[string][]int32) {
		return func(_ context.Context, _ *kgo.Client, m map[string][]int32) {
			g.mu.Lock()
			defer g.mu.Unlock()
			for _, p := range m[topic] {
				if add {
					g.owned[p] = true
				} else {
					delete(g.owned, p)
				}
			}
		}
	}
	base := []kgo.Opt{
		kgo.SeedBrokers(c.Addrs()...),
		kgo.ConsumerGroup(group),
		kgo.ConsumeTopics(topic),
		kgo.ConsumeResetOffset(kgo.NewOffset().AtStart()),
		kgo.HeartbeatInterval(300 * time.Millisecond),
		kgo.FetchMaxWait(200 * time.Millisecond),
		kgo.OnPartitionsAssigned(track(true)),
		kgo.OnPartitionsRevoked(track(false)),
		kgo.OnPartitionsLost(track(false)),
	}
	cl, err := kgo.NewClient(append(base, opts...)...)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	g.cl, g.cancel = cl, cancel
	go func() {
		defer close(g.done)
		for ctx.Err() == nil {
			fs := cl.PollFetches(ctx)
			fs.EachRecord(func(r *kgo.Record) {
				seen.mu.Lock()
				seen.seen[string(r.Value)] = true
				seen.mu.Unlock()
			})
		}
	}()
	return g
}

func (g *groupConsumer) stop() {
	g.cancel()
	<-g.done
	g.cl.Close()
}

// produceN writes values prefix0..prefixN-1 round-robin over partitions.
func produceN(t *testing.T, p sarama.SyncProducer, topic, prefix string, n, partitions int) {
	t.Helper()
	for i := 0; i < n; i++ {
		msg := &sarama.ProducerMessage{Topic: topic, Partition: int32(i % partitions), Value: sarama.StringEncoder(fmt.Sprintf("%s%d", prefix, i))}
		if _, _, err := p.SendMessage(msg); err != nil {
			t.Fatal(err)
		}
	}
}

// TestClusterGroupBalancers: assignors run client-side and the coordinator
// passes their metadata through opaquely, so franz-go's range, roundrobin,
// sticky and cooperative-sticky (incremental, KIP-429) balancers all
// spread a topic over two members, and the members consume every record.
func TestClusterGroupBalancers(t *testing.T) {
	c := brokertest.NewCluster(t, 1, brokertest.WithProperty("offsets.topic.num.partitions", "3"),
		brokertest.WithProperty("offsets.topic.replication.factor", "1"))
	cfg := brokertest.SaramaConfig(sarama.V2_8_0_0)
	cfg.Producer.Partitioner = sarama.NewManualPartitioner
	prod := c.SyncProducer(t, cfg)
	balancers := map[string]kgo.GroupBalancer{
		"range":              kgo.RangeBalancer(),
		"roundrobin":         kgo.RoundRobinBalancer(),
		"sticky":             kgo.StickyBalancer(),
		"cooperative-sticky": kgo.CooperativeStickyBalancer(),
	}
	names := make([]string, 0, len(balancers))
	for n := range balancers {
		names = append(names, n)
	}
	sort.Strings(names)
	for _, name := range names {
		t.Run(name, func(t *testing.T) {
			topic, group := "bal-"+name, "group-"+name
			c.CreateTopic(t, topic, 4, 1)
			produceN(t, prod, topic, "a", 40, 4)
			seen := &consumedSet{seen: map[string]bool{}}
			a := startGroupConsumer(t, c, group, topic, seen, kgo.Balancers(balancers[name]))
			defer a.stop()
			b := startGroupConsumer(t, c, group, topic, seen, kgo.Balancers(balancers[name]))
			defer b.stop()
			brokertest.WaitFor(t, 60*time.Second, func() error {
				na, nb := a.ownedCount(), b.ownedCount()
				if na == 0 || nb == 0 || na+nb != 4 {
					return fmt.Errorf("owned %d + %d of 4 partitions", na, nb)
				}
				if n := seen.count(); n != 40 {
					return fmt.Errorf("consumed %d of 40", n)
				}
				return nil
			})
			produceN(t, prod, topic, "b", 40, 4)
			brokertest.WaitFor(t, 60*time.Second, func() error {
				if n := seen.count(); n != 80 {
					return fmt.Errorf("consumed %d of 80", n)
				}
				return nil
			})
		})
	}
}

// TestClusterGroupStaticMember: KIP-345. A static member
// (group.instance.id) that restarts joins under a new member id, gets its
// partitions back and resumes from its committed offsets; DescribeGroups
// shows one member with the instance id.
func TestClusterGroupStaticMember(t *testing.T) {
	c := brokertest.NewCluster(t, 1, brokertest.WithProperty("offsets.topic.num.partitions", "3"),
		brokertest.WithProperty("offsets.topic.replication.factor", "1"))
	cfg := brokertest.SaramaConfig(sarama.V2_8_0_0)
	cfg.Producer.Partitioner = sarama.NewManualPartitioner
	prod := c.SyncProducer(t, cfg)
	const topic, group = "static", "static-group"
	c.CreateTopic(t, topic, 2, 1)
	produceN(t, prod, topic, "a", 10, 2)
	seen := &consumedSet{seen: map[string]bool{}}
	a := startGroupConsumer(t, c, group, topic, seen, kgo.InstanceID("instance-a"), kgo.SessionTimeout(30*time.Second))
	brokertest.WaitFor(t, 60*time.Second, func() error {
		if n, o := seen.count(), a.ownedCount(); n != 10 || o != 2 {
			return fmt.Errorf("consumed %d of 10, owning %d", n, o)
		}
		return nil
	})
	a.cl.CommitUncommittedOffsets(context.Background())
	a.stop()
	produceN(t, prod, topic, "b", 10, 2)
	seen2 := &consumedSet{seen: map[string]bool{}}
	a2 := startGroupConsumer(t, c, group, topic, seen2, kgo.InstanceID("instance-a"), kgo.SessionTimeout(30*time.Second))
	defer a2.stop()
	brokertest.WaitFor(t, 60*time.Second, func() error {
		if n, o := seen2.count(), a2.ownedCount(); n < 10 || o != 2 {
			return fmt.Errorf("consumed %d of 10, owning %d", n, o)
		}
		return nil
	})
	seen2.mu.Lock()
	for v := range seen2.seen {
		if v[0] != 'b' {
			t.Errorf("restarted member re-consumed %q despite the committed offsets", v)
		}
	}
	seen2.mu.Unlock()
	admin := c.Admin(t, brokertest.SaramaConfig(sarama.V2_8_0_0))
	desc, err := admin.DescribeConsumerGroups([]string{group})
	if err != nil || len(desc) != 1 || desc[0].State != "Stable" || len(desc[0].Members) != 1 {
		t.Fatalf("describe: %+v %v", desc, err)
	}
	for _, m := range desc[0].Members {
		if m.GroupInstanceId == nil || *m.GroupInstanceId != "instance-a" {
			t.Fatalf("member %+v lacks its instance id", m)
		}
	}
}
