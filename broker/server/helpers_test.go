package server

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"runtime"
	"strings"
	"sync"
	"testing"
	"time"

	metrics "github.com/rcrowley/go-metrics"
	"github.com/twmb/franz-go/pkg/kmsg"

	"samsa/broker/wire"
	"samsa/internal/testwait"
)

// testHandler answers ApiVersions and Metadata with kmsg responses, blocks Heartbeat until
// release is closed (or ctx ends), returns nothing for acks=0 Produce, panics on DescribeGroups,
// and fails (closing the connection) on LeaveGroup.
type testHandler struct {
	release chan struct{}
	entered chan struct{} // receives once per Heartbeat that started waiting
	mu      sync.Mutex
	seen    []*Conn           // guarded by mu
	vers    map[int16][]int16 // guarded by mu; versions received per api key
	ctxErr  chan error
}

func newTestHandler() *testHandler {
	return &testHandler{release: make(chan struct{}), entered: make(chan struct{}, 16), ctxErr: make(chan error, 16)}
}

func (h *testHandler) Serve(ctx context.Context, c *Conn, req *wire.Request) (kmsg.Response, error) {
	h.mu.Lock()
	h.seen = append(h.seen, c)
	if h.vers == nil {
		h.vers = make(map[int16][]int16)
	}
	h.vers[req.Key] = append(h.vers[req.Key], req.Version)
	h.mu.Unlock()
	switch body := req.Body.(type) {
	case *kmsg.ApiVersionsRequest:
		if body.GetVersion() > 3 {
			return wire.UnsupportedAPIVersionsResponse(0, 3), nil
		}
		resp := body.ResponseKind().(*kmsg.ApiVersionsResponse)
		for _, k := range []int16{0, 1, 3, 12, 18} {
			ak := kmsg.NewApiVersionsResponseApiKey()
			ak.ApiKey, ak.MaxVersion = k, kmsg.RequestForKey(k).MaxVersion()
			if k == 18 {
				ak.MaxVersion = 3
			}
			resp.ApiKeys = append(resp.ApiKeys, ak)
		}
		return resp, nil
	case *kmsg.MetadataRequest:
		resp := body.ResponseKind().(*kmsg.MetadataResponse)
		for _, rt := range body.Topics {
			mt := kmsg.NewMetadataResponseTopic()
			mt.Topic = rt.Topic
			resp.Topics = append(resp.Topics, mt)
		}
		b := kmsg.NewMetadataResponseBroker()
		b.NodeID, b.Host, b.Port = 1, c.ListenerName()+"|"+c.ClientID(), 9092
		resp.Brokers = append(resp.Brokers, b)
		return resp, nil
	case *kmsg.ProduceRequest:
		if body.Acks == 0 {
			return nil, nil
		}
		return body.ResponseKind(), nil
	case *kmsg.HeartbeatRequest:
		h.entered <- struct{}{}
		select {
		case <-h.release:
		case <-ctx.Done():
			h.ctxErr <- ctx.Err()
			return nil, ctx.Err()
		}
		return body.ResponseKind(), nil
	case *kmsg.DescribeGroupsRequest:
		panic("test panic")
	case *kmsg.LeaveGroupRequest:
		return nil, errors.New("test handler refuses")
	default:
		return req.Body.ResponseKind(), nil
	}
}

// newListening returns a Server made from opts, listening on PLAINTEXT 127.0.0.1:0 but not
// serving yet, and its address.
func newListening(tb testing.TB, opts Options) (*Server, string) {
	tb.Helper()
	s, err := New(opts)
	if err != nil {
		tb.Fatal(err)
	}
	addr, err := s.Listen("PLAINTEXT", "127.0.0.1:0")
	if err != nil {
		tb.Fatal(err)
	}
	return s, addr.String()
}

// startServer starts a Server with h on 127.0.0.1:0 and returns it, its address and its
// registry; Shutdown runs at cleanup.
func startServer(t *testing.T, h Handler, mod func(*Options)) (*Server, string, metrics.Registry) {
	t.Helper()
	reg := metrics.NewRegistry()
	opts := Options{Handler: h, Metrics: reg, MaxRequestSize: 1 << 20}
	if mod != nil {
		mod(&opts)
	}
	s, addr := newListening(t, opts)
	served := make(chan error, 1)
	go func() { served <- s.Serve(context.Background()) }()
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		if err := s.Shutdown(ctx); err != nil {
			t.Errorf("shutdown: %v", err)
		}
		if err := <-served; err != nil {
			t.Errorf("serve: %v", err)
		}
	})
	return s, addr, reg
}

// client is a raw test connection.
type client struct {
	t    *testing.T
	conn net.Conn
	corr int32
}

func dial(t *testing.T, addr string) *client {
	t.Helper()
	conn, err := net.Dial("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { conn.Close() })
	conn.SetDeadline(time.Now().Add(10 * time.Second))
	return &client{t: t, conn: conn}
}

func (c *client) send(req kmsg.Request) int32 {
	c.t.Helper()
	c.corr++
	id := "test-client"
	if _, err := c.conn.Write(wire.AppendRequest(nil, req, c.corr, &id)); err != nil {
		c.t.Fatal(err)
	}
	return c.corr
}

func (c *client) recv(req kmsg.Request, corr int32) kmsg.Response {
	c.t.Helper()
	frame, err := wire.ReadFrame(c.conn, 0, nil)
	if err != nil {
		c.t.Fatalf("read response: %v", err)
	}
	resp, err := wire.ParseResponse(frame, req, corr)
	if err != nil {
		c.t.Fatal(err)
	}
	return resp
}

func (c *client) roundTrip(req kmsg.Request) kmsg.Response {
	c.t.Helper()
	return c.recv(req, c.send(req))
}

// expectClosed checks that the server closes the connection (read returns EOF or reset).
func (c *client) expectClosed() {
	c.t.Helper()
	c.conn.SetReadDeadline(time.Now().Add(5 * time.Second))
	var b [1]byte
	n, err := c.conn.Read(b[:])
	if err == nil {
		c.t.Fatalf("read %d bytes, want the connection closed", n)
	}
	var ne net.Error
	if errors.As(err, &ne) && ne.Timeout() {
		c.t.Fatalf("connection still open: %v", err)
	}
	if !errors.Is(err, io.EOF) && !strings.Contains(err.Error(), "reset") {
		c.t.Fatalf("unexpected error: %v", err)
	}
}

// checkNoGoroutineLeak registers a cleanup, run after every cleanup registered later (such as
// startServer's Shutdown), that fails if goroutines running server code remain.
func checkNoGoroutineLeak(t *testing.T) {
	t.Cleanup(func() {
		t.Helper()
		testwait.For(t, 5*time.Second, func() error {
			buf := make([]byte, 1<<20)
			stacks := string(buf[:runtime.Stack(buf, true)])
			for _, g := range strings.Split(stacks, "\n\n") {
				if strings.Contains(g, "samsa/broker/server.(*") && !strings.Contains(g, "checkNoGoroutineLeak") {
					return fmt.Errorf("leaked goroutine:\n%s", g)
				}
			}
			return nil
		})
	})
}

func metadataReq(v int16, topics ...string) *kmsg.MetadataRequest {
	req := kmsg.NewPtrMetadataRequest()
	req.SetVersion(v)
	for _, tp := range topics {
		mt := kmsg.NewMetadataRequestTopic()
		mt.Topic = kmsg.StringPtr(tp)
		req.Topics = append(req.Topics, mt)
	}
	return req
}

func dialRaw(addr string) (net.Conn, error) {
	return net.DialTimeout("tcp", addr, time.Second)
}
