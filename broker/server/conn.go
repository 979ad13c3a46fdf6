package server

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"os"
	"runtime/debug"
	"strconv"
	"sync"
	"sync/atomic"
	"time"

	metrics "github.com/rcrowley/go-metrics"
	"github.com/sirupsen/logrus"
	"github.com/twmb/franz-go/pkg/kmsg"

	"samsa/broker/principal"
	"samsa/broker/wire"
)

// maxRetainedWriteBuf bounds the response buffer a connection keeps between requests; a larger
// one (after a big response) is dropped so idle connections do not pin memory.
const maxRetainedWriteBuf = 1 << 20

// Api keys whose request frames the server reuses once the response is done (see Handler).
const (
	produceKey = 0
	fetchKey   = 1
)

// connReadBuffer is the size of a connection's read buffer: small requests (and the size
// prefix of every request) arrive with one read syscall, often several pipelined ones at once.
const connReadBuffer = 8 << 10

// Conn is one client connection, passed to every Handler call on it. Its methods are safe for
// concurrent use.
type Conn struct {
	srv      *Server            // immutable
	nc       net.Conn           // immutable
	listener string             // immutable
	id       string             // immutable
	ip       string             // immutable; remote IP, the max.connections.per.ip key
	ctx      context.Context    // immutable; cancelled when the connection closes
	cancel   context.CancelFunc // immutable
	log      logrus.FieldLogger // immutable
	br       *bufio.Reader      // reader goroutine only
	sec      *Security          // immutable; the listener's security
	count    metrics.Gauge      // immutable; the listener's connection count
	plane    *plane             // immutable; the request plane's metrics
	// lastActive is when the latest request was read (UnixNano; at first, when the connection
	// was accepted): the least recently active one is closed above max.connections.
	lastActive atomic.Int64
	// parked is what the Handler reported with Parked for the request being served.
	parked   atomic.Int64
	evicted  bool      // guarded by Server.mu; being closed for max.connections
	sasl     saslState // reader goroutine only; used on SASL listeners
	clientID atomic.Pointer[string]
	// principal is who the connection authenticated as (TLS certificate, SASL); nil means
	// User:ANONYMOUS. Set by the authentication layer, read by every request's handler.
	principal atomic.Pointer[principal.Principal]
	// mutedUntil is the wall time (UnixNano) before which no request is read (Mute); 0 or
	// past: not muted. One atomic load per request when nobody mutes.
	mutedUntil atomic.Int64
	// out carries queued responses from the reader goroutine to the writer goroutine, in
	// request order. Created with the writer on the first queued response; written and closed
	// by the reader goroutine only.
	out        chan *queued
	writerDone chan struct{} // closed when the writer goroutine returns
	drained    chan struct{} // buffer 1; the writer finished a queued response
	mu         struct {
		sync.Mutex
		reading     bool // guarded by mu; true while waiting for the next request
		closed      bool // guarded by mu
		queued      int  // guarded by mu; responses handed to the writer and not yet finished
		queuedBytes int  // guarded by mu; request frame bytes of those responses
	}
}

// queued is a response waiting for the writer goroutine.
type queued struct {
	req    *wire.Request
	resp   kmsg.Response // possibly a Pending
	start  time.Time     // when the request frame had been read
	decode time.Duration // parse time
}

func newConn(ctx context.Context, s *Server, listenerName string, nc net.Conn) *Conn {
	c := &Conn{srv: s, nc: nc, listener: listenerName}
	// Kafka's connection id: local-remote-index.
	c.id = nc.LocalAddr().String() + "-" + nc.RemoteAddr().String() + "-" + strconv.FormatInt(s.connSeq.Add(1), 10)
	c.ip = nc.RemoteAddr().String()
	if host, _, err := net.SplitHostPort(c.ip); err == nil {
		c.ip = host
	}
	c.ctx, c.cancel = context.WithCancel(ctx)
	c.log = s.log.WithFields(logrus.Fields{"peer": nc.RemoteAddr().String(), "listener": listenerName})
	c.drained = make(chan struct{}, 1)
	c.lastActive.Store(time.Now().UnixNano())
	return c
}

// ID returns Kafka's connection id, "<local addr>-<remote addr>-<sequence>".
func (c *Conn) ID() string { return c.id }

// RemoteAddr returns the peer's address.
func (c *Conn) RemoteAddr() net.Addr { return c.nc.RemoteAddr() }

// LocalAddr returns the local (listener-side) address.
func (c *Conn) LocalAddr() net.Addr { return c.nc.LocalAddr() }

// ListenerName returns the name the connection's listener was registered with.
func (c *Conn) ListenerName() string { return c.listener }

// ClientID returns the client_id of the latest request read on the connection ("" if null).
func (c *Conn) ClientID() string {
	if p := c.clientID.Load(); p != nil {
		return *p
	}
	return ""
}

// Principal returns who the connection authenticated as; User:ANONYMOUS until something
// authenticates it (a PLAINTEXT listener never does).
func (c *Conn) Principal() principal.Principal {
	if p := c.principal.Load(); p != nil {
		return *p
	}
	return principal.Anonymous
}

// SetPrincipal records who the connection authenticated as. The authentication layer calls it
// (after a TLS handshake, or a SASL exchange that succeeded); later requests see it.
func (c *Conn) SetPrincipal(p principal.Principal) { c.principal.Store(&p) }

// Parked tells the server that the handler of the request being served spent d of its Serve
// call waiting (a long-poll fetch in a purgatory, a group rebalance): time Kafka spends off its
// handler threads, left out of RequestHandlerAvgIdlePercent. Call it from Serve.
func (c *Conn) Parked(d time.Duration) { c.parked.Add(int64(d)) }

// NetConn returns the underlying connection (a *net.TCPConn for TCP listeners). Handlers use it
// only through a wire.ResponseWriterTo; reading from it or writing outside WriteResponse breaks
// the framing.
func (c *Conn) NetConn() net.Conn { return c.nc }

// Context returns the connection's context, cancelled when the connection closes.
func (c *Conn) Context() context.Context { return c.ctx }

// Mute stops the connection from reading requests for d from now: Kafka's channel mute on a
// client quota violation (KIP-219). Whatever the current request answers is still written at
// once (and responses already queued are still written); the next request is read only once
// the mute has ended. A longer mute already in force is kept. Safe to call from a Handler.
func (c *Conn) Mute(d time.Duration) {
	if d <= 0 {
		return
	}
	until := time.Now().Add(d).UnixNano()
	for {
		old := c.mutedUntil.Load()
		if old >= until || c.mutedUntil.CompareAndSwap(old, until) {
			return
		}
	}
}

// waitUnmuted blocks the reader goroutine until the connection's mute (if any) has ended. It
// returns false when the connection closes meanwhile (graceful shutdown closes a muted
// connection that owes nothing, as an idle one).
func (c *Conn) waitUnmuted() bool {
	until := c.mutedUntil.Load()
	if until == 0 {
		return true
	}
	d := time.Until(time.Unix(0, until))
	if d <= 0 {
		return true
	}
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
		return true
	case <-c.ctx.Done():
		return false
	}
}

// setReading marks the connection as waiting for a request (or not). It returns false when the
// connection is closed or, for reading == true, when the server is shutting down, in which
// case the connection must stop reading.
func (c *Conn) setReading(reading bool) bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	if reading && c.srv.closing.Load() || c.mu.closed {
		return false
	}
	c.mu.reading = reading
	return true
}

// closeIfIdle closes the connection if it is waiting for a request and owes no response
// (graceful shutdown).
func (c *Conn) closeIfIdle() {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.closeIfIdleLocked()
}

func (c *Conn) closeIfIdleLocked() {
	if c.mu.reading && c.mu.queued == 0 && !c.mu.closed {
		c.mu.closed = true
		c.nc.Close()
		c.cancel() // ends a mute wait (waitUnmuted); no handler runs while reading
	}
}

// forceClose closes the connection whatever it is doing and cancels its context.
func (c *Conn) forceClose() {
	c.mu.Lock()
	if !c.mu.closed {
		c.mu.closed = true
		c.nc.Close()
	}
	c.mu.Unlock()
	c.cancel()
}

// serve is the connection's reader goroutine, owned by the Server (its wg). It reads, parses
// and handles requests one at a time, in order, and writes each response itself when nothing
// is queued before it; otherwise (or when the response is a Pending) it queues the response
// for the writer goroutine (writer.go). Only a Produce is handled while responses are queued;
// any other request first waits until the queue has drained. It stops on an I/O or framing error, a handler error,
// at shutdown, or when forceClose closes the socket; before returning it lets the writer
// finish (write every queued response, or drop them once the connection is force-closed).
func (c *Conn) serve() {
	s := c.srv
	defer s.wg.Done()
	defer s.removeConn(c)
	defer c.forceClose()
	defer c.stopWriter()
	defer func() {
		if r := recover(); r != nil {
			c.panicked(r)
		}
	}()
	if !c.tlsHandshake() {
		return
	}
	c.br = bufio.NewReaderSize(c.nc, connReadBuffer)
	c.readLoop()
}

// readLoop runs until the connection must stop reading; see serve.
func (c *Conn) readLoop() {
	s := c.srv
	var wbuf []byte
	for {
		if !c.waitForRoom() || !c.setReading(true) || !c.waitUnmuted() {
			return
		}
		if s.opts.IdleTimeout > 0 {
			c.nc.SetReadDeadline(time.Now().Add(s.opts.IdleTimeout))
		}
		frame, err := wire.ReadFramePooled(c.br, c.maxFrame(), s.frames, reusableFrame)
		if !c.setReading(false) {
			return
		}
		if err != nil {
			c.logReadError(err)
			c.forceClose()
			return
		}
		start := time.Now()
		c.lastActive.Store(start.UnixNano())
		if c.sasl.raw {
			if !c.saslRaw(frame) {
				return
			}
			continue
		}
		req, err := wire.ParseRequest(frame)
		if err != nil && !(errors.Is(err, wire.ErrUnsupportedVersion) && req != nil && req.Body != nil) {
			c.logRequest(req).WithError(err).Info("closing connection: undecodable request")
			return
		}
		decode := time.Since(start)
		c.clientID.Store(req.ClientID)
		if c.sec.SASL != nil {
			var handled, ok bool
			if c.saslPending() {
				handled, ok = c.saslRequest(req, &wbuf)
			} else {
				handled, ok = c.saslAfterAuth(req, &wbuf)
			}
			if !ok {
				c.forceClose()
				return
			}
			if handled {
				continue
			}
		}
		if req.Key != produceKey && !c.waitDrainedQueued() {
			return
		}
		hstart := time.Now()
		resp, err := s.opts.Handler.Serve(c.ctx, c, req)
		c.plane.handlerBusy.Add(int64(time.Since(hstart)) - c.parked.Swap(0))
		if err != nil {
			c.logRequest(req).WithError(err).Info("closing connection: handler error")
			return
		}
		if resp == nil {
			s.metrics.observe(req.Key, time.Since(start))
			c.networkTime(req, decode, time.Time{})
			c.recycle(req)
			continue
		}
		if resp.Key() != req.Key {
			c.logRequest(req).Errorf("handler returned a response for api key %d; closing connection", resp.Key())
			return
		}
		if _, pending := resp.(Pending); pending || !c.queueEmpty() {
			c.enqueue(&queued{req: req, resp: resp, start: start, decode: decode})
			continue
		}
		wstart := time.Now()
		if err := c.writeResponse(req, resp, &wbuf); err != nil {
			c.logRequest(req).WithError(err).Debug("closing connection: writing response")
			c.forceClose()
			return
		}
		s.metrics.observe(req.Key, time.Since(start))
		c.networkTime(req, decode, wstart)
		c.recycle(req)
	}
}

// networkTime reports a request's decode time plus, when wstart is set, the time since its
// write began to the plane's metrics and Options.NetworkTime.
func (c *Conn) networkTime(req *wire.Request, decode time.Duration, wstart time.Time) {
	if !wstart.IsZero() {
		decode += time.Since(wstart)
	}
	c.plane.networkBusy.Add(int64(decode))
	if c.srv.opts.NetworkTime != nil {
		c.srv.opts.NetworkTime(c, req, decode)
	}
}

// writeResponse writes resp for req to the socket, encoding it into *wbuf unless it writes
// itself (wire.ResponseWriterTo).
func (c *Conn) writeResponse(req *wire.Request, resp kmsg.Response, wbuf *[]byte) error {
	if c.srv.opts.IdleTimeout > 0 {
		c.nc.SetWriteDeadline(time.Now().Add(c.srv.opts.IdleTimeout))
	}
	if w, ok := resp.(wire.ResponseWriterTo); ok {
		return w.WriteResponse(c.nc, req)
	}
	*wbuf = wire.AppendResponse((*wbuf)[:0], req, resp)
	_, err := c.nc.Write(*wbuf)
	if cap(*wbuf) > maxRetainedWriteBuf {
		*wbuf = nil
	}
	return err
}

// recycle returns req's frame to the server's pool when its api key's handlers keep no request
// bytes beyond the response (Produce and Fetch; see Handler). Call it once the response has
// been written or dropped.
func (c *Conn) recycle(req *wire.Request) {
	if reusableFrame(req.Key) {
		c.srv.frames.Put(req.Frame)
	}
}

// reusableFrame reports whether key's request frames come from (and go back to) the pool.
func reusableFrame(key int16) bool { return key == produceKey || key == fetchKey }

// panicked records a recovered handler panic (broker.panics) and closes the connection.
func (c *Conn) panicked(r any) {
	c.srv.panics.Add(1)
	c.srv.panicsC.Inc(1)
	c.log.WithField("panic", fmt.Sprint(r)).Errorf("handler panic; closing connection\n%s", debug.Stack())
	c.forceClose()
}

func (c *Conn) logRequest(req *wire.Request) logrus.FieldLogger {
	if req == nil {
		return c.log
	}
	return c.log.WithFields(logrus.Fields{
		"api":         req.APIName(),
		"api_version": req.Version,
		"corr":        req.Correlation,
		"client_id":   req.ClientIDString(),
	})
}

// logReadError logs why reading a request failed: at DEBUG for an ordinary close or idle
// timeout, at INFO for a framing error (oversized or negative frame, torn frame).
func (c *Conn) logReadError(err error) {
	switch {
	case errors.Is(err, io.EOF), errors.Is(err, net.ErrClosed):
		c.log.Debug("connection closed")
	case errors.Is(err, os.ErrDeadlineExceeded):
		c.log.Debug("closing idle connection (connections.max.idle.ms)")
	case errors.Is(err, wire.ErrFrameTooLarge), errors.Is(err, wire.ErrBadFrame):
		c.log.WithError(err).Info("closing connection: bad frame")
	default:
		c.log.WithError(err).Debug("closing connection: read failed")
	}
}
