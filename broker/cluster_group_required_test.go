package broker_test

import (
	"context"
	"errors"
	"fmt"
	"net"
	"sync"
	"testing"
	"time"

	"github.com/IBM/sarama"

	"samsa/broker/brokertest"
)

// Tests required by issue 6 (consumer groups) that the other group tests
// do not cover; docs/groups.md maps every required test to its place.

// groupCluster is a one-broker cluster tuned for fast group tests: a
// small offsets topic, no initial rebalance delay, short sessions allowed.
func groupCluster(t *testing.T) *brokertest.Cluster {
	return brokertest.NewCluster(t, 1,
		brokertest.WithProperty("offsets.topic.num.partitions", "3"),
		brokertest.WithProperty("offsets.topic.replication.factor", "1"),
		brokertest.WithProperty("group.initial.rebalance.delay.ms", "0"),
		brokertest.WithProperty("group.min.session.timeout.ms", "1000"))
}

// cutDialer dials normally until cut, then closes every connection it
// made and refuses new ones: the client process has crashed as far as the
// broker can tell (no LeaveGroup, no heartbeat).
type cutDialer struct {
	mu    sync.Mutex
	cut   bool
	conns []net.Conn
}

func (d *cutDialer) Dial(network, addr string) (net.Conn, error) {
	d.mu.Lock()
	defer d.mu.Unlock()
	if d.cut {
		return nil, errors.New("crashed")
	}
	conn, err := net.DialTimeout(network, addr, 5*time.Second)
	if err == nil {
		d.conns = append(d.conns, conn)
	}
	return conn, err
}

func (d *cutDialer) crash() {
	d.mu.Lock()
	defer d.mu.Unlock()
	d.cut = true
	for _, c := range d.conns {
		_ = c.Close()
	}
}

// saramaMember is one Sarama ConsumerGroup member that records the
// partitions of its current session.
type saramaMember struct {
	cg     sarama.ConsumerGroup
	dialer *cutDialer
	cancel context.CancelFunc
	done   chan struct{}

	mu     sync.Mutex
	claims []int32 // nil between sessions
}

func (m *saramaMember) Setup(s sarama.ConsumerGroupSession) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.claims = nil
	for _, ps := range s.Claims() {
		m.claims = append(m.claims, ps...)
	}
	if m.claims == nil {
		m.claims = []int32{}
	}
	return nil
}

func (m *saramaMember) Cleanup(sarama.ConsumerGroupSession) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.claims = nil
	return nil
}

func (m *saramaMember) ConsumeClaim(s sarama.ConsumerGroupSession, c sarama.ConsumerGroupClaim) error {
	for msg := range c.Messages() {
		s.MarkMessage(msg, "")
	}
	return nil
}

func (m *saramaMember) owned() ([]int32, bool) {
	m.mu.Lock()
	defer m.mu.Unlock()
	return append([]int32(nil), m.claims...), m.claims != nil
}

func startSaramaMember(t *testing.T, c *brokertest.Cluster, group, topic string, strategy sarama.BalanceStrategy) *saramaMember {
	t.Helper()
	cfg := brokertest.SaramaConfig(sarama.V2_8_0_0)
	cfg.Consumer.Offsets.Initial = sarama.OffsetOldest
	cfg.Consumer.Group.Session.Timeout = 3 * time.Second
	cfg.Consumer.Group.Heartbeat.Interval = 300 * time.Millisecond
	cfg.Consumer.Group.Rebalance.Timeout = 10 * time.Second
	cfg.Consumer.Group.Rebalance.Retry.Backoff = 200 * time.Millisecond
	cfg.Consumer.Group.Rebalance.GroupStrategies = []sarama.BalanceStrategy{strategy}
	m := &saramaMember{dialer: &cutDialer{}, done: make(chan struct{})}
	cfg.Net.Proxy.Enable = true
	cfg.Net.Proxy.Dialer = m.dialer
	cg, err := sarama.NewConsumerGroup(c.Addrs(), group, cfg)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	m.cg, m.cancel = cg, cancel
	go func() {
		defer close(m.done)
		for ctx.Err() == nil {
			if err := cg.Consume(ctx, []string{topic}, m); errors.Is(err, sarama.ErrClosedConsumerGroup) {
				return
			} else if err != nil {
				select { // back off before rejoining (a crashed member fails fast)
				case <-ctx.Done():
				case <-time.After(100 * time.Millisecond):
				}
			}
		}
	}()
	t.Cleanup(m.stop)
	return m
}

// stop closes the member (LeaveGroup when it can reach the broker).
// Idempotent; bounded even for a crashed member.
func (m *saramaMember) stop() {
	m.cancel()
	closed := make(chan struct{})
	go func() { _ = m.cg.Close(); close(closed) }()
	select {
	case <-closed:
	case <-time.After(20 * time.Second):
	}
	<-m.done
}

// waitExactlyOnce waits until the members, each in a session, together own
// every one of n partitions exactly once, each member owning some.
func waitExactlyOnce(t *testing.T, n int, members ...*saramaMember) {
	t.Helper()
	brokertest.WaitFor(t, 25*time.Second, func() error {
		owner := map[int32]int{}
		for i, m := range members {
			ps, ok := m.owned()
			if !ok || len(ps) == 0 {
				return fmt.Errorf("member %d owns nothing (in session: %v)", i, ok)
			}
			for _, p := range ps {
				if prev, dup := owner[p]; dup {
					return fmt.Errorf("partition %d owned by members %d and %d", p, prev, i)
				}
				owner[p] = i
			}
		}
		if len(owner) != n {
			return fmt.Errorf("%d of %d partitions owned: %v", len(owner), n, owner)
		}
		return nil
	})
}

// TestClusterGroupRequiredAssignors: a Sarama ConsumerGroup of 3 members
// on a 12-partition topic, with each client-side assignor (range,
// roundrobin, sticky), ends with every partition owned by exactly one
// member; when one member leaves (LeaveGroup) the other two take over all
// 12.
func TestClusterGroupRequiredAssignors(t *testing.T) {
	c := groupCluster(t)
	strategies := []sarama.BalanceStrategy{
		sarama.NewBalanceStrategyRange(), sarama.NewBalanceStrategyRoundRobin(), sarama.NewBalanceStrategySticky(),
	}
	for _, s := range strategies {
		t.Run(s.Name(), func(t *testing.T) {
			topic, group := "assign-"+s.Name(), "assign-group-"+s.Name()
			c.CreateTopic(t, topic, 12, 1)
			a := startSaramaMember(t, c, group, topic, s)
			b := startSaramaMember(t, c, group, topic, s)
			m3 := startSaramaMember(t, c, group, topic, s)
			waitExactlyOnce(t, 12, a, b, m3)
			m3.stop()
			waitExactlyOnce(t, 12, a, b)
		})
	}
}

// TestClusterGroupRequiredCrashedMember: a member that crashes (its
// connections drop, no LeaveGroup) is removed after its session timeout
// and the survivors are reassigned every partition.
func TestClusterGroupRequiredCrashedMember(t *testing.T) {
	c := groupCluster(t)
	const topic, group = "crash", "crash-group"
	c.CreateTopic(t, topic, 12, 1)
	s := sarama.NewBalanceStrategyRange()
	a := startSaramaMember(t, c, group, topic, s)
	b := startSaramaMember(t, c, group, topic, s)
	victim := startSaramaMember(t, c, group, topic, s)
	waitExactlyOnce(t, 12, a, b, victim)
	victim.dialer.crash()
	waitExactlyOnce(t, 12, a, b)
	admin := c.Admin(t, brokertest.SaramaConfig(sarama.V2_8_0_0))
	brokertest.WaitFor(t, 10*time.Second, func() error {
		desc, err := admin.DescribeConsumerGroups([]string{group})
		if err != nil {
			return err
		}
		if len(desc) != 1 || desc[0].State != "Stable" || len(desc[0].Members) != 2 {
			return fmt.Errorf("describe %+v", desc)
		}
		return nil
	})
}

// TestClusterGroupRequiredOffsetFetchUnknownGroup: OffsetFetch (v1-v7)
// for a group that never existed answers offset -1 with no error, as
// Kafka does.
func TestClusterGroupRequiredOffsetFetchUnknownGroup(t *testing.T) {
	c := groupCluster(t)
	c.CreateTopic(t, "nofetch", 2, 1)
	for v := int16(1); v <= 7; v++ {
		group := fmt.Sprintf("never-existed-%d", v)
		brokertest.WaitFor(t, 20*time.Second, func() error {
			_, coord := groupCoordinator(t, c, group)
			req := &sarama.OffsetFetchRequest{Version: v, ConsumerGroup: group}
			req.AddPartition("nofetch", 0)
			req.AddPartition("nofetch", 1)
			resp, err := coord.FetchOffset(req)
			if err != nil {
				return err
			}
			if !errors.Is(resp.Err, sarama.ErrNoError) {
				return fmt.Errorf("v%d: top-level error %w", v, resp.Err)
			}
			for p := int32(0); p < 2; p++ {
				b := resp.GetBlock("nofetch", p)
				if b == nil {
					return fmt.Errorf("v%d: no block for partition %d", v, p)
				}
				if !errors.Is(b.Err, sarama.ErrNoError) || b.Offset != -1 {
					t.Fatalf("v%d partition %d: offset %d err %v, want -1 and no error", v, p, b.Offset, b.Err)
				}
			}
			return nil
		})
	}
}

