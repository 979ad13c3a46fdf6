package zkconsumer

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	"samsa/broker/brokertest"
	"samsa/internal/testwait"
	"samsa/kafka"
	"samsa/zkutil"
)

// TestMain stops the shared ZooKeeper (brokertest.Main is zktest.Main).
func TestMain(m *testing.M) { brokertest.Main(m) }

// TestZKConsumerRegistrationJSON checks the ids znode: ephemeral, Kafka's
// JSON (version, subscription, pattern, timestamp as a string), and a
// consumer without brokers owning nothing (Kafka returns from the
// rebalance when /brokers/ids is empty).
func TestZKConsumerRegistrationJSON(t *testing.T) {
	e := newZKEnv(t)
	c := newConnector(t, testConfig(e.connect, "grp1", ""))
	before := time.Now().UnixMilli()
	startStatic(t, c, map[string]int{"topicA": 2, "topicB": 1})

	data, st, err := e.admin.Get(zkutil.ConsumerIDPath("grp1", c.ConsumerID()))
	if err != nil {
		t.Fatal(err)
	}
	if st.EphemeralOwner == 0 {
		t.Error("ids znode is not ephemeral")
	}
	var raw map[string]any
	if err := json.Unmarshal(data, &raw); err != nil {
		t.Fatalf("registration %s: %v", data, err)
	}
	if raw["version"] != float64(1) || raw["pattern"] != "static" {
		t.Errorf("registration %s: want version 1, pattern static", data)
	}
	sub, _ := raw["subscription"].(map[string]any)
	if sub["topicA"] != float64(2) || sub["topicB"] != float64(1) || len(sub) != 2 {
		t.Errorf("subscription %v", sub)
	}
	ts, ok := raw["timestamp"].(string)
	if !ok {
		t.Fatalf("timestamp %v is not a JSON string", raw["timestamp"])
	}
	reg, err := zkutil.DecodeConsumerRegistration(data)
	if err != nil || reg.Timestamp < before-1000 || reg.Timestamp > time.Now().UnixMilli() {
		t.Errorf("timestamp %q (%v)", ts, err)
	}
	if len(c.Owned()) != 0 {
		t.Errorf("owns %v without brokers", c.Owned())
	}

	// Closing removes the registration with the session.
	_ = c.Close()
	testwait.For(t, 10*time.Second, func() error {
		ids, err := e.admin.GetConsumerIDs("grp1")
		if err != nil || len(ids) != 0 {
			return errors.New("registration still present")
		}
		return nil
	})
}

// TestZKConsumerWildcardRegistration checks a whitelist subscription's
// JSON: {"<cleaned regex>": streams} with pattern white_list.
func TestZKConsumerWildcardRegistration(t *testing.T) {
	e := newZKEnv(t)
	c := newConnector(t, testConfig(e.connect, "grp2", "fixed"))
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	if _, err := c.CreateMessageStreamsByFilter(ctx, Whitelist(` "logs-.*, metrics" `), 3); err != nil {
		t.Fatal(err)
	}
	if c.ConsumerID() != "grp2_fixed" {
		t.Fatalf("consumer id %q", c.ConsumerID())
	}
	reg, err := e.admin.GetConsumerRegistration("grp2", "grp2_fixed")
	if err != nil {
		t.Fatal(err)
	}
	if reg.Pattern != "white_list" || len(reg.Subscription) != 1 || reg.Subscription["logs-.*|metrics"] != 3 {
		t.Fatalf("registration %+v", reg)
	}
}

// TestZKConsumerOwnersAndOffsets checks the owner znodes (ephemeral,
// "<consumerId>-<thread>") of a single consumer, and that a commit writes
// /consumers/<g>/offsets/<t>/<p> as ASCII, read back at the next start.
func TestZKConsumerOwnersAndOffsets(t *testing.T) {
	e := newZKEnv(t)
	e.addBroker(t, 1)
	e.addTopic(t, "t", 3)
	c := newConnector(t, testConfig(e.connect, "g", "c1"))
	startStatic(t, c, map[string]int{"t": 2})
	testwait.For(t, 20*time.Second, func() error { return e.converged("g", map[string]int{"t": 3}, []*Connector{c}, StrategyRange) })
	_, st, err := e.admin.Get(zkutil.ConsumerOwnerPath("g", "t", 0))
	if err != nil || st.EphemeralOwner == 0 {
		t.Fatalf("owner znode: %v, ephemeral owner %x", err, st.EphemeralOwner)
	}
	if o, _ := e.admin.GetPartitionOwner("g", "t", 2); o != "g_c1-1" {
		t.Fatalf("owner of t/2 = %q, want g_c1-1", o)
	}

	// Pretend the application processed up to offset 41 of t/1.
	c.mu.Lock()
	c.mu.owned[kafka.TopicPartition{Topic: "t", Partition: 1}].processed = 42
	c.mu.Unlock()
	if err := c.CommitOffsets(context.Background()); err != nil {
		t.Fatal(err)
	}
	data, _, err := e.admin.Get(zkutil.ConsumerOffsetPath("g", "t", 1))
	if err != nil || string(data) != "42" {
		t.Fatalf("offset znode = %q, %v; want \"42\"", data, err)
	}
	if _, err := e.admin.GetConsumerOffset("g", "t", 0); !errors.Is(err, zkutil.ErrNoNode) {
		t.Fatalf("t/0 has no processed offset and must not be committed: %v", err)
	}
	_ = c.Close()

	// A new member starts from the committed offset.
	c2 := newConnector(t, testConfig(e.connect, "g", "c2"))
	startStatic(t, c2, map[string]int{"t": 1})
	testwait.For(t, 20*time.Second, func() error { return e.converged("g", map[string]int{"t": 3}, []*Connector{c2}, StrategyRange) })
	c2.mu.Lock()
	got := c2.mu.owned[kafka.TopicPartition{Topic: "t", Partition: 1}].committed
	c2.mu.Unlock()
	if got != 42 {
		t.Fatalf("committed offset read back = %d, want 42", got)
	}
}

// TestZKConsumerRebalance: three consumers join one at a time and converge
// on the assignment every one of them computes; one leaves and the others
// take over its partitions; then the same with roundrobin.
func TestZKConsumerRebalance(t *testing.T) {
	for _, strategy := range []string{StrategyRange, StrategyRoundRobin} {
		t.Run(strategy, func(t *testing.T) {
			e := newZKEnv(t)
			e.addBroker(t, 1)
			e.addTopic(t, "a", 5)
			e.addTopic(t, "b", 3)
			topics := map[string]int{"a": 5, "b": 3}
			var members []*Connector
			for _, id := range []string{"c1", "c2", "c3"} {
				cfg := testConfig(e.connect, "g", id)
				cfg.PartitionAssignmentStrategy = strategy
				c := newConnector(t, cfg)
				startStatic(t, c, map[string]int{"a": 2, "b": 2})
				members = append(members, c)
				testwait.For(t, 30*time.Second, func() error { return e.converged("g", topics, members, strategy) })
			}
			// c2 leaves: the others take over.
			_ = members[1].Close()
			members = []*Connector{members[0], members[2]}
			testwait.For(t, 30*time.Second, func() error { return e.converged("g", topics, members, strategy) })
		})
	}
}

// TestZKConsumerTopicChange: adding partitions to a subscribed topic (a
// data change of /brokers/topics/<t>) and creating a subscribed topic
// trigger a rebalance.
func TestZKConsumerTopicChange(t *testing.T) {
	e := newZKEnv(t)
	e.addBroker(t, 1)
	e.addTopic(t, "a", 2)
	c1 := newConnector(t, testConfig(e.connect, "g", "c1"))
	c2 := newConnector(t, testConfig(e.connect, "g", "c2"))
	startStatic(t, c1, map[string]int{"a": 1, "later": 1})
	startStatic(t, c2, map[string]int{"a": 1, "later": 1})
	members := []*Connector{c1, c2}
	testwait.For(t, 30*time.Second, func() error { return e.converged("g", map[string]int{"a": 2}, members, StrategyRange) })

	a, v, err := e.admin.GetTopicAssignment("a")
	if err != nil {
		t.Fatal(err)
	}
	for p := int32(2); p < 4; p++ {
		a.Partitions[p] = []int32{1}
	}
	if _, err := e.admin.SetTopicAssignment("a", a, v); err != nil {
		t.Fatal(err)
	}
	testwait.For(t, 30*time.Second, func() error { return e.converged("g", map[string]int{"a": 4}, members, StrategyRange) })
	e.addTopic(t, "later", 3)
	testwait.For(t, 30*time.Second, func() error {
		return e.converged("g", map[string]int{"a": 4, "later": 3}, members, StrategyRange)
	})
}

// TestZKConsumerSessionExpiry: c1 is cut off from ZooKeeper (through a
// proxy) until its session expires, which deletes its registration and
// owner znodes; c2 takes everything over. When c1 reconnects it gets a new
// session, registers again, and the group converges with it.
func TestZKConsumerSessionExpiry(t *testing.T) {
	e := newZKEnv(t)
	e.addBroker(t, 1)
	e.addTopic(t, "a", 4)
	proxy := e.srv.Proxy(t)
	c1 := newConnector(t, testConfig(strings.Replace(e.connect, e.srv.Addr, proxy.Addr, 1), "g", "c1"))
	c2 := newConnector(t, testConfig(e.connect, "g", "c2"))
	startStatic(t, c1, map[string]int{"a": 1})
	startStatic(t, c2, map[string]int{"a": 1})
	topics := map[string]int{"a": 4}
	testwait.For(t, 30*time.Second, func() error { return e.converged("g", topics, []*Connector{c1, c2}, StrategyRange) })
	before, _ := c1.Rebalances()
	oldSession := c1.zk.SessionID()

	proxy.Block()
	testwait.For(t, 30*time.Second, func() error {
		if ok, _, err := e.admin.Exists(zkutil.ConsumerIDPath("g", "g_c1")); err != nil || ok {
			return fmt.Errorf("c1 still registered (%v)", err)
		}
		return e.converged("g", topics, []*Connector{c2}, StrategyRange)
	})
	proxy.Unblock()
	testwait.For(t, 30*time.Second, func() error {
		if c1.zk.SessionID() == oldSession {
			return errors.New("c1 still on its old session")
		}
		if n, _ := c1.Rebalances(); n <= before {
			return errors.New("c1 has not rebalanced since the expiry")
		}
		return e.converged("g", topics, []*Connector{c1, c2}, StrategyRange)
	})
}

// TestZKConsumerRoundRobinMismatch: a member whose subscription differs
// makes the roundrobin rebalance fail with a clear error.
func TestZKConsumerRoundRobinMismatch(t *testing.T) {
	e := newZKEnv(t)
	e.addBroker(t, 1)
	e.addTopic(t, "a", 2)
	e.addTopic(t, "b", 2)
	cfg := testConfig(e.connect, "g", "c1")
	cfg.PartitionAssignmentStrategy = StrategyRoundRobin
	cfg.RebalanceMaxRetries = 2
	c1 := newConnector(t, cfg)
	startStatic(t, c1, map[string]int{"a": 1})
	cfg2 := cfg
	cfg2.ConsumerID = "c2"
	c2 := newConnector(t, cfg2)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	_, err := c2.CreateMessageStreams(ctx, map[string]int{"a": 1, "b": 1})
	if !errors.Is(err, ErrRebalanceFailed) || !errors.Is(err, ErrSubscriptionsDiffer) {
		t.Fatalf("err = %v, want ErrRebalanceFailed wrapping ErrSubscriptionsDiffer", err)
	}
	// The failed member left the group again; c1 goes back to owning all.
	testwait.For(t, 30*time.Second, func() error {
		return e.converged("g", map[string]int{"a": 2}, []*Connector{c1}, StrategyRoundRobin)
	})
}

// TestZKConsumerIgnoresMalformedMember: a member whose registration does
// not decode is left out of the assignment by everyone alike.
func TestZKConsumerIgnoresMalformedMember(t *testing.T) {
	e := newZKEnv(t)
	e.addBroker(t, 1)
	e.addTopic(t, "a", 2)
	if _, err := e.admin.CreateRecursive(zkutil.ConsumerIDPath("g", "g_broken"), []byte(`{"version":1,`), zkutil.Ephemeral); err != nil {
		t.Fatal(err)
	}
	c := newConnector(t, testConfig(e.connect, "g", "c1"))
	startStatic(t, c, map[string]int{"a": 1})
	testwait.For(t, 30*time.Second, func() error {
		if got := c.Owned().String(); got != "[a,0]->g_c1-0 [a,1]->g_c1-0" {
			return errors.New("owns " + got)
		}
		return nil
	})
}

// TestZKConsumerNoBrokers: with no broker registered the rebalance keeps
// nothing and watches /brokers/ids; the first broker to register triggers
// the real rebalance.
func TestZKConsumerNoBrokers(t *testing.T) {
	e := newZKEnv(t)
	e.addTopic(t, "a", 3)
	c := newConnector(t, testConfig(e.connect, "g", "c1"))
	startStatic(t, c, map[string]int{"a": 1})
	if n, err := c.Rebalances(); n != 1 || err != nil || len(c.Owned()) != 0 {
		t.Fatalf("rebalances %d (%v), owned %v; want 1, nil, nothing", n, err, c.Owned())
	}
	e.addBroker(t, 1)
	testwait.For(t, 30*time.Second, func() error { return e.converged("g", map[string]int{"a": 3}, []*Connector{c}, StrategyRange) })
}

// TestZKConsumerReRegistersDeletedID: when its ids znode disappears without
// a session expiry (deleted by hand), the consumer notices through its
// group watch and registers again.
func TestZKConsumerReRegistersDeletedID(t *testing.T) {
	e := newZKEnv(t)
	e.addBroker(t, 1)
	e.addTopic(t, "a", 2)
	c := newConnector(t, testConfig(e.connect, "g", "c1"))
	startStatic(t, c, map[string]int{"a": 1})
	topics := map[string]int{"a": 2}
	testwait.For(t, 30*time.Second, func() error { return e.converged("g", topics, []*Connector{c}, StrategyRange) })
	if err := e.admin.Delete(zkutil.ConsumerIDPath("g", "g_c1"), zkutil.AnyVersion); err != nil {
		t.Fatal(err)
	}
	testwait.For(t, 30*time.Second, func() error { return e.converged("g", topics, []*Connector{c}, StrategyRange) })
	if _, err := e.admin.GetConsumerRegistration("g", "g_c1"); err != nil {
		t.Fatal(err)
	}
}
