package brokertest

// Process harness: brokers as child processes of the test binary, so a
// test can send them real signals (SIGKILL, SIGTERM, SIGSTOP/SIGCONT).

import (
	"context"
	"errors"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"samsa/childproc"
	"samsa/zkutil"
	"samsa/zkutil/zktest"
)

// ProcCluster is a set of brokers running as child processes
// (`samsa kafka-server-start`) against the test binary's ZooKeeper in a
// fresh chroot. Every process is SIGKILLed at cleanup.
type ProcCluster struct {
	t       testing.TB
	bin     string
	connect string
	zk      *zkutil.Client
	procs   []*Proc
}

// Proc is one broker process. Its port, id and log dir stay the same
// across restarts.
type Proc struct {
	ID      int32
	Port    int
	Dir     string // log.dirs
	props   string // path of server.properties
	logPath string // stdout and stderr of every incarnation

	run *childproc.Proc
}

// NewProcCluster starts n broker processes (ids 1..n unless WithFirstID)
// with brokertest's defaults plus the WithProperty options, and waits
// until all are registered and a controller is elected. Each broker logs
// at INFO to a file; the files are copied to the test log when the test
// fails.
func NewProcCluster(t testing.TB, n int, opts ...Option) *ProcCluster {
	t.Helper()
	o := options{props: map[string]string{}, firstID: 1}
	for _, opt := range opts {
		opt(&o)
	}
	bin := SamsaBinary(t)
	srv := zktest.Start(t)
	c := &ProcCluster{t: t, bin: bin, connect: srv.Chroot(t)}
	zc, err := zkutil.Connect(context.Background(), zkutil.Config{Connect: c.connect, SessionTimeout: 10 * time.Second})
	if err != nil {
		t.Fatalf("brokertest: zookeeper: %v", err)
	}
	c.zk = zc
	root := t.TempDir()
	t.Cleanup(c.close)
	for i := 0; i < n; i++ {
		port, err := freeTCPPort()
		if err != nil {
			t.Fatalf("brokertest: free port: %v", err)
		}
		id := o.firstID + int32(i)
		dir := filepath.Join(root, fmt.Sprintf("broker-%d", id))
		props := testBrokerProps(id, fmt.Sprintf("PLAINTEXT://127.0.0.1:%d", port), filepath.Join(dir, "data"),
			c.connect, "6000", o.props, "log.level", "info")
		if err := os.MkdirAll(dir, 0o755); err != nil {
			t.Fatal(err)
		}
		p := &Proc{ID: id, Port: port, Dir: props["log.dirs"], props: filepath.Join(dir, "server.properties"),
			logPath: filepath.Join(dir, "broker.log")}
		p.run = &childproc.Proc{Name: fmt.Sprintf("broker %d", id), LogPath: p.logPath, Banner: "brokertest",
			NewCmd: func() *exec.Cmd { return exec.Command(c.bin, "kafka-server-start", p.props) }}
		if err := os.WriteFile(p.props, []byte(renderProperties(props)), 0o644); err != nil {
			t.Fatal(err)
		}
		c.procs = append(c.procs, p)
	}
	for i := range c.procs {
		c.spawn(i)
	}
	for i := range c.procs {
		c.waitRegistered(i)
	}
	WaitFor(t, 60*time.Second, func() error {
		_, err := c.zk.GetController()
		return err
	})
	for i := range c.procs {
		c.waitServing(i, n)
	}
	return c
}

func renderProperties(props map[string]string) string {
	keys := make([]string, 0, len(props))
	for k := range props {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	var b strings.Builder
	for _, k := range keys {
		fmt.Fprintf(&b, "%s=%s\n", k, props[k])
	}
	return b.String()
}

// freeTCPPort asks the kernel for a free port on 127.0.0.1. The port is
// reused on restart, so a later collision is possible but unlikely.
func freeTCPPort() (int, error) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return 0, err
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port, nil
}

// spawn starts process i; it does not wait for it to be ready.
func (c *ProcCluster) spawn(i int) {
	c.t.Helper()
	// The broker dies with the test binary even if cleanup never runs
	// (childproc sets Pdeathsig).
	if err := c.procs[i].run.Start(); err != nil {
		c.t.Fatalf("brokertest: %v", err)
	}
}

// waitRegistered waits until broker i's /brokers/ids znode exists and its
// port accepts connections.
func (c *ProcCluster) waitRegistered(i int) {
	c.t.Helper()
	p := c.procs[i]
	WaitFor(c.t, 60*time.Second, func() error {
		if !c.Running(i) {
			return fmt.Errorf("broker %d exited: %s", p.ID, c.logTail(i, 2000))
		}
		if _, err := c.zk.GetBroker(p.ID); err != nil {
			return fmt.Errorf("broker %d not registered: %v", p.ID, err)
		}
		conn, err := net.DialTimeout("tcp", c.Addr(i), time.Second)
		if err != nil {
			return err
		}
		conn.Close()
		return nil
	})
}

// waitUnregistered waits until broker i's registration is gone (its
// session closed or expired).
func (c *ProcCluster) waitUnregistered(i int, timeout time.Duration) {
	c.t.Helper()
	id := c.procs[i].ID
	WaitFor(c.t, timeout, func() error {
		if _, err := c.zk.GetBroker(id); !errors.Is(err, zkutil.ErrNoNode) {
			return fmt.Errorf("broker %d still registered (%v)", id, err)
		}
		return nil
	})
}

// N returns the number of brokers.
func (c *ProcCluster) N() int { return len(c.procs) }

// Proc returns broker i's process record.
func (c *ProcCluster) Proc(i int) *Proc { return c.procs[i] }

// ID returns broker i's id.
func (c *ProcCluster) ID(i int) int32 { return c.procs[i].ID }

// Index returns the index of the broker with id, or -1.
func (c *ProcCluster) Index(id int32) int {
	for i, p := range c.procs {
		if p.ID == id {
			return i
		}
	}
	return -1
}

// Addr returns broker i's "127.0.0.1:port" (whether running or not).
func (c *ProcCluster) Addr(i int) string {
	return net.JoinHostPort("127.0.0.1", strconv.Itoa(c.procs[i].Port))
}

// Addrs returns the addresses of the running brokers.
func (c *ProcCluster) Addrs() []string {
	var out []string
	for i := range c.procs {
		if c.Running(i) {
			out = append(out, c.Addr(i))
		}
	}
	return out
}

// ZK returns the harness's own ZooKeeper client on the cluster's chroot.
func (c *ProcCluster) ZK() *zkutil.Client { return c.zk }

// ZKConnect returns zookeeper.connect of the cluster (with its chroot).
func (c *ProcCluster) ZKConnect() string { return c.connect }

// Running reports whether broker i's process has not exited.
func (c *ProcCluster) Running(i int) bool { return c.procs[i].run.Running() }

func (c *ProcCluster) signal(i int, sig syscall.Signal) {
	c.t.Helper()
	p := c.procs[i]
	if !c.Running(i) {
		c.t.Fatalf("brokertest: broker %d is not running", p.ID)
	}
	if err := p.run.Signal(sig); err != nil {
		c.t.Fatalf("brokertest: %v to broker %d: %v", sig, p.ID, err)
	}
}

// wait waits up to timeout for broker i's process to exit and returns
// its exit error.
func (c *ProcCluster) wait(i int, timeout time.Duration) error {
	c.t.Helper()
	p := c.procs[i]
	if err := p.run.Wait(timeout); err != nil {
		c.t.Fatalf("brokertest: broker %d did not exit within %v", p.ID, timeout)
	}
	return p.run.ExitErr()
}

// Kill sends SIGKILL to broker i and waits for the process to exit. Its
// registration stays until its ZooKeeper session times out.
func (c *ProcCluster) Kill(i int) {
	c.t.Helper()
	c.signal(i, syscall.SIGCONT) // a paused process dies too, but be explicit
	c.signal(i, syscall.SIGKILL)
	_ = c.wait(i, 30*time.Second)
}

// Stop sends SIGTERM to broker i (ordered shutdown: controlled shutdown
// when enabled) and waits for it to exit; it fails the test if the exit
// is not clean.
func (c *ProcCluster) Stop(i int) {
	c.t.Helper()
	c.signal(i, syscall.SIGTERM)
	if err := c.wait(i, 60*time.Second); err != nil {
		c.t.Fatalf("brokertest: broker %d stopped with %v:\n%s", c.procs[i].ID, err, c.logTail(i, 4000))
	}
}

// Pause sends SIGSTOP to broker i and waits (up to 10 s) until the
// kernel reports the process stopped: the signal is delivered
// asynchronously, and whatever the test does next must find it frozen.
func (c *ProcCluster) Pause(i int) {
	c.t.Helper()
	c.signal(i, syscall.SIGSTOP)
	p := c.procs[i]
	pid := p.run.Pid()
	WaitFor(c.t, 10*time.Second, func() error {
		state, err := childproc.State(pid)
		if err != nil {
			return err
		}
		if state != "T" {
			return fmt.Errorf("broker %d (pid %d) in state %q, not stopped yet", p.ID, pid, state)
		}
		return nil
	})
}

// Resume sends SIGCONT to broker i.
func (c *ProcCluster) Resume(i int) { c.t.Helper(); c.signal(i, syscall.SIGCONT) }

// Start starts a stopped or killed broker i again on the same dirs and
// port: it first waits for its old registration to disappear (as Kafka's
// hard_bounce), then for the new one.
func (c *ProcCluster) Start(i int) {
	c.t.Helper()
	if c.Running(i) {
		c.t.Fatalf("brokertest: broker %d is running", c.procs[i].ID)
	}
	c.waitUnregistered(i, 60*time.Second)
	c.spawn(i)
	c.waitRegistered(i)
	c.waitServing(i, 1)
}

// Restart kills broker i (if running) and starts it again.
func (c *ProcCluster) Restart(i int) {
	c.t.Helper()
	if c.Running(i) {
		c.Kill(i)
	}
	c.Start(i)
}

// Log returns everything broker i's processes wrote so far.
func (c *ProcCluster) Log(i int) string {
	b, err := os.ReadFile(c.procs[i].logPath)
	if err != nil {
		return ""
	}
	return string(b)
}

func (c *ProcCluster) logTail(i, n int) string {
	s := c.Log(i)
	if len(s) > n {
		s = "..." + s[len(s)-n:]
	}
	return s
}

// close kills every process (resuming paused ones), and copies the
// brokers' logs to the test log if the test failed.
func (c *ProcCluster) close() {
	for i, p := range c.procs {
		pid := p.run.Pid()
		if pid == 0 {
			continue
		}
		if err := p.run.Kill(30 * time.Second); err != nil {
			c.t.Errorf("brokertest: broker %d (pid %d) did not die", p.ID, pid)
		}
		if c.t.Failed() {
			c.t.Logf("brokertest: log of broker %d:\n%s", p.ID, c.logTail(i, 200_000))
		}
	}
	c.zk.Close()
}
