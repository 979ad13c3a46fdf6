package zkutil_test

import (
	"testing"
	"time"

	"samsa/internal/testwait"
	"samsa/zkutil"
	"samsa/zkutil/zktest"
)

func TestZKWatchesReArm(t *testing.T) {
	srv := zktest.Start(t)
	cs := srv.Chroot(t)
	w, c := connect(t, cs), connect(t, cs)

	// Children watch on a path that does not exist yet.
	kids := newCounter()
	cancelKids := w.WatchChildren("/parent", kids.fn)
	defer cancelKids()
	data := newCounter()
	cancelData := w.WatchData("/parent", data.fn)
	defer cancelData()

	mustf(t, c.EnsurePath("/parent"), "create parent")
	kids.wait(t, "children watch on creation")
	data.wait(t, "data watch on creation")
	for i := 0; i < 3; i++ {
		_, err := c.Create("/parent/c_", nil, zkutil.PersistentSequential)
		mustf(t, err, "create child")
		kids.wait(t, "children watch re-armed")
		_, err = c.Set("/parent", []byte{byte(i)}, zkutil.AnyVersion)
		mustf(t, err, "set")
		data.wait(t, "data watch re-armed")
	}

	// After cancel no more calls.
	cancelData()
	kids.drain()
	data.drain()
	_, err := c.Set("/parent", []byte("x"), zkutil.AnyVersion)
	mustf(t, err, "set after cancel")
	_, err = c.Create("/parent/last", nil, zkutil.Persistent)
	mustf(t, err, "child after cancel")
	kids.wait(t, "children still watched")
	if n := data.drain(); n != 0 {
		t.Fatalf("cancelled data watch fired %d times", n)
	}

	// One-shot GetW.
	once := newCounter()
	_, _, err = w.GetW("/parent/last", once.fn)
	mustf(t, err, "getw")
	_, err = c.Set("/parent/last", []byte("1"), zkutil.AnyVersion)
	mustf(t, err, "set last")
	once.wait(t, "getw")
	_, err = c.Set("/parent/last", []byte("2"), zkutil.AnyVersion)
	mustf(t, err, "set last again")
	// Give a stray second call a chance to show up via a round trip that
	// orders after the event: a fresh watch sees the second change's result.
	testwait.For(t, 5*time.Second, func() error {
		_, _, err := w.Get("/parent/last")
		return err
	})
	if n := once.drain(); n != 0 {
		t.Fatalf("one-shot watch fired %d more times", n)
	}
}
