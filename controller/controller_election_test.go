package controller

import (
	"context"
	"errors"
	"fmt"
	"testing"

	"samsa/internal/testwait"
	"samsa/zkutil/zktest"
)

// TestControllerElectionTwoCompete: "the first controller in a new cluster has epoch 1"; the
// loser records the winner as the active controller.
func TestControllerElectionTwoCompete(t *testing.T) {
	t.Parallel()
	cl := newCluster(t)
	a := cl.startNode(1, nil)
	b := cl.startNode(2, nil)
	w := waitActive(t, a, b)
	if w.c.Epoch() != 1 {
		t.Fatalf("winner epoch %d, want 1", w.c.Epoch())
	}
	testwait.For(t, waitTimeout, func() error {
		for _, n := range []*node{a, b} {
			if got := n.c.ActiveControllerID(); got != w.id {
				return fmt.Errorf("broker %d sees controller %d, want %d", n.id, got, w.id)
			}
		}
		return nil
	})
	if got := w.reg.Get(MetricActiveControllerCount); got == nil {
		t.Fatal("ActiveControllerCount not registered")
	}
	testwait.For(t, waitTimeout, func() error {
		for _, n := range []*node{a, b} {
			want := int64(0)
			if n == w {
				want = 1
			}
			if v := n.c.metrics.active.Load(); v != want {
				return fmt.Errorf("broker %d ActiveControllerCount %d, want %d", n.id, v, want)
			}
		}
		return nil
	})
}

// TestControllerFailoverOnSessionClose: closing the controller's ZooKeeper session deletes
// the ephemeral /controller; the other broker wins with the next epoch.
func TestControllerFailoverOnSessionClose(t *testing.T) {
	t.Parallel()
	cl, a := newActiveCluster(t, nil)
	b := cl.startNode(2, nil)
	a.c.Shutdown()
	a.zk.Close()
	waitActive(t, b)
	if b.c.Epoch() != 2 {
		t.Fatalf("new controller epoch %d, want 2", b.c.Epoch())
	}
}

// TestControllerSessionExpiryMovesControl: after its session expires the controller resigns
// ("before the new session, the broker resigns") and an election with a bumped epoch follows.
func TestControllerSessionExpiryMovesControl(t *testing.T) {
	t.Parallel()
	cl, a := newActiveCluster(t, nil)
	b := cl.startNode(2, nil)
	zktest.ExpireSession(t, a.zk)
	testwait.For(t, waitTimeout, func() error {
		w := a
		if b.c.IsActive() {
			w = b
		}
		if !w.c.IsActive() || w.c.Epoch() != 2 {
			return fmt.Errorf("broker 1 active=%v epoch=%d, broker 2 active=%v epoch=%d",
				a.c.IsActive(), a.c.Epoch(), b.c.IsActive(), b.c.Epoch())
		}
		if a.c.IsActive() && b.c.IsActive() {
			return errors.New("both active")
		}
		return nil
	})
}

// TestControllerStaleControllerResigns: a controller whose epoch was superseded while its
// event loop was busy gets ErrControllerMoved from its next fenced write and resigns
// (KAFKA-6082), and the partition states carry the new controller's epoch.
func TestControllerStaleControllerResigns(t *testing.T) {
	t.Parallel()
	cl, a := newActiveCluster(t, nil)
	b := cl.startNode(2, nil)
	testwait.For(t, waitTimeout, func() error {
		var known bool
		if err := a.c.sync(context.Background(), func() { _, known = a.c.cc.liveBrokers[2] }); err != nil {
			return err
		}
		if !known {
			return errors.New("broker 2 not yet known to the controller")
		}
		return nil
	})

	// Hold a's event loop, then queue a TopicChange behind it.
	release := make(chan struct{})
	held := make(chan struct{})
	go func() {
		_ = a.c.sync(context.Background(), func() { close(held); <-release })
	}()
	<-held
	admin := cl.zk()
	createTopic(t, admin, "fenced", map[int32][]int32{0: {1, 2}})
	testwait.For(t, waitTimeout, func() error {
		a.c.queue.mu.Lock()
		defer a.c.queue.mu.Unlock()
		for _, qe := range a.c.queue.mu.items {
			if _, ok := qe.ev.(topicChangeEvent); ok {
				return nil
			}
		}
		return fmt.Errorf("no TopicChange queued yet (%d events)", len(a.c.queue.mu.items))
	})
	// Expire a's session: /controller goes, b wins epoch 2 and creates the partition state.
	zktest.ExpireSession(t, a.zk)
	testwait.For(t, waitTimeout, func() error {
		if !b.c.IsActive() {
			return errors.New("broker 2 not active")
		}
		st, err := partitionState(t, admin, "fenced", 0)
		if err != nil {
			return err
		}
		if st.ControllerEpoch != 2 {
			return fmt.Errorf("state controller epoch %d", st.ControllerEpoch)
		}
		return nil
	})
	close(release)
	testwait.For(t, waitTimeout, func() error {
		if a.c.IsActive() {
			return errors.New("broker 1 still active")
		}
		for _, e := range a.logs.AllEntries() {
			if e.Message == "controller: controller moved to another broker; resigning" {
				return nil
			}
		}
		return errors.New("no controller-moved resignation logged")
	})
	st, err := partitionState(t, admin, "fenced", 0)
	if err != nil {
		t.Fatal(err)
	}
	if st.ControllerEpoch != 2 || st.LeaderEpoch != 0 {
		t.Fatalf("state %+v: a stale write got through", st)
	}
	if !b.c.IsActive() || b.c.Epoch() != 2 {
		t.Fatalf("broker 2 active=%v epoch=%d", b.c.IsActive(), b.c.Epoch())
	}
}

// TestControllerSessionExpirySingleBroker: a lone controller whose session expires must win
// again under its new session (epoch 2), whichever of the re-armed /controller watch and the
// new-session hook it handles first.
func TestControllerSessionExpirySingleBroker(t *testing.T) {
	t.Parallel()
	_, a := newActiveCluster(t, nil)
	for round := int32(2); round <= 3; round++ {
		zktest.ExpireSession(t, a.zk)
		testwait.For(t, waitTimeout, func() error {
			if !a.c.IsActive() || a.c.Epoch() != round {
				return fmt.Errorf("active=%v epoch=%d, want epoch %d", a.c.IsActive(), a.c.Epoch(), round)
			}
			id, err := a.zk.GetController()
			if err != nil || id != 1 {
				return fmt.Errorf("/controller holder %d: %v", id, err)
			}
			return nil
		})
	}
	// The duty watches of the old tenures were cancelled, not stacked.
	var watches, topicWatches int
	if err := a.c.sync(context.Background(), func() { watches, topicWatches = len(a.c.dutyWatches), len(a.c.topicWatches) }); err != nil {
		t.Fatal(err)
	}
	if watches != 7 || topicWatches != 0 {
		t.Fatalf("%d duty watches and %d topic watches, want 7 and 0", watches, topicWatches)
	}
}
