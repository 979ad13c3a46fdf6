package server

import (
	"context"
	"sync"
	"time"
)

// Connection limits as Kafka 2.8's ConnectionQuotas applies them in its
// Acceptor: max.connections (broker-wide; the inter-broker listener is
// exempt) and listener.name.<l>.max.connections make the accept loop wait
// for a free slot before accepting, so excess clients wait in the kernel's
// backlog rather than being refused; max.connection.creation.rate
// (KIP-612, broker-wide and per listener; the inter-broker listener only by
// its own) makes it wait before the next accept; max.connections.per.ip and
// its overrides close a connection at once (startConn).

// rateLimiter is a token bucket holding up to one second of tokens, the
// shape of Kafka's one-second quota window. Safe for concurrent use.
type rateLimiter struct {
	mu     sync.Mutex
	rate   float64   // guarded by mu; tokens per second
	tokens float64   // guarded by mu
	last   time.Time // guarded by mu
}

func newRateLimiter(perSecond int32) *rateLimiter {
	if perSecond <= 0 || perSecond == 1<<31-1 {
		return nil
	}
	return &rateLimiter{rate: float64(perSecond), tokens: float64(perSecond), last: time.Now()}
}

// reserve takes one token and returns how long to wait before using it.
func (r *rateLimiter) reserve() time.Duration {
	if r == nil {
		return 0
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	now := time.Now()
	r.tokens = min(r.rate, r.tokens+now.Sub(r.last).Seconds()*r.rate)
	r.last = now
	r.tokens--
	if r.tokens >= 0 {
		return 0
	}
	return time.Duration(-r.tokens / r.rate * float64(time.Second))
}

// waitCreationRate waits out max.connection.creation.rate for l before its
// next accept; false when the server stops meanwhile.
func (s *Server) waitCreationRate(ctx context.Context, l *listener) bool {
	d := l.rate.reserve()
	if !l.sec.InterBroker {
		d = max(d, s.rate.reserve())
	}
	if d <= 0 {
		return true
	}
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
		return true
	case <-s.quit:
	case <-ctx.Done():
	}
	return false
}

// waitConnectionSlot blocks l's accept loop while l has
// listener.name.<l>.max.connections connections or, for a listener other
// than the inter-broker one, the broker has max.connections; false when
// the server stops meanwhile.
func (s *Server) waitConnectionSlot(l *listener) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	for !s.closing.Load() {
		full := l.sec.MaxConnections > 0 && s.mu.perListener[l.name] >= l.sec.MaxConnections
		if !l.sec.InterBroker && s.opts.MaxConnections > 0 && int32(len(s.mu.conns)) >= s.opts.MaxConnections {
			full = true
		}
		if !full {
			return true
		}
		s.slots.Wait()
	}
	return false
}

// perIPLimit is the max.connections.per.ip limit for ip: its override, or
// the default. Zero or negative: unlimited.
func (s *Server) perIPLimit(ip string) (limit int32, limited bool) {
	if n, ok := s.opts.MaxConnectionsPerIPOverrides[ip]; ok {
		return n, true
	}
	if s.opts.MaxConnectionsPerIP > 0 {
		return s.opts.MaxConnectionsPerIP, true
	}
	return 0, s.opts.ZeroConnectionsPerIP
}
