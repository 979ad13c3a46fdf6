package peer

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"net"
	"sync"
	"time"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"

	"samsa/broker/wire"
)

// Errors returned by Client. Network and decoding errors are returned wrapped, prefixed "peer:".
var (
	// ErrClosed: the Client was closed.
	ErrClosed = errors.New("peer: client closed")
	// ErrUnsupported: the remote broker does not support the api key, or no version in common
	// with kmsg, WithMaxVersions and the caller's pin.
	ErrUnsupported = errors.New("peer: version not supported by remote broker")
)

// apiVersionsMax is the ApiVersions version we send first (Kafka 2.8's highest).
const apiVersionsMax = 3

// readBufferSize is the size of a connection's read buffer: a whole small response (a parked
// replica fetch answering with one batch, a produce ack) arrives in one read system call
// instead of two (size prefix, then body); larger bodies bypass the buffer.
const readBufferSize = 16 << 10

// versionRange is the remote broker's supported range for one api key.
type versionRange struct{ min, max int16 }

// Client is a connection to one broker that sends one request at a time (callers that need
// parallelism use one Client per destination, as Kafka's controller and fetcher threads do).
// It negotiates versions with ApiVersions on every (re)connect. After any I/O or decoding
// failure it drops the connection; the next Request reconnects, waiting out a backoff that
// doubles from 50 ms to 1 s (reconnect.backoff.ms / reconnect.backoff.max.ms) while attempts
// keep failing. Requests are not retried: the caller decides.
//
// All methods are safe for concurrent use; concurrent Requests queue on the client's mutex.
type Client struct {
	addr     string             // immutable
	clientID *string            // immutable; a pointer so encoding a header does not copy it to the heap
	opts     options            // immutable
	closeCtx context.Context    // immutable; done once Close is called
	closeFn  context.CancelFunc // immutable
	intr     interrupter        // interrupts the in-flight call (interrupt.go)
	mu       struct {
		sync.Mutex
		conn     net.Conn               // guarded by mu; nil when disconnected
		br       *bufio.Reader          // guarded by mu; reads conn
		versions map[int16]versionRange // guarded by mu; from the current connection
		corr     int32                  // guarded by mu
		backoff  time.Duration          // guarded by mu; 0 after a successful connect
		nextDial time.Time              // guarded by mu; earliest next connection attempt
		wbuf     []byte                 // guarded by mu; the last request frame, reused
	}
}

// New returns a Client for addr that connects on its first Request.
func New(addr, clientID string, opts ...Option) *Client {
	c := &Client{addr: addr, clientID: &clientID, opts: buildOptions(opts)}
	c.closeCtx, c.closeFn = context.WithCancel(context.Background())
	c.intr.init()
	return c
}

// Dial returns a Client connected to addr, with versions negotiated; it fails if the first
// connection attempt fails. Later failures reconnect lazily.
func Dial(ctx context.Context, addr, clientID string, opts ...Option) (*Client, error) {
	c := New(addr, clientID, opts...)
	c.mu.Lock()
	defer c.mu.Unlock()
	if err := c.connectLocked(ctx); err != nil {
		return nil, err
	}
	return c, nil
}

// Addr returns the address the client connects to.
func (c *Client) Addr() string { return c.addr }

// Request sends req at the highest version that kmsg, the remote broker and WithMaxVersions
// all support (it calls req.SetVersion) and returns the decoded response. A Produce with acks=0
// returns (nil, nil) without waiting: the broker sends no response. ctx bounds the whole call
// (connecting, writing, reading); on ctx's end the connection is dropped.
func (c *Client) Request(ctx context.Context, req kmsg.Request) (kmsg.Response, error) {
	return c.do(ctx, req, false)
}

// RequestPinned sends req at req.GetVersion() as set by the caller; it returns ErrUnsupported
// if the remote broker's range does not contain it.
func (c *Client) RequestPinned(ctx context.Context, req kmsg.Request) (kmsg.Response, error) {
	return c.do(ctx, req, true)
}

// Versions returns the remote broker's supported range for key from the current connection's
// negotiation, connecting first if needed.
func (c *Client) Versions(ctx context.Context, key int16) (minVersion, maxVersion int16, err error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if err := c.ensureLocked(ctx); err != nil {
		return 0, 0, err
	}
	r, ok := c.mu.versions[key]
	if !ok {
		return 0, 0, fmt.Errorf("%w: api key %d", ErrUnsupported, key)
	}
	return r.min, r.max, nil
}

// Close closes the connection and makes every later call return ErrClosed. An in-flight
// Request is interrupted.
func (c *Client) Close() error {
	c.closeFn()
	c.intr.interrupt()
	c.mu.Lock()
	defer c.mu.Unlock()
	c.dropLocked()
	c.intr.release()
	return nil
}

func (c *Client) do(ctx context.Context, req kmsg.Request, pinned bool) (kmsg.Response, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if err := c.prepareLocked(ctx, req, pinned); err != nil {
		return nil, err
	}
	// A fresh frame per call: the response's byte fields alias it and the caller keeps them.
	buf, corr, err := c.roundTripLocked(ctx, req, nil)
	if err != nil {
		c.dropLocked()
		return nil, err
	}
	if buf == nil {
		return nil, nil // acks=0
	}
	resp, err := wire.ParseResponse(buf, req, corr)
	if err != nil {
		c.dropLocked()
		return nil, fmt.Errorf("peer: %s from %s: %w", kmsg.NameForKey(req.Key()), c.addr, err)
	}
	return resp, nil
}

// prepareLocked connects if needed and picks (or checks) req's version.
func (c *Client) prepareLocked(ctx context.Context, req kmsg.Request, pinned bool) error {
	if err := c.ensureLocked(ctx); err != nil {
		return err
	}
	r, ok := c.mu.versions[req.Key()]
	if !ok {
		return fmt.Errorf("%w: %s", ErrUnsupported, kmsg.NameForKey(req.Key()))
	}
	if pinned {
		if v := req.GetVersion(); v < r.min || v > r.max || v > req.MaxVersion() {
			return fmt.Errorf("%w: %s v%d (remote v%d-v%d)", ErrUnsupported, kmsg.NameForKey(req.Key()), v, r.min, r.max)
		}
	} else {
		v := min(r.max, req.MaxVersion())
		if limit, ok := c.opts.maxVersions[req.Key()]; ok {
			v = min(v, limit)
		}
		if v < r.min {
			return fmt.Errorf("%w: %s (remote v%d-v%d, ours up to v%d)", ErrUnsupported, kmsg.NameForKey(req.Key()), r.min, r.max, v)
		}
		req.SetVersion(v)
	}
	return nil
}

// ensureLocked connects if there is no connection.
func (c *Client) ensureLocked(ctx context.Context) error {
	if c.closeCtx.Err() != nil {
		return ErrClosed
	}
	if c.mu.conn != nil {
		return nil
	}
	if wait := time.Until(c.mu.nextDial); wait > 0 {
		t := time.NewTimer(wait)
		select {
		case <-t.C:
		case <-ctx.Done():
			t.Stop()
			return fmt.Errorf("peer: waiting to reconnect to %s: %w", c.addr, ctx.Err())
		case <-c.closeCtx.Done():
			t.Stop()
			return ErrClosed
		}
	}
	return c.connectLocked(ctx)
}

// connectLocked dials and negotiates versions; on failure it schedules the next attempt.
func (c *Client) connectLocked(ctx context.Context) error {
	err := c.dialLocked(ctx)
	if err == nil {
		c.mu.backoff = 0
		c.mu.nextDial = time.Time{}
		return nil
	}
	c.dropLocked()
	c.mu.backoff = min(max(2*c.mu.backoff, c.opts.backoff), c.opts.backoffMax)
	// ±20% jitter, as Kafka's ExponentialBackoff, so brokers do not reconnect in lockstep.
	jitter := time.Duration((rand.Float64()*0.4 - 0.2) * float64(c.mu.backoff))
	c.mu.nextDial = time.Now().Add(c.mu.backoff + jitter)
	c.opts.log.WithError(err).WithField("peer", c.addr).Debug("connection attempt failed")
	return err
}

func (c *Client) dialLocked(ctx context.Context) error {
	dctx, cancel := context.WithTimeout(ctx, c.opts.dialTimeout)
	defer cancel()
	stop := context.AfterFunc(c.closeCtx, cancel)
	defer stop()
	conn, err := c.opts.dial(dctx, "tcp", c.addr)
	if err != nil {
		if c.closeCtx.Err() != nil {
			return ErrClosed
		}
		return fmt.Errorf("peer: dial %s: %w", c.addr, err)
	}
	c.mu.conn = conn
	c.mu.versions = nil
	if c.mu.br == nil {
		c.mu.br = bufio.NewReaderSize(conn, readBufferSize)
	} else {
		c.mu.br.Reset(conn)
	}
	if err := c.negotiateLocked(ctx); err != nil {
		return err
	}
	if c.opts.sasl != nil {
		return c.authenticateLocked(ctx)
	}
	return nil
}

// negotiateLocked sends ApiVersions (v3, falling back to the version the broker names in a
// KIP-511 UNSUPPORTED_VERSION answer) and records the broker's ranges.
func (c *Client) negotiateLocked(ctx context.Context) error {
	version := int16(apiVersionsMax)
	for attempt := 0; attempt < 2; attempt++ {
		req := kmsg.NewPtrApiVersionsRequest()
		req.SetVersion(version)
		req.ClientSoftwareName = "samsa"
		req.ClientSoftwareVersion = "1.0"
		frame, corr, err := c.roundTripLocked(ctx, req, nil)
		if err != nil {
			return err
		}
		resp, err := wire.ParseResponse(frame, req, corr)
		if err != nil {
			return fmt.Errorf("peer: ApiVersions from %s: %w", c.addr, err)
		}
		av := resp.(*kmsg.ApiVersionsResponse)
		if av.ErrorCode == kerr.UnsupportedVersion.Code && attempt == 0 {
			version = 0
			for _, k := range av.ApiKeys {
				if k.ApiKey == req.Key() && k.MaxVersion >= 0 {
					version = min(k.MaxVersion, apiVersionsMax)
				}
			}
			continue
		}
		if err := kerr.ErrorForCode(av.ErrorCode); err != nil {
			return fmt.Errorf("peer: ApiVersions to %s: %w", c.addr, err)
		}
		vs := make(map[int16]versionRange, len(av.ApiKeys))
		for _, k := range av.ApiKeys {
			if k.MinVersion <= k.MaxVersion {
				vs[k.ApiKey] = versionRange{k.MinVersion, k.MaxVersion}
			}
		}
		c.mu.versions = vs
		return nil
	}
	return fmt.Errorf("peer: ApiVersions to %s: no common version", c.addr)
}

// roundTripLocked writes req and reads its response frame on the current connection into buf
// (grown when too small; nil allocates), returning the frame and the correlation id to check
// it against. A Produce with acks=0 returns a nil frame. It does not decode the frame.
func (c *Client) roundTripLocked(ctx context.Context, req kmsg.Request, buf []byte) ([]byte, int32, error) {
	conn := c.mu.conn
	if conn == nil {
		return nil, 0, ErrClosed
	}
	if err := ctx.Err(); err != nil {
		return nil, 0, err
	}
	deadline, _ := ctx.Deadline()
	if t := c.opts.requestTimeout; t > 0 {
		if d := time.Now().Add(t); deadline.IsZero() || d.Before(deadline) {
			deadline = d
		}
	}
	conn.SetDeadline(deadline)
	// Interrupt blocked I/O when ctx ends or the client closes (interrupt.go). The deadline
	// above is set first, so an interruption is never overwritten by it.
	c.intr.arm(ctx, conn)
	defer c.intr.disarm(ctx)
	if c.closeCtx.Err() != nil {
		return nil, 0, ErrClosed
	}
	if err := ctx.Err(); err != nil {
		return nil, 0, err
	}

	c.mu.corr++
	corr := c.mu.corr
	frame := wire.AppendRequest(c.mu.wbuf[:0], req, corr, c.clientID)
	if cap(frame) <= 1<<20 {
		c.mu.wbuf = frame[:0]
	}
	if _, err := conn.Write(frame); err != nil {
		return nil, 0, c.ioError(ctx, "write", req, err)
	}
	if p, ok := req.(*kmsg.ProduceRequest); ok && p.Acks == 0 {
		return nil, corr, nil
	}
	buf, err := wire.ReadFrame(c.mu.br, c.opts.maxResponseSize, buf)
	if err != nil {
		return nil, 0, c.ioError(ctx, "read", req, err)
	}
	return buf, corr, nil
}

func (c *Client) ioError(ctx context.Context, op string, req kmsg.Request, err error) error {
	switch {
	case c.closeCtx.Err() != nil:
		return ErrClosed
	case ctx.Err() != nil:
		err = ctx.Err()
	default:
		// The socket deadline equals ctx's and may fire just before ctx's own timer.
		if d, ok := ctx.Deadline(); ok && !time.Now().Before(d) {
			err = context.DeadlineExceeded
		}
	}
	return fmt.Errorf("peer: %s %s v%d to %s: %w", op, kmsg.NameForKey(req.Key()), req.GetVersion(), c.addr, err)
}

// dropLocked closes and forgets the current connection.
func (c *Client) dropLocked() {
	if c.mu.conn != nil {
		c.mu.conn.Close()
		c.mu.conn = nil
		c.mu.versions = nil
	}
}
