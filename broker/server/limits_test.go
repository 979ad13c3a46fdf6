package server

import (
	"net"
	"testing"
	"time"
)

// answered reports whether c's Metadata request is answered within d.
func answered(c *client, d time.Duration) bool {
	c.t.Helper()
	c.send(metadataReq(1))
	c.conn.SetReadDeadline(time.Now().Add(d))
	var b [4]byte
	_, err := c.conn.Read(b[:])
	c.conn.SetReadDeadline(time.Now().Add(10 * time.Second))
	return err == nil
}

// TestServerMaxConnections: at max.connections the accept loop waits (the
// client's connection sits in the backlog, unanswered) until a connection
// closes; the inter-broker listener is not counted against it.
func TestServerMaxConnections(t *testing.T) {
	checkNoGoroutineLeak(t)
	s, _, c1, _, c3 := atTwoConnections(t)
	ib, err := s.ListenSecure("INTERNAL", "127.0.0.1:0", Security{InterBroker: true})
	if err != nil {
		t.Fatal(err)
	}
	ibc := dial(t, ib.String())
	ibc.roundTrip(metadataReq(1)) // exempt, though it counts towards the total (as in Kafka)
	c1.conn.Close()
	ibc.conn.Close()
	c3.conn.SetReadDeadline(time.Now().Add(10 * time.Second))
	if _, err := readFrameOf(c3); err != nil {
		t.Fatalf("the waiting connection was not served after one closed: %v", err)
	}
}

// atTwoConnections starts a server with max.connections=2 and fills it:
// c1 and c2 are served, c3 waits in the backlog unanswered.
func atTwoConnections(t *testing.T) (s *Server, addr string, c1, c2, c3 *client) {
	t.Helper()
	s, addr, _ = startServer(t, newTestHandler(), func(o *Options) { o.MaxConnections = 2 })
	c1, c2 = dial(t, addr), dial(t, addr)
	c1.roundTrip(metadataReq(1))
	c2.roundTrip(metadataReq(1))
	c3 = dial(t, addr)
	if answered(c3, 300*time.Millisecond) {
		t.Fatal("a third connection was served above max.connections=2")
	}
	return s, addr, c1, c2, c3
}

func readFrameOf(c *client) (int, error) {
	var b [4]byte
	return c.conn.Read(b[:])
}

// TestServerListenerMaxConnections: listener.name.<l>.max.connections holds
// its listener only.
func TestServerListenerMaxConnections(t *testing.T) {
	checkNoGoroutineLeak(t)
	s, addr, _ := startServer(t, newTestHandler(), nil)
	lim, err := s.ListenSecure("LIMITED", "127.0.0.1:0", Security{MaxConnections: 1})
	if err != nil {
		t.Fatal(err)
	}
	dial(t, lim.String()).roundTrip(metadataReq(1))
	if answered(dial(t, lim.String()), 300*time.Millisecond) {
		t.Fatal("a second connection was served on a listener with max.connections=1")
	}
	dial(t, addr).roundTrip(metadataReq(1)) // the other listener is not limited
}

// TestServerMaxConnectionsPerIPOverrides: an override beats
// max.connections.per.ip; with max.connections.per.ip=0 an address without
// an override gets no connection.
func TestServerMaxConnectionsPerIPOverrides(t *testing.T) {
	checkNoGoroutineLeak(t)
	_, addr, _ := startServer(t, newTestHandler(), func(o *Options) {
		o.MaxConnectionsPerIP = 1
		o.MaxConnectionsPerIPOverrides = map[string]int32{"127.0.0.1": 3}
	})
	for i := 0; i < 3; i++ {
		dial(t, addr).roundTrip(metadataReq(1))
	}
	c := dial(t, addr)
	c.send(metadataReq(1))
	c.expectClosed()

	_, addr, _ = startServer(t, newTestHandler(), func(o *Options) {
		o.ZeroConnectionsPerIP = true
		o.MaxConnectionsPerIPOverrides = map[string]int32{"127.0.0.2": 5}
	})
	c = dial(t, addr)
	c.send(metadataReq(1))
	c.expectClosed()
}

// TestServerConnectionCreationRate: max.connection.creation.rate (KIP-612)
// spaces accepts out: 20 connections at 10/s (a burst of 10, then one per
// 100 ms) take at least about a second to be served.
func TestServerConnectionCreationRate(t *testing.T) {
	checkNoGoroutineLeak(t)
	_, addr, _ := startServer(t, newTestHandler(), func(o *Options) { o.MaxConnectionCreationRate = 10 })
	start := time.Now()
	var conns []net.Conn
	for i := 0; i < 20; i++ {
		c := dial(t, addr)
		c.roundTrip(metadataReq(1))
		conns = append(conns, c.conn)
	}
	if d := time.Since(start); d < 800*time.Millisecond {
		t.Fatalf("20 connections at 10/s were accepted in %v", d)
	}
}
