package server

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"testing"
	"time"

	metrics "github.com/rcrowley/go-metrics"
	"github.com/twmb/franz-go/pkg/kmsg"

	"samsa/broker/wire"
	"samsa/internal/testwait"
)

// pendingHandler answers Produce with acks=-1 with a Pending that completes when the test
// sends on its release channel (keyed by the request's timeout_ms, used as a request number),
// and everything else synchronously. It records the order in which requests were handled.
type pendingHandler struct {
	mu      sync.Mutex
	handled []int32                 // guarded by mu; timeout_ms of each produce, -1 for others
	release map[int32]chan struct{} // guarded by mu
	waitErr map[int32]error         // guarded by mu; Wait's result once released
	ctxErr  chan error              // receives ctx.Err() of each Wait that ended by ctx
	waiting chan int32              // receives the number of each Wait that started
}

func newPendingHandler() *pendingHandler {
	return &pendingHandler{release: map[int32]chan struct{}{}, waitErr: map[int32]error{},
		ctxErr: make(chan error, 64), waiting: make(chan int32, 64)}
}

func (h *pendingHandler) ch(n int32) chan struct{} {
	h.mu.Lock()
	defer h.mu.Unlock()
	c := h.release[n]
	if c == nil {
		c = make(chan struct{})
		h.release[n] = c
	}
	return c
}

func (h *pendingHandler) handledOrder() []int32 {
	h.mu.Lock()
	defer h.mu.Unlock()
	return append([]int32(nil), h.handled...)
}

type testPending struct {
	*kmsg.ProduceResponse
	h *pendingHandler
	n int32
}

func (p *testPending) Wait(ctx context.Context) (kmsg.Response, error) {
	p.h.waiting <- p.n
	if p.n == 666 {
		panic("test panic in Wait")
	}
	select {
	case <-p.h.ch(p.n):
	case <-ctx.Done():
		p.h.ctxErr <- ctx.Err()
		return nil, ctx.Err()
	}
	p.h.mu.Lock()
	err := p.h.waitErr[p.n]
	p.h.mu.Unlock()
	return p.ProduceResponse, err
}

func (h *pendingHandler) Serve(ctx context.Context, c *Conn, req *wire.Request) (kmsg.Response, error) {
	if body, ok := req.Body.(*kmsg.ProduceRequest); ok && body.Acks == -1 {
		h.mu.Lock()
		h.handled = append(h.handled, body.TimeoutMillis)
		h.mu.Unlock()
		resp := body.ResponseKind().(*kmsg.ProduceResponse)
		resp.ThrottleMillis = body.TimeoutMillis // echoed so the test can match it
		return &testPending{ProduceResponse: resp, h: h, n: body.TimeoutMillis}, nil
	}
	h.mu.Lock()
	h.handled = append(h.handled, -1)
	h.mu.Unlock()
	return req.Body.ResponseKind(), nil
}

func acksAll(n int32) *kmsg.ProduceRequest {
	p := kmsg.NewPtrProduceRequest()
	p.SetVersion(8)
	p.Acks, p.TimeoutMillis = -1, n
	return p
}

func waitHandled(t *testing.T, h *pendingHandler, n int) {
	t.Helper()
	testwait.For(t, 5*time.Second, func() error {
		if got := len(h.handledOrder()); got != n {
			return fmt.Errorf("%d requests handled, want %d", got, n)
		}
		return nil
	})
}

// TestServerPendingPipelinesAndAnswersInOrder: while acks=all responses wait, the connection
// keeps reading and handling later Produce requests (in request order); a request of another
// api waits until everything before it has been answered; responses leave in request order
// whatever order the waits finish in.
func TestServerPendingPipelinesAndAnswersInOrder(t *testing.T) {
	checkNoGoroutineLeak(t)
	h := newPendingHandler()
	_, addr, _ := startServer(t, h, nil)
	c := dial(t, addr)
	reqs := []kmsg.Request{acksAll(1), acksAll(2), acksAll(3), metadataReq(9, "t"), acksAll(4)}
	corrs := make([]int32, len(reqs))
	for i, r := range reqs {
		corrs[i] = c.send(r)
	}
	waitHandled(t, h, 3) // the three produces handled while the first still waits
	close(h.ch(3))
	close(h.ch(2))
	c.conn.SetReadDeadline(time.Now().Add(50 * time.Millisecond))
	var b [1]byte
	if n, err := c.conn.Read(b[:]); err == nil {
		t.Fatalf("read %d bytes before the first response was released", n)
	}
	if got := fmt.Sprint(h.handledOrder()); got != "[1 2 3]" {
		t.Fatalf("handled %s before the first produce was answered", got)
	}
	c.conn.SetReadDeadline(time.Now().Add(5 * time.Second))
	close(h.ch(1))
	close(h.ch(4))
	for i, r := range reqs {
		resp := c.recv(r, corrs[i])
		if p, ok := resp.(*kmsg.ProduceResponse); ok && p.ThrottleMillis != r.(*kmsg.ProduceRequest).TimeoutMillis {
			t.Fatalf("response %d is for request %d", i, p.ThrottleMillis)
		}
	}
	if got := fmt.Sprint(h.handledOrder()); got != "[1 2 3 -1 4]" {
		t.Fatalf("handled %s", got)
	}
}

// TestServerPendingQueueBound: with MaxQueuedResponses 2 and no wait finishing, the connection
// handles two requests and reads no further until one completes.
func TestServerPendingQueueBound(t *testing.T) {
	checkNoGoroutineLeak(t)
	h := newPendingHandler()
	_, addr, _ := startServer(t, h, func(o *Options) { o.MaxQueuedResponses = 2 })
	c := dial(t, addr)
	for n := int32(1); n <= 4; n++ {
		c.send(acksAll(n))
	}
	waitHandled(t, h, 2)
	time.Sleep(50 * time.Millisecond) // give a wrong implementation the time to read more
	if got := len(h.handledOrder()); got != 2 {
		t.Fatalf("%d requests handled with a queue of 2", got)
	}
	close(h.ch(1))
	waitHandled(t, h, 3)
	close(h.ch(2))
	close(h.ch(3))
	close(h.ch(4))
	for n := int32(1); n <= 4; n++ {
		c.recv(acksAll(n), n)
	}
}

// TestServerPendingAbandonedOnClose: a client that closes while responses wait cancels the
// waiting one's ctx, the queued ones behind it are never waited for, and no goroutine stays.
func TestServerPendingAbandonedOnClose(t *testing.T) {
	checkNoGoroutineLeak(t)
	h := newPendingHandler()
	_, addr, reg := startServer(t, h, nil)
	c := dial(t, addr)
	for n := int32(1); n <= 3; n++ {
		c.send(acksAll(n))
	}
	waitHandled(t, h, 3)
	if n := <-h.waiting; n != 1 {
		t.Fatalf("first Wait was for %d", n)
	}
	c.conn.Close()
	if err := <-h.ctxErr; !errors.Is(err, context.Canceled) {
		t.Fatalf("Wait ctx = %v", err)
	}
	testwait.For(t, 5*time.Second, func() error {
		if n := reg.Get(MetricConnectionCount).(metrics.Gauge).Value(); n != 0 {
			return fmt.Errorf("%d connections", n)
		}
		return nil
	})
	select {
	case n := <-h.waiting:
		t.Fatalf("Wait called for %d after the connection closed", n)
	default:
	}
}

// TestServerPendingErrorAndPanicClose: a Wait error closes the connection after the earlier
// responses were written; a Wait panic is recovered and counted (broker.panics).
func TestServerPendingErrorAndPanicClose(t *testing.T) {
	checkNoGoroutineLeak(t)
	h := newPendingHandler()
	s, addr, _ := startServer(t, h, nil)
	c := dial(t, addr)
	h.mu.Lock()
	h.waitErr[2] = errors.New("test wait error")
	h.mu.Unlock()
	for n := int32(1); n <= 3; n++ {
		c.send(acksAll(n))
	}
	close(h.ch(1))
	close(h.ch(2))
	c.recv(acksAll(1), 1)
	c.expectClosed()

	p := dial(t, addr)
	p.send(acksAll(666))
	p.expectClosed()
	testwait.For(t, 5*time.Second, func() error {
		if s.Panics() != 1 {
			return fmt.Errorf("%d panics counted", s.Panics())
		}
		return nil
	})
}

// TestServerShutdownWritesPendingResponses: graceful Shutdown lets a connection finish every
// queued response (it stops reading), then closes it.
func TestServerShutdownWritesPendingResponses(t *testing.T) {
	checkNoGoroutineLeak(t)
	h := newPendingHandler()
	s, addr := newListening(t, Options{Handler: h})
	served := make(chan error, 1)
	go func() { served <- s.Serve(context.Background()) }()
	c := dial(t, addr)
	c.send(acksAll(1))
	c.send(acksAll(2))
	waitHandled(t, h, 2)
	shut := make(chan error, 1)
	go func() { shut <- s.Shutdown(context.Background()) }()
	testwait.For(t, 5*time.Second, func() error {
		if _, ok := s.Addrs()["PLAINTEXT"]; ok {
			if c2, err := dialRaw(addr); err == nil {
				c2.Close()
				return errors.New("listener still accepting")
			}
		}
		return nil
	})
	select {
	case err := <-shut:
		t.Fatalf("Shutdown returned %v with responses pending", err)
	default:
	}
	close(h.ch(1))
	close(h.ch(2))
	c.recv(acksAll(1), 1)
	c.recv(acksAll(2), 2)
	c.expectClosed()
	if err := <-shut; err != nil {
		t.Fatalf("Shutdown = %v", err)
	}
	if err := <-served; err != nil {
		t.Fatalf("Serve = %v", err)
	}
}

// TestServerShutdownDeadlineCancelsPending: at Shutdown's deadline a waiting response's ctx is
// cancelled and the connection closed.
func TestServerShutdownDeadlineCancelsPending(t *testing.T) {
	checkNoGoroutineLeak(t)
	h := newPendingHandler()
	s, addr := newListening(t, Options{Handler: h})
	served := make(chan error, 1)
	go func() { served <- s.Serve(context.Background()) }()
	c := dial(t, addr)
	c.send(acksAll(1))
	c.send(acksAll(2))
	<-h.waiting
	ctx, cancel := context.WithTimeout(context.Background(), 100*time.Millisecond)
	defer cancel()
	if err := s.Shutdown(ctx); !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("Shutdown = %v", err)
	}
	if err := <-h.ctxErr; !errors.Is(err, context.Canceled) {
		t.Fatalf("Wait ctx = %v", err)
	}
	c.expectClosed()
	if err := <-served; err != nil {
		t.Fatalf("Serve = %v", err)
	}
}
