package zkutil_test

import (
	"context"
	"errors"
	"fmt"
	"net"
	"runtime"
	"testing"
	"time"

	"samsa/internal/testwait"
	"samsa/zkutil"
	"samsa/zkutil/zktest"
)

func TestZKConnectTimeout(t *testing.T) {
	// A port nobody listens on.
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	mustf(t, err, "listen")
	addr := ln.Addr().String()
	ln.Close()
	start := time.Now()
	_, err = zkutil.Connect(context.Background(), zkutil.Config{Connect: addr + "/x", ConnectionTimeout: 500 * time.Millisecond})
	if !errors.Is(err, zkutil.ErrNoServer) {
		t.Fatalf("connect to nothing: %v", err)
	}
	if d := time.Since(start); d > 10*time.Second {
		t.Fatalf("connect took %v", d)
	}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if _, err := zkutil.Connect(ctx, zkutil.Config{Connect: addr}); !errors.Is(err, zkutil.ErrNoServer) {
		t.Fatalf("connect with cancelled ctx: %v", err)
	}
}

// TestZKCloseStopsGoroutines: Close waits for the dispatcher and every watch
// goroutine, and go-zookeeper's goroutines exit too.
func TestZKCloseStopsGoroutines(t *testing.T) {
	srv := zktest.Start(t)
	cs := srv.Chroot(t)
	warm := connect(t, cs) // creates the chroot
	warm.Close()
	base := runtime.NumGoroutine()

	c := connect(t, cs)
	cnt := newCounter()
	for i := 0; i < 10; i++ {
		c.WatchChildren(fmt.Sprintf("/w%d", i), cnt.fn)
		c.WatchData(fmt.Sprintf("/w%d", i), cnt.fn)
	}
	mustf(t, c.EnsurePath("/g"), "ensure")
	_, _, err := c.GetW("/g", cnt.fn)
	mustf(t, err, "getw")
	c.Close()
	c.Close() // idempotent
	// Close waited for go-zookeeper too; only goroutines on their way out
	// (already unblocked) may still show up, so allow a short settle.
	testwait.For(t, time.Second, func() error {
		if n := runtime.NumGoroutine(); n > base {
			return fmt.Errorf("%d goroutines, %d before", n, base)
		}
		return nil
	})
}

// TestZKCallbacksRunInOrderOnOneGoroutine: hooks and watch callbacks are
// serialised on the dispatcher, so a slow callback delays, never overlaps.
func TestZKCallbacksRunInOrderOnOneGoroutine(t *testing.T) {
	srv := zktest.Start(t)
	cs := srv.Chroot(t)
	w, c := connect(t, cs), connect(t, cs)
	mustf(t, c.EnsurePath("/a"), "ensure")
	running := make(chan struct{}, 1)
	overlap := make(chan struct{}, 100)
	done := newCounter()
	fn := func() {
		select {
		case running <- struct{}{}:
		default:
			overlap <- struct{}{}
		}
		time.Sleep(time.Millisecond) // a slow callback (tests may simulate slowness)
		<-running
		done.fn()
	}
	for i := 0; i < 5; i++ {
		defer w.WatchData("/a", fn)()
	}
	for i := 0; i < 3; i++ {
		_, err := c.Set("/a", []byte{byte(i)}, zkutil.AnyVersion)
		mustf(t, err, "set")
		for j := 0; j < 5; j++ {
			done.wait(t, "callback")
		}
	}
	if len(overlap) != 0 {
		t.Fatalf("%d callbacks overlapped", len(overlap))
	}
}
