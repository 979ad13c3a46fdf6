package zkutil_test

import (
	"errors"
	"testing"
	"time"

	"samsa/internal/testwait"
	"samsa/zkutil"
	"samsa/zkutil/zktest"
)

func registration(id int32) zkutil.BrokerRegistration {
	return zkutil.BrokerRegistration{
		ID:        id,
		Endpoints: []zkutil.Endpoint{{ListenerName: "PLAINTEXT", SecurityProtocol: "PLAINTEXT", Host: "127.0.0.1", Port: 9092 + id}},
		JMXPort:   -1,
		Timestamp: time.Now().UnixMilli(),
	}
}

func TestZKBrokerRegistration(t *testing.T) {
	srv := zktest.Start(t)
	cs := srv.Chroot(t)
	a, b := connect(t, cs), connect(t, cs)
	mustf(t, a.CreatePersistentPaths(), "persistent paths")

	epoch, err := a.RegisterBroker(registration(1))
	mustf(t, err, "register")
	// Re-registration by the same session is fine and keeps the epoch.
	again, err := a.RegisterBroker(registration(1))
	mustf(t, err, "re-register")
	if again != epoch {
		t.Fatalf("re-registration epoch %d != %d", again, epoch)
	}
	// Another session may not take the id.
	if _, err := b.RegisterBroker(registration(1)); !errors.Is(err, zkutil.ErrBrokerIDExists) {
		t.Fatalf("duplicate id: %v", err)
	}
	_, err = b.RegisterBroker(registration(2))
	mustf(t, err, "register 2")

	all, err := b.GetAllBrokers()
	mustf(t, err, "all brokers")
	if len(all) != 2 || all[1].Epoch != epoch || all[1].Registration.Endpoints[0].Port != 9093 {
		t.Fatalf("all brokers = %+v", all)
	}
	ids, err := a.GetBrokerIDs()
	mustf(t, err, "ids")
	if len(ids) != 2 || ids[0] != 1 || ids[1] != 2 {
		t.Fatalf("ids = %v", ids)
	}
	// Closing the session removes the ephemeral znode.
	a.Close()
	testwait.For(t, 10*time.Second, func() error {
		_, err := b.GetBroker(1)
		if errors.Is(err, zkutil.ErrNoNode) {
			return nil
		}
		return errors.New("broker 1 still registered")
	})
}

func TestZKGenerateBrokerIDAndClusterID(t *testing.T) {
	srv := zktest.Start(t)
	c := connect(t, srv.Chroot(t))
	for want := int32(1); want <= 3; want++ {
		got, err := c.GenerateBrokerID()
		mustf(t, err, "generate")
		if got != want {
			t.Fatalf("seq = %d, want %d", got, want)
		}
	}
	id, err := c.GetOrCreateClusterID("first")
	mustf(t, err, "cluster id")
	id2, err := c.GetOrCreateClusterID("second")
	mustf(t, err, "cluster id again")
	if id != "first" || id2 != "first" {
		t.Fatalf("cluster ids %q %q", id, id2)
	}
}

func TestZKSessionExpiryReRegisters(t *testing.T) {
	srv := zktest.Start(t)
	cs := srv.Chroot(t)
	c, other := connect(t, cs), connect(t, cs)
	mustf(t, c.CreatePersistentPaths(), "persistent paths")
	epoch, err := c.RegisterBroker(registration(7))
	mustf(t, err, "register")

	// The hook only enqueues; the owner goroutine (here the test) re-registers.
	renew := make(chan struct{}, 4)
	c.OnNewSession(func() { renew <- struct{}{} })
	brokers := newCounter()
	cancel := other.WatchChildren(zkutil.BrokerIDsPath(), brokers.fn)
	defer cancel()
	own := newCounter()
	cancelOwn := c.WatchData(zkutil.BrokerIDPath(7), own.fn)
	defer cancelOwn()

	old := c.SessionID()
	srv.ExpireSession(t, c)
	if c.SessionID() == old {
		t.Fatal("session id unchanged")
	}
	select {
	case <-renew:
	case <-time.After(20 * time.Second):
		t.Fatal("OnNewSession hook not called")
	}
	// The old ephemeral is gone: the other session's watch saw it.
	brokers.wait(t, "broker deregistration")
	newEpoch, err := c.RegisterBroker(registration(7))
	mustf(t, err, "re-register after expiry")
	if newEpoch <= epoch {
		t.Fatalf("broker epoch %d not above %d", newEpoch, epoch)
	}
	// The re-armed watch of the expired session fires for the new znode.
	own.drain()
	mustf(t, setBrokerData(c, 7), "update registration")
	own.wait(t, "re-armed data watch")
}

func setBrokerData(c *zkutil.Client, id int32) error {
	r := registration(id)
	r.Rack = "r2"
	_, err := c.Set(zkutil.BrokerIDPath(id), r.Encode(), zkutil.AnyVersion)
	return err
}
