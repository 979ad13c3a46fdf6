package server

import (
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"io"
	"net"
	"sync"
	"sync/atomic"
	"time"

	metrics "github.com/rcrowley/go-metrics"
	"github.com/sirupsen/logrus"

	"samsa/broker/wire"
)

// DefaultIdleTimeout is Kafka's default connections.max.idle.ms (10 minutes).
const DefaultIdleTimeout = 10 * time.Minute

// Accept backoff on temporary errors (S6.3), as net/http.
const (
	acceptBackoffMin = 5 * time.Millisecond
	acceptBackoffMax = time.Second
)

// ErrServerClosed is returned by Listen and Serve once Shutdown has started or Serve returned.
var ErrServerClosed = errors.New("server: closed")

// Options configure a Server. Handler is required; zero values of the others mean the default.
type Options struct {
	// Handler answers every decoded request.
	Handler Handler
	// Logger receives connection and listener logs; the server adds component=server.
	// Default: a logger that discards.
	Logger logrus.FieldLogger
	// Metrics receives the request metrics (see metrics.go). Default: a private registry.
	Metrics metrics.Registry
	// MaxRequestSize is socket.request.max.bytes. Default wire.DefaultMaxRequestSize (100 MiB).
	MaxRequestSize int32
	// IdleTimeout is connections.max.idle.ms: a connection that does not complete a request
	// within it, or whose peer does not take a response within it, is closed. Default
	// DefaultIdleTimeout; negative disables it.
	IdleTimeout time.Duration
	// The connection limits below are the initial ones: SetLimits replaces them at run time.
	//
	// MaxConnectionsPerIP is max.connections.per.ip: a new connection from an address that
	// already has this many is closed at once (Kafka's TooManyConnectionsException). Zero or
	// negative means no limit (Kafka's default is Int.MaxValue).
	MaxConnectionsPerIP int32
	// MaxConnectionsPerIPOverrides is max.connections.per.ip.overrides by IP
	// address (the broker resolves host names); it wins over
	// MaxConnectionsPerIP. ZeroConnectionsPerIP is Kafka's
	// max.connections.per.ip=0: addresses without an override get none.
	MaxConnectionsPerIPOverrides map[string]int32
	ZeroConnectionsPerIP         bool
	// MaxConnections is max.connections: above it the accept loops of every
	// listener but the inter-broker one wait for a connection to close.
	// Zero or negative: no limit.
	MaxConnections int32
	// MaxConnectionCreationRate is max.connection.creation.rate (KIP-612),
	// connections per second accepted broker-wide (the inter-broker listener
	// is exempt); the accept loops wait when it is exceeded. Zero or
	// negative: no limit.
	MaxConnectionCreationRate int32
	// SendBufferBytes and ReceiveBufferBytes are socket.send.buffer.bytes and
	// socket.receive.buffer.bytes (SO_SNDBUF / SO_RCVBUF). Zero or negative keeps the OS
	// default (Kafka's -1), which on Linux leaves buffer autotuning on.
	SendBufferBytes    int32
	ReceiveBufferBytes int32
	// MaxQueuedResponses and MaxQueuedBytes bound what one connection may owe (see Pending):
	// it reads the next request only while fewer responses than MaxQueuedResponses are queued
	// for its writer and their request frames total less than MaxQueuedBytes. Defaults
	// DefaultMaxQueuedResponses and DefaultMaxQueuedBytes; MaxQueuedResponses 1 handles one
	// request at a time (Kafka's behaviour).
	MaxQueuedResponses int
	MaxQueuedBytes     int
	// NetworkTime, when set, is told after each request how long the connection spent
	// decoding it and writing its answer (not the handler's time, not a Pending's wait):
	// the network-thread time Kafka's request_percentage quota records. It runs on the
	// connection's goroutines and must not block.
	NetworkTime func(c *Conn, req *wire.Request, d time.Duration)
}

// Server accepts connections on named listeners and serves Kafka requests with one goroutine
// per connection. All methods are safe for concurrent use.
type Server struct {
	opts    Options            // immutable after New
	log     logrus.FieldLogger // immutable after New
	metrics *requestMetrics    // immutable after New
	frames  *wire.FramePool    // immutable after New; internally synchronised
	conns   metrics.Gauge      // immutable after New
	panicsC metrics.Counter    // immutable after New
	panics  atomic.Int64       // atomic
	closing atomic.Bool        // atomic; set once by Shutdown or when Serve's ctx ends
	connSeq atomic.Int64       // atomic
	wg      sync.WaitGroup     // accept loops and connection goroutines
	quit    chan struct{}      // closed when Shutdown starts or Serve's ctx ends
	rate    *rateLimiter       // immutable after New (its rate changes with SetLimits)
	data    *plane             // immutable after New; the data plane's metrics
	control *plane             // immutable after New; the control plane's (plane_metrics.go)
	slots   *sync.Cond         // on mu; signalled when a connection closes or the server stops
	once    sync.Once          // closes quit
	mu      struct {
		sync.Mutex
		listeners   []*listener        // guarded by mu
		conns       map[*Conn]struct{} // guarded by mu
		perIP       map[string]int32   // guarded by mu; open connections by remote IP
		perListener map[string]int32   // guarded by mu; open connections by listener name
		limits      Limits             // guarded by mu; the broker-wide limits (SetLimits)
		evicted     int                // guarded by mu; connections closing for max.connections (Conn.evicted)
		// The per-address connection creation rate quotas (ip_rate.go).
		ipRateDefault int32                    // guarded by mu; negative: none
		ipRates       map[string]int32         // guarded by mu; by IP address
		ipBuckets     map[string]*rateLimiter  // guarded by mu
		throttled     map[net.Conn]*time.Timer // guarded by mu; held before their close
		ctx           context.Context          // guarded by mu; non-nil once Serve started
		cancel        context.CancelFunc       // guarded by mu
		serving       bool                     // guarded by mu
	}
}

// listener is one named listener; immutable after Listen but for its limits.
type listener struct {
	name  string
	ln    net.Listener
	sec   *Security     // never nil; the zero Security is PLAINTEXT
	rate  *rateLimiter  // the listener's creation rate (its rate changes with SetListenerLimits)
	count metrics.Gauge // the listener's open connections (updated under Server.mu)
	// maxConns is listener.name.<l>.max.connections, 0: none; guarded by
	// Server.mu (SetListenerLimits).
	maxConns int32
	// blocked is the nanoseconds the accept loop waited on the limits
	// (AcceptorBlockedPercent, read through blockedWindow).
	blocked       atomic.Int64
	blockedWindow idleWindow
}

// New returns a Server that is not yet listening.
func New(opts Options) (*Server, error) {
	if opts.Handler == nil {
		return nil, errors.New("server: nil Handler")
	}
	if opts.Logger == nil {
		l := logrus.New()
		l.SetOutput(io.Discard)
		opts.Logger = l
	}
	if opts.Metrics == nil {
		opts.Metrics = metrics.NewRegistry()
	}
	if opts.MaxRequestSize <= 0 {
		opts.MaxRequestSize = wire.DefaultMaxRequestSize
	}
	if opts.IdleTimeout == 0 {
		opts.IdleTimeout = DefaultIdleTimeout
	}
	if opts.MaxQueuedResponses <= 0 {
		opts.MaxQueuedResponses = DefaultMaxQueuedResponses
	}
	if opts.MaxQueuedBytes <= 0 {
		opts.MaxQueuedBytes = DefaultMaxQueuedBytes
	}
	s := &Server{
		opts:    opts,
		log:     opts.Logger.WithField("component", "server"),
		metrics: newRequestMetrics(opts.Metrics),
		conns:   metrics.GetOrRegisterGauge(MetricConnectionCount, opts.Metrics),
		panicsC: metrics.GetOrRegisterCounter(MetricPanics, opts.Metrics),
		quit:    make(chan struct{}),
		frames:  wire.NewFramePool(),
	}
	s.mu.conns = make(map[*Conn]struct{})
	s.mu.perIP = make(map[string]int32)
	s.mu.perListener = make(map[string]int32)
	s.mu.ipBuckets = make(map[string]*rateLimiter)
	s.mu.ipRateDefault = -1
	s.mu.throttled = make(map[net.Conn]*time.Timer)
	s.slots = sync.NewCond(&s.mu.Mutex)
	s.rate = newRateLimiter(opts.MaxConnectionCreationRate)
	s.mu.limits = limitsOf(&opts)
	s.data, s.control = newPlanes(opts.Metrics)
	return s, nil
}

// Listen binds a TCP listener named name (Kafka's listener name, for example "PLAINTEXT") on
// addr ("host:port"; port 0 picks a free port) and returns the bound address. A listener added
// after Serve has started accepts at once; before, it accepts when Serve starts.
func (s *Server) Listen(name, addr string) (net.Addr, error) {
	if s.closing.Load() {
		return nil, ErrServerClosed
	}
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return nil, fmt.Errorf("server: listener %s on %s: %w", name, addr, err)
	}
	return s.addListener(name, ln)
}

// addListener registers ln under name and starts accepting on it if Serve is running.
func (s *Server) addListener(name string, ln net.Listener) (net.Addr, error) {
	return s.addSecureListener(name, ln, Security{})
}

// addSecureListener registers ln under name with its security and starts
// accepting on it if Serve is running.
func (s *Server) addSecureListener(name string, ln net.Listener, sec Security) (net.Addr, error) {
	l := &listener{name: name, ln: ln, sec: &sec, rate: newRateLimiter(sec.MaxConnectionCreationRate),
		count:    metrics.GetOrRegisterGauge(MetricListenerConnectionCount+name, s.opts.Metrics),
		maxConns: sec.MaxConnections, blockedWindow: idleWindow{at: time.Now(), last: 1}}
	s.registerAcceptorBlocked(l)
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.closing.Load() {
		ln.Close()
		return nil, ErrServerClosed
	}
	s.mu.listeners = append(s.mu.listeners, l)
	if sec.ControlPlane {
		s.control.register(s.opts.Metrics, ControlPlaneName)
	}
	if s.mu.serving {
		s.startAcceptLocked(l)
	}
	s.log.WithFields(logrus.Fields{"listener": name, "addr": ln.Addr().String()}).Info("listening")
	return ln.Addr(), nil
}

// Serve accepts on every listener and blocks until Shutdown has finished or ctx is done. When
// ctx ends first, Serve closes the listeners and every connection at once (cancelling the
// contexts handlers run under) and waits for all connection goroutines. Request contexts
// derive from ctx. Serve returns nil after a graceful Shutdown, ctx.Err() when ctx ended it,
// and ErrServerClosed if called twice or after Shutdown.
func (s *Server) Serve(ctx context.Context) error {
	s.mu.Lock()
	if s.mu.serving || s.closing.Load() {
		s.mu.Unlock()
		return ErrServerClosed
	}
	s.mu.serving = true
	s.mu.ctx, s.mu.cancel = context.WithCancel(ctx)
	for _, l := range s.mu.listeners {
		s.startAcceptLocked(l)
	}
	cancel := s.mu.cancel
	s.mu.Unlock()
	defer cancel()

	select {
	case <-s.quit: // Shutdown owns the wait
		s.wg.Wait()
		return nil
	case <-ctx.Done():
	}
	s.stopAccepting()
	s.forceClose()
	s.wg.Wait()
	return ctx.Err()
}

// Shutdown stops the server gracefully: it closes the listeners, closes idle connections at
// once, lets each busy connection finish its current request and write the response, then
// closes it. When ctx ends first, it force-closes the remaining connections, cancels their
// contexts, waits for their goroutines and returns ctx.Err(). Shutdown is idempotent; calls
// after the first wait like the first.
func (s *Server) Shutdown(ctx context.Context) error {
	s.stopAccepting()
	s.mu.Lock()
	for c := range s.mu.conns {
		c.closeIfIdle()
	}
	s.mu.Unlock()

	done := make(chan struct{})
	go func() { s.wg.Wait(); close(done) }()
	select {
	case <-done:
		return nil
	case <-ctx.Done():
	}
	s.forceClose()
	<-done
	return ctx.Err()
}

// Panics returns how many handler panics have been recovered (each closed its connection).
func (s *Server) Panics() int64 { return s.panics.Load() }

// Addrs returns the bound address of each listener by name.
func (s *Server) Addrs() map[string]net.Addr {
	s.mu.Lock()
	defer s.mu.Unlock()
	m := make(map[string]net.Addr, len(s.mu.listeners))
	for _, l := range s.mu.listeners {
		m[l.name] = l.ln.Addr()
	}
	return m
}

// stopAccepting marks the server closing and closes every listener; accept loops then return.
func (s *Server) stopAccepting() {
	// Under mu, so that a concurrent Listen or startConn either sees closing or has finished
	// its wg.Add before anyone starts waiting on wg.
	s.mu.Lock()
	defer s.mu.Unlock()
	s.closing.Store(true)
	s.once.Do(func() { close(s.quit) })
	s.slots.Broadcast() // accept loops waiting for a slot return
	for _, l := range s.mu.listeners {
		l.ln.Close()
	}
	s.closeThrottledLocked()
}

// forceClose closes every connection and cancels the request contexts.
func (s *Server) forceClose() {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.mu.cancel != nil {
		s.mu.cancel()
	}
	for c := range s.mu.conns {
		c.forceClose()
	}
}

func (s *Server) startAcceptLocked(l *listener) {
	s.wg.Add(1)
	go s.acceptLoop(s.mu.ctx, l)
}

// acceptLoop accepts on l until it is closed, backing off from 5 ms to 1 s on other errors
// (for example EMFILE), as net/http does.
func (s *Server) acceptLoop(ctx context.Context, l *listener) {
	defer s.wg.Done()
	var backoff time.Duration
	for {
		wait := time.Now()
		if !s.waitConnectionSlot(l) || !s.waitCreationRate(ctx, l) {
			return
		}
		l.blocked.Add(int64(time.Since(wait)))
		nc, err := l.ln.Accept()
		if err != nil {
			if s.closing.Load() || errors.Is(err, net.ErrClosed) {
				return
			}
			backoff = min(max(2*backoff, acceptBackoffMin), acceptBackoffMax)
			s.log.WithError(err).WithField("listener", l.name).Warnf("accept failed; retrying in %v", backoff)
			t := time.NewTimer(backoff)
			select {
			case <-t.C:
			case <-s.quit:
				t.Stop()
				return
			case <-ctx.Done():
				t.Stop()
				return
			}
			continue
		}
		backoff = 0
		s.startConn(ctx, l, nc)
	}
}

// startConn registers nc and starts its goroutine, or closes it when the server is closing.
func (s *Server) startConn(ctx context.Context, l *listener, nc net.Conn) {
	if tc, ok := nc.(*net.TCPConn); ok {
		if n := s.opts.SendBufferBytes; n > 0 {
			tc.SetWriteBuffer(int(n))
		}
		if n := s.opts.ReceiveBufferBytes; n > 0 {
			tc.SetReadBuffer(int(n))
		}
	}
	if l.sec.TLS != nil {
		nc = tls.Server(nc, l.sec.TLS)
	}
	c := newConn(ctx, s, l.name, nc)
	c.sec = l.sec
	c.count = l.count
	c.plane = s.data
	if l.sec.ControlPlane {
		c.plane = s.control
	}
	s.mu.Lock()
	if why, quiet := s.refuseLocked(c); why != "" {
		s.mu.Unlock()
		if quiet {
			c.log.Debug(why)
		} else {
			c.log.Info(why)
		}
		c.cancel()
		return
	}
	s.mu.perIP[c.ip]++
	s.mu.perListener[l.name]++
	l.count.Update(int64(s.mu.perListener[l.name]))
	s.mu.conns[c] = struct{}{}
	s.conns.Update(int64(len(s.mu.conns)))
	var closed []*Conn
	if l.sec.InterBroker {
		closed = s.closeExcessLocked() // the inter-broker listener does not wait for a slot
	}
	limit := s.mu.limits.MaxConnections
	s.wg.Add(1)
	s.mu.Unlock()
	logExcess(closed, limit)
	go c.serve()
}

// refuseLocked closes c's socket, or holds it for its throttled close,
// when the server is closing or c's address is over its
// connection_creation_rate quota or max.connections.per.ip, and says why
// (empty: c may be served); quiet ones are logged at debug level (a
// throttled client reconnecting in a loop, as Kafka logs it). Called with
// s.mu held.
func (s *Server) refuseLocked(c *Conn) (why string, quiet bool) {
	if s.closing.Load() {
		c.nc.Close()
		return "closing connection: the server is stopping", true
	}
	if d := s.ipThrottleLocked(c.ip); d > 0 {
		s.throttleCloseLocked(c.nc, d)
		return fmt.Sprintf("holding then closing connection: %s is over its connection_creation_rate quota for %v", c.ip, d), true
	}
	if limit, limited := s.perIPLimit(c.ip); limited && s.mu.perIP[c.ip] >= limit {
		c.nc.Close()
		return fmt.Sprintf("closing connection: %d connections from %s (max.connections.per.ip)", limit, c.ip), false
	}
	return "", false
}

func (s *Server) removeConn(c *Conn) {
	s.mu.Lock()
	delete(s.mu.conns, c)
	if s.mu.perIP[c.ip]--; s.mu.perIP[c.ip] <= 0 {
		delete(s.mu.perIP, c.ip)
	}
	if c.evicted {
		s.mu.evicted--
	}
	s.mu.perListener[c.listener]--
	c.count.Update(int64(s.mu.perListener[c.listener]))
	s.slots.Broadcast()
	s.conns.Update(int64(len(s.mu.conns)))
	s.mu.Unlock()
}
