package server

import (
	"context"
	"net"
	"sync"
	"testing"
	"time"
)

// flakyListener fails Accept with a temporary error a few times, then behaves like inner.
type flakyListener struct {
	net.Listener
	mu       sync.Mutex
	failures int         // guarded by mu
	calls    []time.Time // guarded by mu
}

type tempErr struct{}

func (tempErr) Error() string   { return "accept: too many open files" }
func (tempErr) Timeout() bool   { return false }
func (tempErr) Temporary() bool { return true }

func (l *flakyListener) Accept() (net.Conn, error) {
	l.mu.Lock()
	l.calls = append(l.calls, time.Now())
	if l.failures > 0 {
		l.failures--
		l.mu.Unlock()
		return nil, tempErr{}
	}
	l.mu.Unlock()
	return l.Listener.Accept()
}

// TestServerAcceptBackoff: temporary accept errors are retried after 5, 10, 20, 40 ms (S6.3),
// and the listener then serves normally.
func TestServerAcceptBackoff(t *testing.T) {
	checkNoGoroutineLeak(t)
	inner, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	fl := &flakyListener{Listener: inner, failures: 4}
	s, err := New(Options{Handler: newTestHandler()})
	if err != nil {
		t.Fatal(err)
	}
	addr, err := s.addListener("PLAINTEXT", fl)
	if err != nil {
		t.Fatal(err)
	}
	served := make(chan error, 1)
	go func() { served <- s.Serve(context.Background()) }()
	defer func() {
		if err := s.Shutdown(context.Background()); err != nil {
			t.Error(err)
		}
		<-served
	}()
	c := dial(t, addr.String())
	c.roundTrip(metadataReq(1, "after-backoff"))
	fl.mu.Lock()
	defer fl.mu.Unlock()
	if len(fl.calls) < 5 {
		t.Fatalf("%d accept calls", len(fl.calls))
	}
	for i, want := range []time.Duration{5, 10, 20, 40} {
		if gap := fl.calls[i+1].Sub(fl.calls[i]); gap < want*time.Millisecond*9/10 {
			t.Fatalf("retry %d after %v, want >= %dms", i, gap, want)
		}
	}
}
