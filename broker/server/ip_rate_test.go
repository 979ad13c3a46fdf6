package server

import (
	"net"
	"testing"
	"time"
)

// dialFromIP connects to addr from the loopback address ip.
func dialFromIP(t *testing.T, ip, addr string) *client {
	t.Helper()
	d := net.Dialer{Timeout: 5 * time.Second, LocalAddr: &net.TCPAddr{IP: net.ParseIP(ip)}}
	conn, err := d.Dial("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { conn.Close() })
	conn.SetDeadline(time.Now().Add(10 * time.Second))
	return &client{t: t, conn: conn}
}

// throttledAmong opens n connections from ip to addr in a row and returns
// how many the server closed without answering (the others are answered).
func throttledAmong(t *testing.T, ip, addr string, n int) int {
	t.Helper()
	closed := 0
	for i := 0; i < n; i++ {
		c := dialFromIP(t, ip, addr)
		c.send(metadataReq(1))
		var b [4]byte
		if _, err := c.conn.Read(b[:]); err != nil {
			closed++
		}
	}
	return closed
}

// TestServerIPConnectionRate: an address over its connection_creation_rate
// quota has its new connections closed unanswered; an address without a
// quota is not held; the default quota applies to addresses without their
// own, and a change applies at once.
func TestServerIPConnectionRate(t *testing.T) {
	checkNoGoroutineLeak(t)
	s, addr, _ := startServer(t, newTestHandler(), nil)
	if got := s.IPConnectionRate("127.0.0.2"); got >= 0 {
		t.Fatalf("IPConnectionRate = %d before any quota", got)
	}
	s.SetIPConnectionRates(-1, map[string]int32{"127.0.0.2": 1, "127.0.0.5": 0})
	if got := s.IPConnectionRate("127.0.0.2"); got != 1 {
		t.Fatalf("IPConnectionRate = %d", got)
	}
	if n := throttledAmong(t, "127.0.0.2", addr, 6); n == 0 || n == 6 {
		t.Fatalf("%d of 6 connections in a row at 1/s closed, want some but not all", n)
	}
	if n := throttledAmong(t, "127.0.0.3", addr, 6); n != 0 {
		t.Fatalf("%d connections closed from an address without a quota", n)
	}
	if n := throttledAmong(t, "127.0.0.5", addr, 2); n != 2 {
		t.Fatalf("%d of 2 connections closed from an address with a quota of 0", n)
	}
	s.SetIPConnectionRates(1, map[string]int32{"127.0.0.2": 1000})
	if n := throttledAmong(t, "127.0.0.2", addr, 6); n != 0 {
		t.Fatalf("%d connections closed under an override of 1000/s", n)
	}
	if n := throttledAmong(t, "127.0.0.4", addr, 6); n == 0 {
		t.Fatal("no connection closed under a default quota of 1/s")
	}
}
