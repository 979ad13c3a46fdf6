package server

import (
	"context"
	"fmt"
	"maps"
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
//
// Above max.connections (an inter-broker connection accepted at the limit,
// or the limit lowered below the open count) the server closes the least
// recently active connections of the other listeners until the count
// fits: Kafka's Processor.closeExcessConnections (closeExcessLocked).
//
// Every limit can change while the server runs (SetLimits,
// SetListenerLimits; Kafka's SocketServer.reconfigure and its
// ListenerConnectionQuota): a lowered listener or per-address limit holds
// back new connections only, the open ones stay (as in Kafka); a lowered
// max.connections also closes the excess as above; a raised one wakes the
// accept loops waiting for a slot. A new creation rate applies from the
// next accept; one already waiting out the old rate's delay keeps it
// (Kafka does the same).

// Limits are a server's broker-wide connection limits (see Options for
// each field's meaning). Zero or negative: no limit.
type Limits struct {
	MaxConnectionsPerIP          int32
	MaxConnectionsPerIPOverrides map[string]int32 // by IP address
	ZeroConnectionsPerIP         bool
	MaxConnections               int32
	MaxConnectionCreationRate    int32
}

// limitsOf returns the limits set in opts.
func limitsOf(opts *Options) Limits {
	return Limits{
		MaxConnectionsPerIP:          opts.MaxConnectionsPerIP,
		MaxConnectionsPerIPOverrides: maps.Clone(opts.MaxConnectionsPerIPOverrides),
		ZeroConnectionsPerIP:         opts.ZeroConnectionsPerIP,
		MaxConnections:               opts.MaxConnections,
		MaxConnectionCreationRate:    opts.MaxConnectionCreationRate,
	}
}

// Limits returns the broker-wide connection limits in force.
func (s *Server) Limits() Limits {
	s.mu.Lock()
	defer s.mu.Unlock()
	l := s.mu.limits
	l.MaxConnectionsPerIPOverrides = maps.Clone(l.MaxConnectionsPerIPOverrides)
	return l
}

// SetLimits replaces the broker-wide connection limits at run time.
func (s *Server) SetLimits(l Limits) {
	l.MaxConnectionsPerIPOverrides = maps.Clone(l.MaxConnectionsPerIPOverrides)
	s.rate.setRate(l.MaxConnectionCreationRate)
	s.mu.Lock()
	s.mu.limits = l
	closed := s.closeExcessLocked()
	s.slots.Broadcast() // a raised max.connections lets waiting accepts through
	s.mu.Unlock()
	logExcess(closed, l.MaxConnections)
}

// logExcess logs the connections closeExcessLocked closed (outside
// Server.mu, which holds no I/O but Close).
func logExcess(closed []*Conn, limit int32) {
	for _, c := range closed {
		c.log.Infof("closing connection: the least recently active above max.connections=%d", limit)
	}
}

// closeExcessLocked closes, while the server has more connections than
// max.connections (not counting those it is already closing for it), the
// least recently active one (Conn.lastActive: the last request read) of a
// listener other than the inter-broker ones, as Kafka's processors of the
// unprotected listeners do (Selector.lowestPriorityChannel). Called with
// s.mu held (Conn.forceClose only closes the socket); returns the closed
// connections for logExcess.
func (s *Server) closeExcessLocked() (closed []*Conn) {
	limit := s.mu.limits.MaxConnections
	for limit > 0 && int32(len(s.mu.conns)-s.mu.evicted) > limit {
		var lru *Conn
		for c := range s.mu.conns {
			if !c.sec.InterBroker && !c.evicted && (lru == nil || c.lastActive.Load() < lru.lastActive.Load()) {
				lru = c
			}
		}
		if lru == nil {
			return closed // only inter-broker connections: nothing Kafka would close
		}
		lru.evicted = true
		s.mu.evicted++
		lru.forceClose()
		closed = append(closed, lru)
	}
	return closed
}

// ListenerLimits returns listener name's own limits in force
// (listener.name.<l>.max.connections, .max.connection.creation.rate).
func (s *Server) ListenerLimits(name string) (maxConnections, creationRate int32, err error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	for _, l := range s.mu.listeners {
		if l.name == name {
			return l.maxConns, l.rate.perSecond(), nil
		}
	}
	return 0, 0, fmt.Errorf("server: no listener %q", name)
}

// SetListenerLimits replaces listener name's own limits at run time.
func (s *Server) SetListenerLimits(name string, maxConnections, creationRate int32) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	for _, l := range s.mu.listeners {
		if l.name == name {
			l.maxConns = maxConnections
			l.rate.setRate(creationRate)
			s.slots.Broadcast()
			return nil
		}
	}
	return fmt.Errorf("server: no listener %q", name)
}

// rateLimiter is a token bucket holding up to one second of tokens, the
// shape of Kafka's one-second quota window; rate 0 means no limit. Safe for
// concurrent use.
type rateLimiter struct {
	mu     sync.Mutex
	rate   float64   // guarded by mu; tokens per second, 0: no limit
	tokens float64   // guarded by mu
	last   time.Time // guarded by mu
}

func newRateLimiter(perSecond int32) *rateLimiter {
	r := &rateLimiter{}
	r.setRate(perSecond)
	return r
}

// setRate changes the rate; the bucket starts full at the new rate (a
// raised or newly set limit grants its burst at once).
func (r *rateLimiter) setRate(perSecond int32) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if perSecond <= 0 || perSecond == 1<<31-1 {
		perSecond = 0
	}
	if float64(perSecond) == r.rate {
		return
	}
	r.rate, r.tokens, r.last = float64(perSecond), float64(perSecond), time.Now()
}

func (r *rateLimiter) perSecond() int32 {
	r.mu.Lock()
	defer r.mu.Unlock()
	return int32(r.rate)
}

// refillLocked adds the tokens earned since the last refill, up to one
// second's worth; r.mu held.
func (r *rateLimiter) refillLocked() {
	now := time.Now()
	r.tokens = min(r.rate, r.tokens+now.Sub(r.last).Seconds()*r.rate)
	r.last = now
}

// tryTake takes a token if there is one (0); otherwise it takes none and
// returns how long until one will be there.
func (r *rateLimiter) tryTake() time.Duration {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.rate == 0 {
		return 0
	}
	r.refillLocked()
	if r.tokens >= 1 {
		r.tokens--
		return 0
	}
	return max(time.Duration((1-r.tokens)/r.rate*float64(time.Second)), time.Millisecond)
}

// full reports whether the bucket holds its whole second of tokens.
func (r *rateLimiter) full() bool {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.tokens+time.Since(r.last).Seconds()*r.rate >= r.rate
}

// reserve takes one token and returns how long to wait before using it.
func (r *rateLimiter) reserve() time.Duration {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.rate == 0 {
		return 0
	}
	r.refillLocked()
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
// the server stops meanwhile. The limits are read afresh at every wake-up.
func (s *Server) waitConnectionSlot(l *listener) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	for !s.closing.Load() {
		full := l.maxConns > 0 && s.mu.perListener[l.name] >= l.maxConns
		if n := s.mu.limits.MaxConnections; !l.sec.InterBroker && n > 0 && int32(len(s.mu.conns)) >= n {
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
// the default. Zero or negative: unlimited. Called with s.mu held.
func (s *Server) perIPLimit(ip string) (limit int32, limited bool) {
	lim := &s.mu.limits
	if n, ok := lim.MaxConnectionsPerIPOverrides[ip]; ok {
		return n, true
	}
	if lim.MaxConnectionsPerIP > 0 {
		return lim.MaxConnectionsPerIP, true
	}
	return 0, lim.ZeroConnectionsPerIP
}
