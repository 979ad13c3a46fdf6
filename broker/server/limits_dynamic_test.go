package server

import (
	"fmt"
	"net"
	"testing"
	"time"

	"samsa/broker/wire"
	"samsa/internal/testwait"
)

// served waits until c's pending Metadata request (sent by answered) is
// answered and reads the whole answer, failing the test after 10 s.
func served(t *testing.T, c *client) {
	t.Helper()
	c.conn.SetReadDeadline(time.Now().Add(10 * time.Second))
	if _, err := wire.ReadFrame(c.conn, 1<<20, nil); err != nil {
		t.Fatalf("the waiting connection was not served: %v", err)
	}
}

// TestServerSetLimitsMaxConnections: raising max.connections at run time
// lets the waiting accept through; lowering it below the open count closes
// the least recently active connections until the count fits (Kafka's
// closeExcessConnections) and holds new ones until one closes.
func TestServerSetLimitsMaxConnections(t *testing.T) {
	checkNoGoroutineLeak(t)
	s, addr, c1, c2, c3 := atTwoConnections(t)
	s.SetLimits(Limits{MaxConnections: 3})
	served(t, c3)
	if got := s.Limits().MaxConnections; got != 3 {
		t.Fatalf("Limits().MaxConnections = %d, want 3", got)
	}

	c1.roundTrip(metadataReq(1)) // c2 is now the least recently active, then c3
	s.SetLimits(Limits{MaxConnections: 1})
	c2.expectClosed()
	c3.expectClosed()
	c1.roundTrip(metadataReq(1))
	testwait.For(t, 10*time.Second, func() error { return openConns(s, 1) })
	c4 := dial(t, addr)
	if answered(c4, 300*time.Millisecond) {
		t.Fatal("a second connection was served at max.connections=1")
	}
	c1.conn.Close()
	served(t, c4)
}

// TestServerInterBrokerClosesLRU: an inter-broker connection accepted at
// max.connections makes the server close the least recently active client
// connection, never an inter-broker one.
func TestServerInterBrokerClosesLRU(t *testing.T) {
	checkNoGoroutineLeak(t)
	s, addr, _ := startServer(t, newTestHandler(), func(o *Options) { o.MaxConnections = 2 })
	ib, err := s.ListenSecure("INTERNAL", "127.0.0.1:0", Security{InterBroker: true})
	if err != nil {
		t.Fatal(err)
	}
	c1, c2 := dial(t, addr), dial(t, addr)
	c1.roundTrip(metadataReq(1))
	c2.roundTrip(metadataReq(1))
	c1.roundTrip(metadataReq(1)) // c2 is the least recently active
	ib1 := dial(t, ib.String())
	ib1.roundTrip(metadataReq(1))
	c2.expectClosed()
	c1.roundTrip(metadataReq(1))
	ib2 := dial(t, ib.String())
	ib2.roundTrip(metadataReq(1))
	c1.expectClosed()
	// Only inter-broker connections left: none is closed for a third.
	ib3 := dial(t, ib.String())
	ib3.roundTrip(metadataReq(1))
	for _, c := range []*client{ib1, ib2} {
		c.roundTrip(metadataReq(1))
	}
}

// openConns fails unless s has n open connections.
func openConns(s *Server, n int) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if len(s.mu.conns) != n {
		return fmt.Errorf("%d open connections, want %d", len(s.mu.conns), n)
	}
	return nil
}

// TestServerSetListenerLimits: listener.name.<l>.max.connections changes
// at run time for its listener only; an unknown listener is an error.
func TestServerSetListenerLimits(t *testing.T) {
	checkNoGoroutineLeak(t)
	s, _, _ := startServer(t, newTestHandler(), nil)
	lim, err := s.ListenSecure("LIMITED", "127.0.0.1:0", Security{MaxConnections: 1})
	if err != nil {
		t.Fatal(err)
	}
	dial(t, lim.String()).roundTrip(metadataReq(1))
	waiting := dial(t, lim.String())
	if answered(waiting, 300*time.Millisecond) {
		t.Fatal("a second connection was served on a listener with max.connections=1")
	}
	if err := s.SetListenerLimits("LIMITED", 2, 0); err != nil {
		t.Fatal(err)
	}
	served(t, waiting)
	if n, r, err := s.ListenerLimits("LIMITED"); err != nil || n != 2 || r != 0 {
		t.Fatalf("ListenerLimits = %d, %d, %v; want 2, 0, nil", n, r, err)
	}
	if err := s.SetListenerLimits("NOPE", 1, 1); err == nil {
		t.Fatal("SetListenerLimits of an unknown listener succeeded")
	}
}

// TestServerSetLimitsPerIP: max.connections.per.ip.overrides changes per
// address at run time; connections opened under a higher limit stay.
func TestServerSetLimitsPerIP(t *testing.T) {
	checkNoGoroutineLeak(t)
	s, addr, _ := startServer(t, newTestHandler(), func(o *Options) { o.MaxConnectionsPerIP = 1 })
	first := dial(t, addr)
	first.roundTrip(metadataReq(1))
	c := dial(t, addr)
	c.send(metadataReq(1))
	c.expectClosed()

	s.SetLimits(Limits{MaxConnectionsPerIP: 1, MaxConnectionsPerIPOverrides: map[string]int32{"127.0.0.1": 3}})
	open := []*client{first}
	for i := 0; i < 2; i++ {
		c := dial(t, addr)
		c.roundTrip(metadataReq(1))
		open = append(open, c)
	}
	c = dial(t, addr)
	c.send(metadataReq(1))
	c.expectClosed()

	s.SetLimits(Limits{MaxConnectionsPerIP: 5, MaxConnectionsPerIPOverrides: map[string]int32{"127.0.0.1": 1}})
	for _, c := range open {
		c.roundTrip(metadataReq(1))
	}
	c = dial(t, addr)
	c.send(metadataReq(1))
	c.expectClosed()
}

// TestServerSetLimitsCreationRate: a max.connection.creation.rate set at
// run time spaces the accepts out (20 connections at 10/s take about a
// second), broker-wide and per listener.
func TestServerSetLimitsCreationRate(t *testing.T) {
	checkNoGoroutineLeak(t)
	s, addr, _ := startServer(t, newTestHandler(), nil)
	other, err := s.ListenSecure("OTHER", "127.0.0.1:0", Security{})
	if err != nil {
		t.Fatal(err)
	}
	s.SetLimits(Limits{MaxConnectionCreationRate: 10})
	if d := connectN(t, addr, 20); d < 800*time.Millisecond {
		t.Fatalf("20 connections at 10/s were accepted in %v", d)
	}
	s.SetLimits(Limits{})
	if err := s.SetListenerLimits("OTHER", 0, 10); err != nil {
		t.Fatal(err)
	}
	if d := connectN(t, other.String(), 20); d < 800*time.Millisecond {
		t.Fatalf("20 connections at a listener rate of 10/s were accepted in %v", d)
	}
}

// connectN opens n served connections to addr one after the other and
// returns how long that took.
func connectN(t *testing.T, addr string, n int) time.Duration {
	t.Helper()
	start := time.Now()
	var conns []net.Conn
	for i := 0; i < n; i++ {
		c := dial(t, addr)
		c.roundTrip(metadataReq(1))
		conns = append(conns, c.conn)
	}
	d := time.Since(start)
	for _, c := range conns {
		c.Close()
	}
	return d
}
