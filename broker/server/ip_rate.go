package server

import (
	"maps"
	"net"
	"time"
)

// Per-address connection creation rate quotas (KIP-612's
// connection_creation_rate on /config/ips/<ip> and /config/ips/<default>),
// as Kafka 2.8's ConnectionQuotas.recordIpConnectionMaybeThrottle applies
// them on every listener: each address with a quota has a one-second token
// bucket; a connection that finds it empty is not counted (Kafka
// unrecords it) and is closed once a token would have been there (Kafka's
// Acceptor keeps it as a DelayedCloseSocket for the throttle time), so a
// client retrying in a loop is slowed to the quota. The buckets live under
// Server.mu; an address without a quota has none, and full buckets of
// addresses without an own quota are dropped when their number passes
// maxIPBuckets, which bounds the map by the addresses seen in the last
// second.

// maxIPBuckets is the number of per-address buckets above which the idle
// (full) ones of addresses without an own quota are dropped.
const maxIPBuckets = 4096

// zeroRateHold is how long a connection from an address whose quota is 0
// is held before it is closed: Kafka bounds the throttle time by one quota
// window (quota.window.size.seconds, 1 s).
const zeroRateHold = time.Second

// SetIPConnectionRates replaces the per-address connection creation rate
// quotas: def applies to addresses without their own entry in byIP (by IP
// address); negative means no quota and 0 admits no connection (each is
// held for zeroRateHold, then closed), as a quota of 0 does in Kafka.
// Buckets whose rate changes start full at the new rate.
func (s *Server) SetIPConnectionRates(def int32, byIP map[string]int32) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.mu.ipRateDefault, s.mu.ipRates = def, maps.Clone(byIP)
	for ip, b := range s.mu.ipBuckets {
		if r := s.ipRateLocked(ip); r > 0 {
			b.setRate(r)
		} else {
			delete(s.mu.ipBuckets, ip)
		}
	}
}

// IPConnectionRate returns the connection creation rate quota of ip
// (negative: none).
func (s *Server) IPConnectionRate(ip string) int32 {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.ipRateLocked(ip)
}

func (s *Server) ipRateLocked(ip string) int32 {
	if r, ok := s.mu.ipRates[ip]; ok {
		return r
	}
	return s.mu.ipRateDefault
}

// ipThrottleLocked takes a token of ip's bucket; when there is none it
// returns how long the connection is held before it is closed. Called with
// s.mu held.
func (s *Server) ipThrottleLocked(ip string) time.Duration {
	r := s.ipRateLocked(ip)
	if r < 0 {
		return 0
	}
	if r == 0 {
		return zeroRateHold
	}
	b := s.mu.ipBuckets[ip]
	if b == nil {
		if len(s.mu.ipBuckets) >= maxIPBuckets {
			s.pruneIPBucketsLocked()
		}
		b = newRateLimiter(r)
		s.mu.ipBuckets[ip] = b
	}
	return b.tryTake()
}

// pruneIPBucketsLocked drops the full buckets of addresses without an own
// quota (they would start full again).
func (s *Server) pruneIPBucketsLocked() {
	for ip, b := range s.mu.ipBuckets {
		if _, own := s.mu.ipRates[ip]; !own && b.full() {
			delete(s.mu.ipBuckets, ip)
		}
	}
}

// throttleClose holds nc, over its address's connection rate quota, for d
// and then closes it (sooner if the server stops). Called with s.mu held.
func (s *Server) throttleCloseLocked(nc net.Conn, d time.Duration) {
	s.mu.throttled[nc] = time.AfterFunc(d, func() {
		s.mu.Lock()
		delete(s.mu.throttled, nc)
		s.mu.Unlock()
		nc.Close()
	})
}

// closeThrottledLocked closes every held connection (shutdown).
func (s *Server) closeThrottledLocked() {
	for nc, t := range s.mu.throttled {
		t.Stop()
		nc.Close()
		delete(s.mu.throttled, nc)
	}
}
