package server

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kmsg"

	"samsa/internal/testwait"
)

// TestServerShutdownWaitsForInFlight: Shutdown closes idle connections at once, lets the busy
// one write its response, then returns (S6.3).
func TestServerShutdownWaitsForInFlight(t *testing.T) {
	checkNoGoroutineLeak(t)
	h := newTestHandler()
	s, addr := newListening(t, Options{Handler: h})
	served := make(chan error, 1)
	go func() { served <- s.Serve(context.Background()) }()

	idle := dial(t, addr)
	idle.roundTrip(metadataReq(1))
	busy := dial(t, addr)
	hb := kmsg.NewPtrHeartbeatRequest()
	corr := busy.send(hb)
	<-h.entered

	shut := make(chan error, 1)
	go func() { shut <- s.Shutdown(context.Background()) }()
	idle.expectClosed()
	select {
	case err := <-shut:
		t.Fatalf("Shutdown returned %v with a request in flight", err)
	default:
	}
	// New connections are refused once the listener is closed.
	testwait.For(t, 5*time.Second, func() error {
		if _, ok := s.Addrs()["PLAINTEXT"]; !ok {
			return errors.New("listener gone")
		}
		c, err := dialRaw(addr)
		if err == nil {
			c.Close()
			return errors.New("listener still accepting")
		}
		return nil
	})
	close(h.release)
	busy.recv(hb, corr)
	busy.expectClosed()
	if err := <-shut; err != nil {
		t.Fatalf("Shutdown = %v", err)
	}
	if err := <-served; err != nil {
		t.Fatalf("Serve = %v", err)
	}
}

// TestServerShutdownForceClosesAtDeadline: a handler still busy at Shutdown's deadline has its
// ctx cancelled and its connection closed; Shutdown returns the ctx error.
func TestServerShutdownForceClosesAtDeadline(t *testing.T) {
	checkNoGoroutineLeak(t)
	h := newTestHandler()
	s, addr := newListening(t, Options{Handler: h})
	served := make(chan error, 1)
	go func() { served <- s.Serve(context.Background()) }()
	busy := dial(t, addr)
	busy.send(kmsg.NewPtrHeartbeatRequest())
	<-h.entered
	ctx, cancel := context.WithTimeout(context.Background(), 100*time.Millisecond)
	defer cancel()
	if err := s.Shutdown(ctx); !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("Shutdown = %v", err)
	}
	if err := <-h.ctxErr; !errors.Is(err, context.Canceled) {
		t.Fatalf("handler ctx = %v", err)
	}
	busy.expectClosed()
	if err := <-served; err != nil {
		t.Fatalf("Serve = %v", err)
	}
	if _, err := s.Listen("X", "127.0.0.1:0"); !errors.Is(err, ErrServerClosed) {
		t.Fatalf("Listen after Shutdown = %v", err)
	}
}

// TestServerShutdownWithoutServe: Shutdown of a server that never served closes its listeners.
func TestServerShutdownWithoutServe(t *testing.T) {
	s, addr := newListening(t, Options{Handler: newTestHandler()})
	if err := s.Shutdown(context.Background()); err != nil {
		t.Fatal(err)
	}
	if c, err := dialRaw(addr); err == nil {
		c.Close()
		t.Fatal("listener still open")
	}
}
