package zkconsumer

import (
	"context"
	"fmt"
	"os"
	"sort"
	"testing"
	"time"

	"github.com/sirupsen/logrus"

	"samsa/kafka"
	"samsa/zkutil"
	"samsa/zkutil/zktest"
)

func timeMs(ms int64) time.Time { return time.UnixMilli(ms) }

func testLogger() logrus.FieldLogger {
	l := logrus.New()
	l.SetLevel(logrus.WarnLevel)
	if os.Getenv("SAMSA_TEST_LOG") == "debug" {
		l.SetLevel(logrus.DebugLevel)
	}
	return l
}

// zkEnv is a fresh chroot with an admin client that plays the brokers'
// part: a registered broker (unreachable, port 1) and topics.
type zkEnv struct {
	srv     *zktest.Server
	connect string
	admin   *zkutil.Client
}

func newZKEnv(t *testing.T) *zkEnv {
	t.Helper()
	srv := zktest.Start(t)
	connect := srv.Chroot(t)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	admin, err := zkutil.Connect(ctx, zkutil.Config{Connect: connect, SessionTimeout: 6 * time.Second, Logger: testLogger()})
	if err != nil {
		t.Fatalf("connect: %v", err)
	}
	t.Cleanup(admin.Close)
	if err := admin.CreatePersistentPaths(); err != nil {
		t.Fatal(err)
	}
	return &zkEnv{srv: srv, connect: connect, admin: admin}
}

// addBroker registers broker id with an endpoint nobody listens on.
func (e *zkEnv) addBroker(t *testing.T, id int32) {
	t.Helper()
	_, err := e.admin.RegisterBroker(zkutil.BrokerRegistration{
		ID:        id,
		Endpoints: []zkutil.Endpoint{{ListenerName: "PLAINTEXT", SecurityProtocol: "PLAINTEXT", Host: "127.0.0.1", Port: 1}},
		JMXPort:   -1,
		Timestamp: time.Now().UnixMilli(),
	})
	if err != nil {
		t.Fatal(err)
	}
}

func (e *zkEnv) addTopic(t *testing.T, topic string, partitions int) {
	t.Helper()
	a := make(map[int32][]int32, partitions)
	for p := 0; p < partitions; p++ {
		a[int32(p)] = []int32{1}
	}
	if err := e.admin.CreateTopic(topic, a, nil); err != nil {
		t.Fatal(err)
	}
}

// testConfig is a fast-rebalancing configuration for tests.
func testConfig(connect, group, id string) Config {
	cfg := DefaultConfig()
	cfg.GroupID = group
	cfg.ConsumerID = id
	cfg.ZooKeeperConnect = connect
	cfg.RebalanceBackoff = 100 * time.Millisecond
	cfg.RebalanceMaxRetries = 30
	// Tests that hold their last message at Close would otherwise wait the
	// default 3 s; a second is still far above any test's processing time.
	cfg.RebalanceProcessingWait = time.Second
	cfg.RefreshLeaderBackoff = 100 * time.Millisecond
	cfg.Host = "testhost"
	cfg.Logger = testLogger()
	return cfg
}

func newConnector(t *testing.T, cfg Config) *Connector {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	c, err := NewConnector(ctx, cfg)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = c.Close() })
	return c
}

func startStatic(t *testing.T, c *Connector, topics map[string]int) map[string][]*Stream {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	streams, err := c.CreateMessageStreams(ctx, topics)
	if err != nil {
		t.Fatal(err)
	}
	return streams
}

// zkOwners reads /consumers/<g>/owners/<t>/<p> for partitions 0..n-1;
// missing owners are absent.
func (e *zkEnv) zkOwners(group, topic string, n int) (map[kafka.TopicPartition]string, error) {
	out := map[kafka.TopicPartition]string{}
	for p := 0; p < n; p++ {
		o, err := e.admin.GetPartitionOwner(group, topic, int32(p))
		if err == nil {
			out[kafka.TopicPartition{Topic: topic, Partition: int32(p)}] = o
		}
	}
	return out, nil
}

// converged checks that the live connectors' own views and ZooKeeper agree
// with the assignment computed for exactly these members: every partition
// owned once, by the right thread, as each member believes.
func (e *zkEnv) converged(group string, topics map[string]int, members []*Connector, strategy string) error {
	g := GroupState{Members: map[string]map[string]int{}, Partitions: map[string][]int32{}}
	ids := make([]string, 0, len(members))
	for _, c := range members {
		c.mu.Lock()
		g.Members[c.id] = c.mu.sub.static
		c.mu.Unlock()
		ids = append(ids, c.id)
	}
	sort.Strings(ids)
	zkIDs, err := e.admin.GetConsumerIDs(group)
	if err != nil {
		return err
	}
	if fmt.Sprint(zkIDs) != fmt.Sprint(ids) {
		return fmt.Errorf("registered ids %v, want %v", zkIDs, ids)
	}
	for t, n := range topics {
		g.Partitions[t] = parts(n)
	}
	assign, _ := AssignorFor(strategy)
	want, err := assign(g)
	if err != nil {
		return err
	}
	got := Assignment{}
	for t, n := range topics {
		owners, _ := e.zkOwners(group, t, n)
		if len(owners) != n {
			return fmt.Errorf("topic %s: %d of %d partitions owned in zookeeper", t, len(owners), n)
		}
		for tp, o := range owners {
			if o != want[tp].String() {
				return fmt.Errorf("%s owned by %q in zookeeper, want %q", tp, o, want[tp])
			}
			got[tp] = want[tp]
		}
	}
	for _, c := range members {
		if own, mine := c.Owned().String(), want.Of(c.id).String(); own != mine {
			return fmt.Errorf("%s believes it owns %s, want %s", c.id, own, mine)
		}
	}
	return nil
}
