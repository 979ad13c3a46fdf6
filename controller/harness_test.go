package controller

import (
	"context"
	"fmt"
	"net"
	"strconv"
	"sync"
	"testing"
	"time"

	"github.com/rcrowley/go-metrics"
	"github.com/sirupsen/logrus"
	"github.com/sirupsen/logrus/hooks/test"
	"github.com/twmb/franz-go/pkg/kmsg"

	"samsa/internal/testwait"
	"samsa/zkutil"
	"samsa/zkutil/zktest"
)

func TestMain(m *testing.M) { zktest.Main(m) }

const waitTimeout = 30 * time.Second

// cluster is a chroot on the shared ZooKeeper plus helpers.
type cluster struct {
	t       *testing.T
	connect string
	rec     *recorder
}

func newCluster(t *testing.T) *cluster {
	t.Helper()
	srv := zktest.Start(t)
	cl := &cluster{t: t, connect: srv.Chroot(t), rec: &recorder{}}
	admin := cl.zk()
	if err := admin.CreatePersistentPaths(); err != nil {
		t.Fatal(err)
	}
	return cl
}

// zk opens a new ZooKeeper session on the cluster's chroot, closed at cleanup.
func (cl *cluster) zk() *zkutil.Client {
	cl.t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), waitTimeout)
	defer cancel()
	c, err := zkutil.Connect(ctx, zkutil.Config{Connect: cl.connect, SessionTimeout: 6 * time.Second, ConnectionTimeout: waitTimeout})
	if err != nil {
		cl.t.Fatal(err)
	}
	cl.t.Cleanup(c.Close)
	return c
}

// brokerPort is the fake port of broker id's PLAINTEXT listener; the recording dialer maps
// it back to the id.
func brokerPort(id int32) int32 { return 19000 + id }

// registerBroker registers broker id (with rack, "" for none) on session c.
func (cl *cluster) registerBroker(c *zkutil.Client, id int32, rack string) {
	cl.t.Helper()
	reg := zkutil.BrokerRegistration{ID: id, Version: 4, Rack: rack, JMXPort: -1, Timestamp: time.Now().UnixMilli(),
		Endpoints: []zkutil.Endpoint{{ListenerName: "PLAINTEXT", SecurityProtocol: "PLAINTEXT", Host: "127.0.0.1", Port: brokerPort(id)}}}
	if _, err := c.RegisterBroker(reg); err != nil {
		cl.t.Fatal(err)
	}
}

// node is one broker's controller with its own ZooKeeper session.
type node struct {
	id   int32
	zk   *zkutil.Client
	c    *Controller
	logs *test.Hook
	reg  metrics.Registry
}

// startNode registers broker id on a new session and starts its controller.
func (cl *cluster) startNode(id int32, mod func(*Config)) *node {
	cl.t.Helper()
	zc := cl.zk()
	cl.registerBroker(zc, id, "")
	logger, hook := test.NewNullLogger()
	logger.SetLevel(logrus.DebugLevel)
	n := &node{id: id, zk: zc, logs: hook, reg: metrics.NewRegistry()}
	cfg := Config{BrokerID: id, ZK: zc, Dialer: &recDialer{rec: cl.rec}, Logger: logger, Metrics: n.reg,
		RetryBackoff: 10 * time.Millisecond, RequestTimeout: 5 * time.Second}
	if mod != nil {
		mod(&cfg)
	}
	c, err := New(cfg)
	if err != nil {
		cl.t.Fatal(err)
	}
	n.c = c
	if err := c.Start(context.Background()); err != nil {
		cl.t.Fatal(err)
	}
	cl.t.Cleanup(c.Shutdown)
	return n
}

// waitActive waits until exactly one of nodes is active and returns it.
func waitActive(t *testing.T, nodes ...*node) *node {
	t.Helper()
	var active *node
	testwait.For(t, waitTimeout, func() error {
		active = nil
		for _, n := range nodes {
			if n.c.IsActive() {
				if active != nil {
					return fmt.Errorf("brokers %d and %d are both active", active.id, n.id)
				}
				active = n
			}
		}
		if active == nil {
			return fmt.Errorf("no active controller")
		}
		return nil
	})
	return active
}

// newActiveCluster starts broker 1's controller on a new cluster, its Config changed by mod
// (nil for none), and waits until it is active.
func newActiveCluster(t *testing.T, mod func(*Config)) (*cluster, *node) {
	t.Helper()
	cl := newCluster(t)
	n1 := cl.startNode(1, mod)
	waitActive(t, n1)
	return cl, n1
}

// createTopic writes topic's replica assignment (partition -> replicas, no config) through zc.
func createTopic(t *testing.T, zc *zkutil.Client, topic string, assignment map[int32][]int32) {
	t.Helper()
	if err := zc.CreateTopic(topic, assignment, nil); err != nil {
		t.Fatal(err)
	}
}

// waitBrokerKnown waits until the controller has sent broker id an UpdateMetadata, that is,
// it has taken in the broker's registration.
func waitBrokerKnown(t *testing.T, cl *cluster, id int32) {
	t.Helper()
	testwait.For(t, waitTimeout, func() error {
		if len(cl.rec.requests(id, 6)) == 0 {
			return fmt.Errorf("broker %d unknown to the controller", id)
		}
		return nil
	})
}

// waitNoneLeft waits until list returns no entries (what names them in the failure).
func waitNoneLeft(t *testing.T, what string, list func() ([]string, error)) {
	t.Helper()
	testwait.For(t, waitTimeout, func() error {
		left, err := list()
		if err != nil {
			return err
		}
		if len(left) != 0 {
			return fmt.Errorf("%s left: %v", what, left)
		}
		return nil
	})
}

// partitionState reads a partition's state znode.
func partitionState(t *testing.T, c *zkutil.Client, topic string, p int32) (zkutil.PartitionState, error) {
	t.Helper()
	st, _, err := c.GetPartitionState(topic, p)
	return st, err
}

// recorder keeps every control request delivered through recDialer, decoded from its wire
// bytes at the version the sender chose.
type recorder struct {
	mu   sync.Mutex
	reqs []recorded
	// respond, when set, answers instead of the default empty response (nil: default).
	respond func(broker int32, req kmsg.Request) kmsg.Response
}

type recorded struct {
	broker int32
	req    kmsg.Request
}

// requests returns the recorded requests of key sent to broker.
func (r *recorder) requests(broker int32, key int16) []kmsg.Request {
	r.mu.Lock()
	defer r.mu.Unlock()
	var out []kmsg.Request
	for _, x := range r.reqs {
		if x.broker == broker && x.req.Key() == key {
			out = append(out, x.req)
		}
	}
	return out
}

// firstIndex returns the position among all recorded requests of the first one to broker
// with key for which match returns true, or -1.
func (r *recorder) firstIndex(broker int32, key int16, match func(kmsg.Request) bool) int {
	r.mu.Lock()
	defer r.mu.Unlock()
	for i, x := range r.reqs {
		if x.broker == broker && x.req.Key() == key && match(x.req) {
			return i
		}
	}
	return -1
}

// recDialer is a network test double: it "connects" to a broker id derived from the port and
// answers every request with an empty (error-free) response after an encode/decode round trip.
type recDialer struct{ rec *recorder }

func (d *recDialer) Dial(_ context.Context, addr string) (RequestClient, error) {
	_, port, err := net.SplitHostPort(addr)
	if err != nil {
		return nil, err
	}
	p, err := strconv.Atoi(port)
	if err != nil {
		return nil, err
	}
	return &recClient{broker: int32(p) - brokerPort(0), rec: d.rec}, nil
}

type recClient struct {
	broker int32
	rec    *recorder
}

func (c *recClient) Request(_ context.Context, req kmsg.Request) (kmsg.Response, error) {
	wire := req.AppendTo(nil)
	decoded := kmsg.RequestForKey(req.Key())
	decoded.SetVersion(req.GetVersion())
	if err := decoded.ReadFrom(wire); err != nil {
		return nil, fmt.Errorf("decode %T v%d: %w", req, req.GetVersion(), err)
	}
	c.rec.mu.Lock()
	c.rec.reqs = append(c.rec.reqs, recorded{broker: c.broker, req: decoded})
	respond := c.rec.respond
	c.rec.mu.Unlock()
	if respond != nil {
		if resp := respond(c.broker, decoded); resp != nil {
			return resp, nil
		}
	}
	return req.ResponseKind(), nil
}

func (c *recClient) Close() error { return nil }
