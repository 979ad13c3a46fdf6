package zkutil_test

import (
	"fmt"
	"runtime"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"samsa/internal/testwait"
	"samsa/zkutil"
	"samsa/zkutil/zktest"
)

// recorder collects callback labels in call order.
type recorder struct {
	mu  sync.Mutex
	got []string
}

func (r *recorder) fn(label string) func() {
	return func() { r.add(label) }
}

func (r *recorder) add(label string) {
	r.mu.Lock()
	r.got = append(r.got, label)
	r.mu.Unlock()
}

// take waits until n calls were recorded and removes and returns them.
func (r *recorder) take(t *testing.T, n int, what string) []string {
	t.Helper()
	testwait.For(t, 30*time.Second, func() error {
		r.mu.Lock()
		defer r.mu.Unlock()
		if len(r.got) < n {
			return fmt.Errorf("%s: %d of %d callbacks so far: %v", what, len(r.got), n, r.got)
		}
		return nil
	})
	r.mu.Lock()
	defer r.mu.Unlock()
	got := slices.Clone(r.got[:n])
	r.got = r.got[n:]
	return got
}

// orderPaths creates n znodes under /o and watches them from w, children
// watches on the even ones and data watches on the odd ones (a controller
// watches /brokers/ids's children and /brokers/topics/<t>'s data). It returns
// the paths and, for round r, the ops that change each path once, in order.
func orderPaths(t *testing.T, w, c *zkutil.Client, n int, rec *recorder) ([]string, func(r int) []zkutil.Op) {
	paths := make([]string, n)
	for i := range paths {
		paths[i] = fmt.Sprintf("/o/%02d", i)
		mustf(t, c.EnsurePath(paths[i]), "ensure %s", paths[i])
		watch := w.WatchData
		if i%2 == 0 {
			watch = w.WatchChildren
		}
		t.Cleanup(watch(paths[i], rec.fn(paths[i])))
	}
	ops := func(r int) []zkutil.Op {
		ops := make([]zkutil.Op, n)
		for i, p := range paths {
			if i%2 == 0 {
				ops[i] = zkutil.CreateOp{Path: fmt.Sprintf("%s/c%03d", p, r), Mode: zkutil.Persistent}
			} else {
				ops[i] = zkutil.SetOp{Path: p, Data: []byte{byte(r)}, Version: zkutil.AnyVersion}
			}
		}
		return ops
	}
	return paths, ops
}

// TestZKWatchEventsInZooKeeperOrder: callbacks of different watches run in
// the order ZooKeeper delivered their events, every time. (The bug this
// guards against: a test registered brokers and at once created a topic,
// and the controller handled the topic change first.) Even rounds change
// all paths in one multi, so the events arrive back to back; odd rounds
// change them one write at a time.
func TestZKWatchEventsInZooKeeperOrder(t *testing.T) {
	srv := zktest.Start(t)
	cs := srv.Chroot(t)
	w, c := connect(t, cs), connect(t, cs)
	const n, rounds = 16, 30
	rec := &recorder{}
	want, ops := orderPaths(t, w, c, n, rec)
	for r := range rounds {
		if r%2 == 0 {
			_, err := c.Multi(ops(r)...)
			mustf(t, err, "round %d multi", r)
		} else {
			for i, op := range ops(r) {
				_, err := c.Multi(op)
				mustf(t, err, "round %d write %d", r, i)
			}
		}
		if got := rec.take(t, n, fmt.Sprintf("round %d", r)); !slices.Equal(got, want) {
			t.Fatalf("round %d: callbacks ran in the order\n%v\nZooKeeper's order was\n%v", r, got, want)
		}
	}
}

// TestZKWatchOrderWhileConsumerStalled: while a callback is stuck, later
// events queue behind it (bounded: one call per watch), and once it returns
// they run in ZooKeeper's order, each last call reading the final data.
func TestZKWatchOrderWhileConsumerStalled(t *testing.T) {
	srv := zktest.Start(t)
	cs := srv.Chroot(t)
	w, c := connect(t, cs), connect(t, cs)
	const n, waves = 8, 20
	rec := &recorder{}
	release := make(chan struct{})
	paths := make([]string, n)
	set := make([]zkutil.Op, n)
	for i := range paths {
		p := fmt.Sprintf("/s/%02d", i)
		paths[i] = p
		mustf(t, c.EnsurePath(p), "ensure")
		defer w.WatchData(p, func() {
			if i == 0 {
				select {
				case <-release:
				case <-time.After(60 * time.Second):
				}
			}
			data, _, err := w.Get(p)
			if err != nil {
				data = []byte(err.Error())
			}
			rec.add(p + "=" + string(data))
		})()
	}
	wave := func(v int) {
		for i, p := range paths {
			set[i] = zkutil.SetOp{Path: p, Data: fmt.Appendf(nil, "%d", v), Version: zkutil.AnyVersion}
		}
		_, err := c.Multi(set...)
		mustf(t, err, "wave %d", v)
	}
	wave(0) // the first callback now stalls
	for v := 1; v <= waves; v++ {
		wave(v)
	}
	// A read on w is answered after every event of the waves reached w.
	_, _, err := w.Get(paths[0])
	mustf(t, err, "sync")
	if q := zkutil.PendingCallbacks(w); q > n {
		t.Fatalf("%d callbacks queued for %d watches", q, n)
	}
	close(release)
	// A change of its own after all the others: its callback runs last.
	sentinel := "/s/sentinel"
	mustf(t, c.EnsurePath(sentinel), "ensure sentinel")
	defer w.WatchData(sentinel, rec.fn(sentinel))()
	_, err = c.Set(sentinel, []byte("x"), zkutil.AnyVersion)
	mustf(t, err, "set sentinel")
	var got []string
	testwait.For(t, 30*time.Second, func() error {
		rec.mu.Lock()
		defer rec.mu.Unlock()
		if !slices.Contains(rec.got, sentinel) {
			return fmt.Errorf("sentinel not called yet: %v", rec.got)
		}
		got = slices.Clone(rec.got)
		return nil
	})
	checkStalledOrder(t, got, paths, sentinel, fmt.Sprint(waves))
}

// checkStalledOrder: the first len(paths) calls are the paths in order;
// after them each path is called at most once more (a watch fires once per
// arm, and is armed again only when its queued call is taken); the sentinel
// is last; every path's last call read final.
func checkStalledOrder(t *testing.T, got, paths []string, sentinel, final string) {
	t.Helper()
	if len(got) < len(paths)+1 || got[len(got)-1] != sentinel {
		t.Fatalf("calls %v: want every path, then the sentinel last", got)
	}
	last := map[string]string{}
	again := map[string]bool{}
	for i, g := range got[:len(got)-1] {
		p, v, _ := strings.Cut(g, "=")
		last[p] = v
		if i < len(paths) && p != paths[i] {
			t.Fatalf("call %d is %s, want %s (ZooKeeper's order): %v", i, p, paths[i], got)
		}
		if i >= len(paths) {
			if again[p] {
				t.Fatalf("%s called more than twice: %v", p, got)
			}
			again[p] = true
		}
	}
	for _, p := range paths {
		if last[p] != final {
			t.Fatalf("last call of %s read %q, want %q: %v", p, last[p], final, got)
		}
	}
}

// TestZKSessionExpiryOrder: after an expiry the hooks run first, then every
// persistent watch once in registration order, and the watches are armed on
// the new session and keep ZooKeeper's order.
func TestZKSessionExpiryOrder(t *testing.T) {
	srv := zktest.Start(t)
	cs := srv.Chroot(t)
	w, c := connect(t, cs), connect(t, cs)
	mustf(t, c.EnsurePath("/x/a"), "ensure a")
	mustf(t, c.EnsurePath("/x/b"), "ensure b")
	rec := &recorder{}
	defer w.WatchData("/x/a", rec.fn("a"))()
	defer w.WatchChildren("/x/b", rec.fn("b"))()
	w.OnNewSession(rec.fn("hook"))
	for i := range 2 {
		srv.ExpireSession(t, w)
		if got := rec.take(t, 3, "after expiry"); !slices.Equal(got, []string{"hook", "a", "b"}) {
			t.Fatalf("expiry %d: calls %v, want hook, a, b", i, got)
		}
		_, err := c.Create(fmt.Sprintf("/x/b/c%d", i), nil, zkutil.Persistent)
		mustf(t, err, "create child")
		_, err = c.Set("/x/a", []byte{byte(i)}, zkutil.AnyVersion)
		mustf(t, err, "set a")
		if got := rec.take(t, 2, "changes on the new session"); !slices.Equal(got, []string{"b", "a"}) {
			t.Fatalf("expiry %d: calls %v after changing b then a", i, got)
		}
	}
}

// TestZKWatchesNeedNoGoroutines: a watch is a registration, not a
// goroutine; many watches cost no goroutines.
func TestZKWatchesNeedNoGoroutines(t *testing.T) {
	srv := zktest.Start(t)
	cs := srv.Chroot(t)
	w := connect(t, cs)
	cnt := newCounter()
	base := runtime.NumGoroutine()
	for i := range 100 {
		defer w.WatchData(fmt.Sprintf("/g/%d", i), cnt.fn)()
		defer w.WatchChildren(fmt.Sprintf("/g/%d", i), cnt.fn)()
	}
	if n := runtime.NumGoroutine(); n > base+10 {
		t.Fatalf("200 watches: %d goroutines, %d before", n, base)
	}
}

// TestZKWatchUnreadablePathDoesNotStopDispatcher: a watch whose arm fails
// with NoAuth (a children watch on a znode its session may not read) is
// called once and retried in the background; it does not hold back the
// other watches, and Close stops its retry goroutine.
func TestZKWatchUnreadablePathDoesNotStopDispatcher(t *testing.T) {
	srv := zktest.Start(t)
	cs := srv.Chroot(t)
	owner := connectAs(t, cs, true, digest("broker", "secret"))
	_, err := owner.CreateRecursive("/config/users/alice", []byte(`{"version":1,"config":{}}`), zkutil.Persistent)
	mustf(t, err, "sensitive znode")
	t.Cleanup(func() { _ = owner.DeleteRecursive("/") })
	mustf(t, owner.EnsurePath("/open"), "open znode")
	base := runtime.NumGoroutine()
	w := connect(t, cs)

	rec := &recorder{}
	defer w.WatchChildren("/config/users/alice", rec.fn("forbidden"))()
	defer w.WatchData("/open", rec.fn("open"))()
	if got := rec.take(t, 1, "failed arm"); !slices.Equal(got, []string{"forbidden"}) {
		t.Fatalf("calls %v, want the unarmed watch called once", got)
	}
	for i := range 3 {
		_, err := owner.Set("/open", []byte{byte(i)}, zkutil.AnyVersion)
		mustf(t, err, "set")
		if got := rec.take(t, 1, "open watch"); !slices.Equal(got, []string{"open"}) {
			t.Fatalf("change %d: calls %v", i, got)
		}
	}
	w.Close()
	testwait.For(t, 5*time.Second, func() error {
		if n := runtime.NumGoroutine(); n > base {
			return fmt.Errorf("%d goroutines after Close, %d before Connect", n, base)
		}
		return nil
	})
}
