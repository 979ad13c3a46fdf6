package server

import (
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

	"github.com/sirupsen/logrus"

	"samsa/broker/wire"
)

// maxRetainedWriteBuf bounds the response buffer a connection keeps between requests; a larger
// one (after a big response) is dropped so idle connections do not pin memory.
const maxRetainedWriteBuf = 1 << 20

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
	clientID atomic.Pointer[string]
	mu       struct {
		sync.Mutex
		idle   bool // guarded by mu; true while waiting for the next request
		closed bool // guarded by mu
	}
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

// NetConn returns the underlying connection (a *net.TCPConn for TCP listeners). Handlers use it
// only through a wire.ResponseWriterTo; reading from it or writing outside WriteResponse breaks
// the framing.
func (c *Conn) NetConn() net.Conn { return c.nc }

// Context returns the connection's context, cancelled when the connection closes.
func (c *Conn) Context() context.Context { return c.ctx }

// setIdle marks the connection as waiting for a request. It returns false when the server is
// shutting down, in which case the connection must close instead of reading.
func (c *Conn) setIdle(idle bool) bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	if idle && c.srv.closing.Load() || c.mu.closed {
		return false
	}
	c.mu.idle = idle
	return true
}

// closeIfIdle closes the connection if it is waiting for a request (graceful shutdown).
func (c *Conn) closeIfIdle() {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.mu.idle && !c.mu.closed {
		c.mu.closed = true
		c.nc.Close()
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

// serve is the connection goroutine: read a frame, parse, call the handler, write the
// response, loop. Owned by the Server (its wg); stops on any I/O or framing error, on a
// handler error, at shutdown, or when forceClose closes the socket.
func (c *Conn) serve() {
	s := c.srv
	defer s.wg.Done()
	defer s.removeConn(c)
	defer c.forceClose()
	defer func() {
		if r := recover(); r != nil {
			s.panics.Add(1)
			s.panicsC.Inc(1)
			c.log.WithField("panic", fmt.Sprint(r)).Errorf("handler panic; closing connection\n%s", debug.Stack())
		}
	}()
	var wbuf []byte
	for {
		if !c.setIdle(true) {
			return
		}
		if s.opts.IdleTimeout > 0 {
			c.nc.SetReadDeadline(time.Now().Add(s.opts.IdleTimeout))
		}
		frame, err := wire.ReadFrame(c.nc, s.opts.MaxRequestSize, nil)
		if !c.setIdle(false) {
			return
		}
		if err != nil {
			c.logReadError(err)
			return
		}
		start := time.Now()
		req, err := wire.ParseRequest(frame)
		if err != nil && !(errors.Is(err, wire.ErrUnsupportedVersion) && req != nil && req.Body != nil) {
			c.logRequest(req).WithError(err).Info("closing connection: undecodable request")
			return
		}
		c.clientID.Store(req.ClientID)
		resp, err := s.opts.Handler.Serve(c.ctx, c, req)
		if err != nil {
			c.logRequest(req).WithError(err).Info("closing connection: handler error")
			return
		}
		if resp != nil {
			if resp.Key() != req.Key {
				c.logRequest(req).Errorf("handler returned a response for api key %d; closing connection", resp.Key())
				return
			}
			if s.opts.IdleTimeout > 0 {
				c.nc.SetWriteDeadline(time.Now().Add(s.opts.IdleTimeout))
			}
			if w, ok := resp.(wire.ResponseWriterTo); ok {
				err = w.WriteResponse(c.nc, req)
			} else {
				wbuf = wire.AppendResponse(wbuf[:0], req, resp)
				_, err = c.nc.Write(wbuf)
				if cap(wbuf) > maxRetainedWriteBuf {
					wbuf = nil
				}
			}
			if err != nil {
				c.logRequest(req).WithError(err).Debug("closing connection: writing response")
				return
			}
		}
		s.metrics.observe(req.Key, time.Since(start))
	}
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
