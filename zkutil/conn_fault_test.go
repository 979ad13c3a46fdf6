package zkutil_test

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/sirupsen/logrus"

	"samsa/internal/testwait"
	"samsa/zkutil"
	"samsa/zkutil/zktest"
)

// TestZKConnectionLossKeepsSession: a dropped TCP connection within the
// session timeout keeps the session, its ephemeral znodes and its watches;
// no new-session hook runs.
func TestZKConnectionLossKeepsSession(t *testing.T) {
	srv := zktest.Start(t)
	proxy := srv.Proxy(t)
	cs := proxy.Chroot(t)
	c := connect(t, cs)
	other := connect(t, srv.Addr+cs[len(proxy.Addr):])
	mustf(t, c.CreatePersistentPaths(), "paths")
	epoch, err := c.RegisterBroker(registration(1))
	mustf(t, err, "register")
	hooks := newCounter()
	c.OnNewSession(hooks.fn)
	kids := newCounter()
	cancel := c.WatchChildren(zkutil.TopicsPath(), kids.fn)
	defer cancel()
	session := c.SessionID()

	for i := 0; i < 3; i++ {
		proxy.DropConnections()
		// Operations retry across the reconnect.
		_, _, err := c.Get(zkutil.BrokerIDPath(1))
		mustf(t, err, "get after drop %d", i)
	}
	mustf(t, other.CreateTopic("t", map[int32][]int32{0: {1}}, nil), "create topic")
	kids.wait(t, "children watch survives reconnect")
	if c.SessionID() != session {
		t.Fatalf("session changed: 0x%x → 0x%x", session, c.SessionID())
	}
	info, err := other.GetBroker(1)
	mustf(t, err, "broker still registered")
	if info.Epoch != epoch {
		t.Fatalf("broker epoch changed")
	}
	if n := hooks.drain(); n != 0 {
		t.Fatalf("OnNewSession ran %d times without an expiry", n)
	}
}

// TestZKPartitionExpiresSession: a partition longer than the session timeout
// makes ZooKeeper expire the session; once reachable again the Client gets a
// new session, its watches fire, and the hooks run.
func TestZKPartitionExpiresSession(t *testing.T) {
	srv := zktest.Start(t)
	proxy := srv.Proxy(t)
	cs := proxy.Chroot(t)
	log := logrus.New()
	log.SetLevel(logrus.ErrorLevel)
	ctx, cancelCtx := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancelCtx()
	c, err := zkutil.Connect(ctx, zkutil.Config{Connect: cs, SessionTimeout: time.Second, ConnectionTimeout: 2 * time.Second, Logger: log})
	mustf(t, err, "connect")
	defer c.Close()
	other := connect(t, srv.Addr+cs[len(proxy.Addr):])
	mustf(t, c.CreatePersistentPaths(), "paths")
	_, err = c.RegisterBroker(registration(3))
	mustf(t, err, "register")
	hooks := newCounter()
	c.OnNewSession(hooks.fn)
	kids := newCounter()
	cancel := c.WatchChildren(zkutil.BrokerIDsPath(), kids.fn)
	defer cancel()
	old := c.SessionID()

	proxy.Block()
	// Operations fail with a connection error within ConnectionTimeout.
	start := time.Now()
	if _, _, err := c.Get(zkutil.BrokerIDsPath()); !errors.Is(err, zkutil.ErrConnectionLoss) && !errors.Is(err, zkutil.ErrSessionExpired) {
		t.Fatalf("get while partitioned: %v", err)
	}
	if d := time.Since(start); d > 10*time.Second {
		t.Fatalf("get while partitioned took %v", d)
	}
	testwait.For(t, 20*time.Second, func() error {
		if _, err := other.GetBroker(3); !errors.Is(err, zkutil.ErrNoNode) {
			return errors.New("ephemeral of the partitioned session still there")
		}
		return nil
	})
	proxy.Unblock()
	hooks.wait(t, "OnNewSession after expiry")
	if c.SessionID() == old || c.SessionID() == 0 {
		t.Fatalf("session id 0x%x after expiry of 0x%x", c.SessionID(), old)
	}
	kids.wait(t, "watch fired on the new session")
	_, err = c.RegisterBroker(registration(3))
	mustf(t, err, "re-register")
	kids.drain()
	_, err = other.RegisterBroker(registration(4))
	mustf(t, err, "register 4")
	kids.wait(t, "watch re-armed on the new session")
}

// TestZKServerRestartKeepsSession: ZooKeeper persists sessions, so a server
// restart shorter than the session timeout keeps the session, its ephemeral
// znodes and its watches; the Client just reconnects.
func TestZKServerRestartKeepsSession(t *testing.T) {
	srv, err := zktest.StartServer()
	mustf(t, err, "start own server")
	defer srv.Stop()
	cs := srv.Chroot(t)
	c := connect(t, cs)
	mustf(t, c.CreatePersistentPaths(), "paths")
	epoch, err := c.RegisterBroker(registration(5))
	mustf(t, err, "register")
	kids := newCounter()
	cancel := c.WatchChildren(zkutil.TopicsPath(), kids.fn)
	defer cancel()
	hooks := newCounter()
	c.OnNewSession(hooks.fn)
	session := c.SessionID()

	mustf(t, srv.Restart(), "restart")
	other := connect(t, cs)
	mustf(t, other.CreateTopic("t", map[int32][]int32{0: {5}}, nil), "create topic")
	kids.wait(t, "watch after server restart")
	info, err := c.GetBroker(5)
	mustf(t, err, "registration kept")
	if info.Epoch != epoch || c.SessionID() != session {
		t.Fatalf("epoch %d→%d session 0x%x→0x%x", epoch, info.Epoch, session, c.SessionID())
	}
	if n := hooks.drain(); n != 0 {
		t.Fatalf("OnNewSession ran %d times", n)
	}
}
