package brokertest

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strconv"
	"sync"
	"testing"
	"time"

	"github.com/sirupsen/logrus"
	"github.com/twmb/franz-go/pkg/kmsg"

	"samsa/broker"
	"samsa/config"
	"samsa/zkutil"
	"samsa/zkutil/zktest"
)

// Main runs the tests of a package that uses brokertest and stops the
// shared ZooKeeper afterwards. Call it from TestMain.
func Main(m *testing.M) { zktest.Main(m) }

// Option configures NewCluster.
type Option func(*options)

type options struct {
	props    map[string]string
	logLevel logrus.Level
	firstID  int32
	hooks    []logrus.Hook
	setup    func(zk *zkutil.Client)
	zkAuth   []zkutil.Credential
	sweep    time.Duration // broker.Options.FetchSessionSweepEvery
}

// WithProperty sets a server.properties key on every broker.
func WithProperty(key, value string) Option {
	return func(o *options) { o.props[key] = value }
}

// WithFetchSessionSweep sets every broker's fetch session sweep interval
// (broker.Options.FetchSessionSweepEvery; negative: never), so that a
// test can see a missing change notice as a stall instead of a 5 s delay.
func WithFetchSessionSweep(d time.Duration) Option { return func(o *options) { o.sweep = d } }

// WithInternalTopicPartitions gives __transaction_state and
// __consumer_offsets n partitions each (Kafka's 50 make a test's
// coordinator start slow).
func WithInternalTopicPartitions(n int) Option {
	return func(o *options) {
		o.props["transaction.state.log.num.partitions"] = strconv.Itoa(n)
		o.props["offsets.topic.num.partitions"] = strconv.Itoa(n)
	}
}

// WithLogLevel sets the brokers' log level (default: warning, or
// SAMSA_TEST_LOG=debug|info from the environment).
func WithLogLevel(l logrus.Level) Option { return func(o *options) { o.logLevel = l } }

// WithLogHook adds h to the brokers' logger, so a test can assert on log
// entries (every level, whatever WithLogLevel lets through to the output).
func WithLogHook(h logrus.Hook) Option { return func(o *options) { o.hooks = append(o.hooks, h) } }

// WithFirstID sets the id of broker 0 (default 1; brokers get consecutive
// ids). Several clients treat node id 0 as suspect, so the default is 1.
func WithFirstID(id int32) Option { return func(o *options) { o.firstID = id } }

// WithZooKeeperSetup runs fn on a ZooKeeper client of the cluster's chroot
// before any broker starts: state the brokers must find at startup, such as
// the ACLs that let them talk to each other under authorizer.class.name.
func WithZooKeeperSetup(fn func(zk *zkutil.Client)) Option {
	return func(o *options) { o.setup = fn }
}

// WithZooKeeperAuth gives every broker a ZooKeeper identity (broker
// Options.ZooKeeperAuth), for zookeeper.set.acl.
func WithZooKeeperAuth(creds ...zkutil.Credential) Option {
	return func(o *options) { o.zkAuth = creds }
}

// testBrokerProps is the server.properties of a test broker, in process
// or child process: broker id, listener, log dir, ZooKeeper chroot and
// session timeout, small internal topics and quick replica fetches, then
// extra (key, value pairs), then the test's own props, which win.
func testBrokerProps(id int32, listener, logDir, connect, sessionTimeoutMs string, props map[string]string, extra ...string) map[string]string {
	out := map[string]string{
		"broker.id":                        strconv.Itoa(int(id)),
		"listeners":                        listener,
		"log.dirs":                         logDir,
		"zookeeper.connect":                connect,
		"zookeeper.session.timeout.ms":     sessionTimeoutMs,
		"num.partitions":                   "1",
		"default.replication.factor":       "1",
		"auto.create.topics.enable":        "false",
		"offsets.topic.replication.factor": "1",
		// __transaction_state as small as the tests' clusters allow.
		"transaction.state.log.replication.factor": "1",
		"transaction.state.log.min.isr":            "1",
		"replica.fetch.wait.max.ms":                "100",
		"replica.fetch.backoff.ms":                 "50",
		"group.initial.rebalance.delay.ms":         "0",
	}
	for i := 0; i+1 < len(extra); i += 2 {
		out[extra[i]] = extra[i+1]
	}
	for k, v := range props {
		out[k] = v
	}
	return out
}

// Cluster is a set of in-process brokers sharing one ZooKeeper chroot.
type Cluster struct {
	t       testing.TB
	connect string // zookeeper.connect with the chroot
	zk      *zktest.Server
	opts    options
	logger  *logrus.Logger

	mu      sync.Mutex
	brokers []*broker.Broker // nil while killed
	// intercepts[i][key] is the fault hook for API key on broker i; it
	// survives restarts.
	intercepts []map[int16]InterceptFunc
	net        *netFaults
	cfgs       []*config.Broker
	panics     int64 // accumulated from brokers already stopped
}

// NewCluster starts n brokers and waits until every one of them knows all
// n live brokers and the controller.
func NewCluster(t testing.TB, n int, opts ...Option) *Cluster {
	t.Helper()
	before := samsaGoroutines()
	o := options{props: map[string]string{}, logLevel: logrus.WarnLevel, firstID: 1}
	switch os.Getenv("SAMSA_TEST_LOG") {
	case "debug":
		o.logLevel = logrus.DebugLevel
	case "info":
		o.logLevel = logrus.InfoLevel
	}
	for _, opt := range opts {
		opt(&o)
	}
	srv := zktest.Start(t)
	logger := logrus.New()
	logger.SetLevel(o.logLevel)
	logger.SetOutput(testWriter{t})
	if len(o.hooks) > 0 {
		// Hooks see entries up to info; the output keeps o.logLevel.
		logger.SetLevel(max(o.logLevel, logrus.InfoLevel))
		logger.SetOutput(levelFilter{w: testWriter{t}, level: o.logLevel})
		for _, h := range o.hooks {
			logger.AddHook(h)
		}
	}
	c := &Cluster{t: t, connect: srv.Chroot(t), zk: srv, opts: o, logger: logger}
	c.net = newNetFaults(c)
	root := t.TempDir()
	for i := 0; i < n; i++ {
		props := testBrokerProps(o.firstID+int32(i), "PLAINTEXT://127.0.0.1:0", filepath.Join(root, fmt.Sprintf("broker-%d", i)),
			c.connect, "10000", o.props, "controlled.shutdown.enable", "false")
		cfg, _, err := config.NewBroker(props)
		if err != nil {
			t.Fatalf("brokertest: config of broker %d: %v", i, err)
		}
		c.cfgs = append(c.cfgs, cfg)
		c.brokers = append(c.brokers, nil)
		c.intercepts = append(c.intercepts, map[int16]InterceptFunc{})
	}
	t.Cleanup(func() { c.close(before) })
	if o.setup != nil {
		o.setup(c.ZooKeeper(t))
	}
	for i := 0; i < n; i++ {
		c.start(i)
	}
	WaitFor(t, 60*time.Second, func() error {
		for i := 0; i < n; i++ {
			snap := c.Broker(i).Metadata()
			if len(snap.BrokerIDs) != n {
				return fmt.Errorf("broker %d sees %d live brokers, want %d", i, len(snap.BrokerIDs), n)
			}
			if snap.ControllerID < 0 {
				return fmt.Errorf("broker %d knows no controller", i)
			}
		}
		return nil
	})
	return c
}

type testWriter struct{ t testing.TB }

func (w testWriter) Write(p []byte) (int, error) {
	w.t.Logf("%s", p)
	return len(p), nil
}

func (c *Cluster) start(i int) {
	c.t.Helper()
	b, err := broker.New(c.cfgs[i], broker.Options{Logger: c.logger.WithField("test", c.t.Name()),
		Intercept: func(key int16, req kmsg.Request) (kmsg.Response, error, bool) {
			c.mu.Lock()
			fn := c.intercepts[i][key]
			c.mu.Unlock()
			if fn == nil {
				return nil, nil, false
			}
			return fn(req)
		},
		Dial: c.net.dialer(i), ZooKeeperAuth: c.opts.zkAuth, FetchSessionSweepEvery: c.opts.sweep})
	if err != nil {
		c.t.Fatalf("brokertest: broker %d: %v", i, err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	if err := b.Start(ctx); err != nil {
		c.t.Fatalf("brokertest: start broker %d: %v", i, err)
	}
	c.mu.Lock()
	c.brokers[i] = b
	c.mu.Unlock()
}

// InterceptFunc is a fault hook for one API on one broker: handled=true
// answers with resp (nil: no answer) or, with a non-nil err, closes the
// client's connection; handled=false lets the request through.
type InterceptFunc func(req kmsg.Request) (resp kmsg.Response, err error, handled bool)

// Intercept installs fn for apiKey on broker i (nil removes it). It
// applies to requests read after the call and survives Restart.
func (c *Cluster) Intercept(i int, apiKey int16, fn InterceptFunc) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if fn == nil {
		delete(c.intercepts[i], apiKey)
		return
	}
	c.intercepts[i][apiKey] = fn
}

// N returns the number of brokers (running or killed).
func (c *Cluster) N() int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return len(c.brokers)
}

// Broker returns broker i (0-based), nil while it is killed.
func (c *Cluster) Broker(i int) *broker.Broker {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.brokers[i]
}

// ZKConnect returns zookeeper.connect of the cluster (with its chroot).
func (c *Cluster) ZKConnect() string { return c.connect }

// Index returns the index of the broker with id, or -1.
func (c *Cluster) Index(id int32) int {
	c.mu.Lock()
	defer c.mu.Unlock()
	for i, cfg := range c.cfgs {
		if cfg.BrokerID == id {
			return i
		}
	}
	return -1
}

// Addrs returns "host:port" of the PLAINTEXT listener of every running
// broker.
func (c *Cluster) Addrs() []string {
	c.mu.Lock()
	defer c.mu.Unlock()
	var out []string
	for _, b := range c.brokers {
		if b == nil {
			continue
		}
		if a := b.Addr("PLAINTEXT"); a != nil {
			out = append(out, a.String())
		}
	}
	return out
}

// Addr returns the PLAINTEXT address of broker i.
func (c *Cluster) Addr(i int) string {
	b := c.Broker(i)
	if b == nil {
		c.t.Fatalf("brokertest: broker %d is not running", i)
	}
	return b.Addr("PLAINTEXT").String()
}

// Kill stops broker i at once: in-flight requests are cut, its ZooKeeper
// session closes (so its registration and, if it was controller,
// /controller disappear). Its data dir is kept for Restart.
func (c *Cluster) Kill(i int) {
	c.t.Helper()
	c.mu.Lock()
	b := c.brokers[i]
	c.brokers[i] = nil
	c.mu.Unlock()
	if b == nil {
		return
	}
	ctx, cancel := context.WithCancel(context.Background())
	cancel() // no grace period
	_ = b.Shutdown(ctx)
	c.mu.Lock()
	c.panics += b.Panics()
	c.mu.Unlock()
}

// Restart starts broker i again on the same data dir (after Kill, or
// kills it first).
func (c *Cluster) Restart(i int) {
	c.t.Helper()
	c.Kill(i)
	c.start(i)
}

// ExpireZKSession expires broker i's ZooKeeper session; the broker gets a
// new session, re-registers and its controller module re-elects.
func (c *Cluster) ExpireZKSession(i int) {
	c.t.Helper()
	b := c.Broker(i)
	if b == nil {
		c.t.Fatalf("brokertest: broker %d is not running", i)
	}
	c.zk.ExpireSession(c.t, b.ZooKeeper())
}

// Controller returns the index of the broker that is the active controller,
// waiting until there is one.
func (c *Cluster) Controller() int {
	c.t.Helper()
	idx := -1
	WaitFor(c.t, 60*time.Second, func() error {
		for i := 0; i < c.N(); i++ {
			if b := c.Broker(i); b != nil && b.IsController() {
				idx = i
				return nil
			}
		}
		return fmt.Errorf("no active controller")
	})
	return idx
}

// ZooKeeper opens a separate ZooKeeper client on the cluster's chroot
// (closed at cleanup), for tests that inspect znodes.
func (c *Cluster) ZooKeeper(t testing.TB) *zkutil.Client {
	t.Helper()
	zc, err := zkutil.Connect(context.Background(), zkutil.Config{Connect: c.connect, SessionTimeout: 10 * time.Second})
	if err != nil {
		t.Fatalf("brokertest: zookeeper: %v", err)
	}
	t.Cleanup(zc.Close)
	return zc
}

// close stops every broker, then checks for panics and leaked goroutines.
func (c *Cluster) close(before map[string]string) {
	c.mu.Lock()
	bs := append([]*broker.Broker(nil), c.brokers...)
	for i := range c.brokers {
		c.brokers[i] = nil
	}
	c.mu.Unlock()
	var wg sync.WaitGroup
	for _, b := range bs {
		if b == nil {
			continue
		}
		wg.Add(1)
		go func(b *broker.Broker) {
			defer wg.Done()
			ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
			defer cancel()
			if err := b.Shutdown(ctx); err != nil {
				c.t.Errorf("brokertest: shutdown %v: %v", b, err)
			}
			c.mu.Lock()
			c.panics += b.Panics()
			c.mu.Unlock()
		}(b)
	}
	wg.Wait()
	if c.panics > 0 {
		c.t.Errorf("brokertest: %d request handler panics", c.panics)
	}
	checkGoroutines(c.t, before)
}

// levelFilter writes only the formatted entries at or above level (the
// text and JSON formatters both write "level=<name>" or "\"level\":\"<name>\"").
type levelFilter struct {
	w     io.Writer
	level logrus.Level
}

func (f levelFilter) Write(p []byte) (int, error) {
	for _, l := range logrus.AllLevels {
		if l > f.level && (bytes.Contains(p, []byte("level="+l.String()+" ")) || bytes.Contains(p, []byte(`"level":"`+l.String()+`"`))) {
			return len(p), nil
		}
	}
	return f.w.Write(p)
}
