package peer_test

import (
	"context"
	"encoding/binary"
	"errors"
	"net"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"

	"samsa/broker/server"
	"samsa/broker/wire"
	"samsa/peer"
)

// broker is a test handler standing in for a remote broker: it advertises ranges, records the
// versions it was sent, blocks Heartbeat until ctx ends, and fails (closing the connection) on
// LeaveGroup.
type broker struct {
	ranges      map[int16][2]int16
	avMax       int16 // ApiVersions max; above it, answer KIP-511 UNSUPPORTED_VERSION
	apiVersions atomic.Int32
	stop        chan struct{} // closed at test cleanup; releases Heartbeat
	mu          sync.Mutex
	seen        map[int16][]int16 // guarded by mu
}

func newBroker() *broker {
	return &broker{
		ranges: map[int16][2]int16{0: {3, 8}, 1: {4, 12}, 3: {0, 5}, 4: {0, 4}, 6: {0, 6}, 12: {0, 4}, 13: {0, 4}, 18: {0, 3}},
		avMax:  3,
		stop:   make(chan struct{}),
		seen:   make(map[int16][]int16),
	}
}

func (b *broker) versions(key int16) []int16 {
	b.mu.Lock()
	defer b.mu.Unlock()
	return append([]int16(nil), b.seen[key]...)
}

func (b *broker) Serve(ctx context.Context, c *server.Conn, req *wire.Request) (kmsg.Response, error) {
	b.mu.Lock()
	b.seen[req.Key] = append(b.seen[req.Key], req.Version)
	b.mu.Unlock()
	switch body := req.Body.(type) {
	case *kmsg.ApiVersionsRequest:
		b.apiVersions.Add(1)
		if req.Version > b.avMax {
			return wire.UnsupportedAPIVersionsResponse(0, b.avMax), nil
		}
		resp := body.ResponseKind().(*kmsg.ApiVersionsResponse)
		for k, r := range b.ranges {
			ak := kmsg.NewApiVersionsResponseApiKey()
			ak.ApiKey, ak.MinVersion, ak.MaxVersion = k, r[0], r[1]
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
		return resp, nil
	case *kmsg.ProduceRequest:
		if body.Acks == 0 {
			return nil, nil
		}
		return body.ResponseKind(), nil
	case *kmsg.HeartbeatRequest:
		select {
		case <-ctx.Done():
			return nil, ctx.Err()
		case <-b.stop:
			return nil, errors.New("stopped")
		}
	case *kmsg.LeaveGroupRequest:
		return nil, errors.New("drop")
	default:
		return req.Body.ResponseKind(), nil
	}
}

func start(t *testing.T, h server.Handler) (*server.Server, string) {
	t.Helper()
	s, err := server.New(server.Options{Handler: h})
	if err != nil {
		t.Fatal(err)
	}
	addr, err := s.Listen("PLAINTEXT", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	served := make(chan error, 1)
	go func() { served <- s.Serve(context.Background()) }()
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		s.Shutdown(ctx)
		<-served
	})
	if b, ok := h.(*broker); ok {
		t.Cleanup(func() { close(b.stop) }) // runs before Shutdown
	}
	return s, addr.String()
}

// dialPeer starts a server for h and dials it as clientID; the client is
// closed when the test ends, before the server shuts down.
func dialPeer(t *testing.T, h server.Handler, clientID string, opts ...peer.Option) *peer.Client {
	t.Helper()
	_, addr := start(t, h)
	c, err := peer.Dial(ctxT(t), addr, clientID, opts...)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	return c
}

func ctxT(t *testing.T) context.Context {
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	t.Cleanup(cancel)
	return ctx
}

func metadata(topics ...string) *kmsg.MetadataRequest {
	req := kmsg.NewPtrMetadataRequest()
	for _, tp := range topics {
		mt := kmsg.NewMetadataRequestTopic()
		mt.Topic = kmsg.StringPtr(tp)
		req.Topics = append(req.Topics, mt)
	}
	return req
}

func TestPeerNegotiatesHighestCommonVersion(t *testing.T) {
	b := newBroker()
	c := dialPeer(t, b, "controller-1")
	resp, err := c.Request(ctxT(t), metadata("a"))
	if err != nil {
		t.Fatal(err)
	}
	if resp.GetVersion() != 5 || *resp.(*kmsg.MetadataResponse).Topics[0].Topic != "a" {
		t.Fatalf("%+v", resp)
	}
	if _, err := c.Request(ctxT(t), kmsg.NewPtrLeaderAndISRRequest()); err != nil {
		t.Fatal(err)
	}
	if got := b.versions(4); len(got) != 1 || got[0] != 4 {
		t.Fatalf("LeaderAndIsr versions %v", got)
	}
	if lo, hi, err := c.Versions(ctxT(t), 1); err != nil || lo != 4 || hi != 12 {
		t.Fatalf("Fetch range %d-%d %v", lo, hi, err)
	}
	// Not advertised at all.
	if _, err := c.Request(ctxT(t), kmsg.NewPtrStopReplicaRequest()); !errors.Is(err, peer.ErrUnsupported) {
		t.Fatalf("StopReplica: %v", err)
	}
	// Pinned inside and outside the range.
	pin := metadata()
	pin.SetVersion(2)
	if resp, err := c.RequestPinned(ctxT(t), pin); err != nil || resp.GetVersion() != 2 {
		t.Fatalf("pinned v2: %v", err)
	}
	pin.SetVersion(7)
	if _, err := c.RequestPinned(ctxT(t), pin); !errors.Is(err, peer.ErrUnsupported) {
		t.Fatalf("pinned v7: %v", err)
	}
	// Produce below the broker's minimum.
	if lo, _, _ := c.Versions(ctxT(t), 0); lo != 3 {
		t.Fatal(lo)
	}
}

func TestPeerMaxVersionsCap(t *testing.T) {
	b := newBroker()
	c := dialPeer(t, b, "c", peer.WithMaxVersions(map[int16]int16{3: 1, 0: 2}))
	if resp, err := c.Request(ctxT(t), metadata()); err != nil || resp.GetVersion() != 1 {
		t.Fatalf("%v", err)
	}
	// Our cap (2) is below the broker's minimum (3).
	if _, err := c.Request(ctxT(t), kmsg.NewPtrProduceRequest()); !errors.Is(err, peer.ErrUnsupported) {
		t.Fatalf("produce: %v", err)
	}
}

// TestPeerApiVersionsFallback: a broker whose ApiVersions max is 2 answers our v3 with a v0
// UNSUPPORTED_VERSION body naming v2 (KIP-511); the client retries with v2.
func TestPeerApiVersionsFallback(t *testing.T) {
	b := newBroker()
	b.avMax = 2
	c := dialPeer(t, b, "c")
	if got := b.versions(18); len(got) != 2 || got[0] != 3 || got[1] != 2 {
		t.Fatalf("ApiVersions sent as %v", got)
	}
	if _, err := c.Request(ctxT(t), metadata()); err != nil {
		t.Fatal(err)
	}
}

func TestPeerReconnectsAfterFailure(t *testing.T) {
	b := newBroker()
	c := dialPeer(t, b, "c", peer.WithReconnectBackoff(time.Millisecond, 10*time.Millisecond))
	if _, err := c.Request(ctxT(t), kmsg.NewPtrLeaveGroupRequest()); err == nil {
		t.Fatal("no error from a dropped connection")
	}
	resp, err := c.Request(ctxT(t), metadata("again"))
	if err != nil {
		t.Fatal(err)
	}
	if *resp.(*kmsg.MetadataResponse).Topics[0].Topic != "again" {
		t.Fatal("wrong response")
	}
	if n := b.apiVersions.Load(); n != 2 {
		t.Fatalf("ApiVersions sent %d times, want once per connection (2)", n)
	}
}

// TestPeerReconnectBackoff: failed connection attempts are spaced by a backoff that doubles
// (with ±20% jitter) up to the maximum.
func TestPeerReconnectBackoff(t *testing.T) {
	var mu sync.Mutex
	var attempts []time.Time
	dial := func(ctx context.Context, network, addr string) (net.Conn, error) {
		mu.Lock()
		attempts = append(attempts, time.Now())
		mu.Unlock()
		return nil, errors.New("refused")
	}
	c := peer.New("127.0.0.1:1", "c", peer.WithDialer(dial), peer.WithReconnectBackoff(20*time.Millisecond, 80*time.Millisecond))
	defer c.Close()
	for i := 0; i < 5; i++ {
		if _, err := c.Request(ctxT(t), metadata()); err == nil {
			t.Fatal("request succeeded without a broker")
		}
	}
	mu.Lock()
	defer mu.Unlock()
	want := []time.Duration{20, 40, 80, 80}
	for i, w := range want {
		gap := attempts[i+1].Sub(attempts[i])
		if gap < w*time.Millisecond*8/10 {
			t.Fatalf("gap %d = %v, want >= 0.8 × %dms", i, gap, w)
		}
	}
	// A ctx that ends during the backoff wait returns at once.
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Millisecond)
	defer cancel()
	if _, err := c.Request(ctx, metadata()); !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("err = %v", err)
	}
}

func TestPeerDialFails(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := ln.Addr().String()
	ln.Close()
	if _, err := peer.Dial(ctxT(t), addr, "c"); err == nil {
		t.Fatal("dial to a closed port succeeded")
	}
}

func TestPeerContextDeadlineDropsConnection(t *testing.T) {
	b := newBroker()
	c := dialPeer(t, b, "c", peer.WithReconnectBackoff(time.Millisecond, time.Millisecond))
	ctx, cancel := context.WithTimeout(context.Background(), 100*time.Millisecond)
	defer cancel()
	start := time.Now()
	if _, err := c.Request(ctx, kmsg.NewPtrHeartbeatRequest()); !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("err = %v", err)
	}
	if d := time.Since(start); d > 3*time.Second {
		t.Fatalf("took %v", d)
	}
	if _, err := c.Request(ctxT(t), metadata()); err != nil {
		t.Fatalf("after deadline: %v", err)
	}
}

func TestPeerCloseInterruptsRequest(t *testing.T) {
	b := newBroker()
	_, addr := start(t, b)
	c, err := peer.Dial(ctxT(t), addr, "c")
	if err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() {
		_, err := c.Request(context.Background(), kmsg.NewPtrHeartbeatRequest())
		done <- err
	}()
	// Wait until the heartbeat reached the broker.
	deadline := time.Now().Add(5 * time.Second)
	for len(b.versions(12)) == 0 {
		if time.Now().After(deadline) {
			t.Fatal("heartbeat never arrived")
		}
		time.Sleep(time.Millisecond)
	}
	c.Close()
	if err := <-done; !errors.Is(err, peer.ErrClosed) {
		t.Fatalf("err = %v", err)
	}
	if _, err := c.Request(ctxT(t), metadata()); !errors.Is(err, peer.ErrClosed) {
		t.Fatalf("after Close: %v", err)
	}
}

func TestPeerAcksZeroProduce(t *testing.T) {
	b := newBroker()
	c := dialPeer(t, b, "c")
	p := kmsg.NewPtrProduceRequest()
	p.Acks = 0
	if resp, err := c.Request(ctxT(t), p); resp != nil || err != nil {
		t.Fatalf("acks=0: %v %v", resp, err)
	}
	if resp, err := c.Request(ctxT(t), metadata("x")); err != nil || *resp.(*kmsg.MetadataResponse).Topics[0].Topic != "x" {
		t.Fatalf("after acks=0: %v", err)
	}
}

func TestPeerConcurrentRequests(t *testing.T) {
	b := newBroker()
	c := dialPeer(t, b, "c")
	var wg sync.WaitGroup
	errs := make(chan error, 8)
	for g := 0; g < 8; g++ {
		wg.Add(1)
		go func(g int) {
			defer wg.Done()
			for i := 0; i < 50; i++ {
				name := string(rune('a'+g)) + string(rune('a'+i%26))
				resp, err := c.Request(context.Background(), metadata(name))
				if err != nil {
					errs <- err
					return
				}
				if got := *resp.(*kmsg.MetadataResponse).Topics[0].Topic; got != name {
					errs <- errors.New("got " + got + " want " + name)
					return
				}
			}
		}(g)
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Fatal(err)
	}
}

// TestPeerBadResponses: a broker that answers with the wrong correlation id or an oversized
// frame makes the call fail and the connection drop.
func TestPeerBadResponses(t *testing.T) {
	for _, tc := range []struct {
		name string
		resp func(corr int32) []byte
		want error
	}{
		{"wrong correlation", func(corr int32) []byte { return []byte{0, 0, 0, 4, 0, 0, 0x7f, 0} }, wire.ErrCorrelation},
		{"oversized", func(corr int32) []byte { return []byte{0x10, 0, 0, 0} }, wire.ErrFrameTooLarge},
		{"truncated body", func(corr int32) []byte {
			return append(binary.BigEndian.AppendUint32([]byte{0, 0, 0, 6}, uint32(corr)), 0, 0)
		}, wire.ErrMalformed},
	} {
		t.Run(tc.name, func(t *testing.T) {
			ln, err := net.Listen("tcp", "127.0.0.1:0")
			if err != nil {
				t.Fatal(err)
			}
			defer ln.Close()
			go func() {
				conn, err := ln.Accept()
				if err != nil {
					return
				}
				defer conn.Close()
				frame, err := wire.ReadFrame(conn, 0, nil)
				if err != nil {
					return
				}
				req, err := wire.ParseRequest(frame)
				if err != nil {
					return
				}
				conn.Write(tc.resp(req.Correlation))
				wire.ReadFrame(conn, 0, nil) // until the client drops us
			}()
			_, err = peer.Dial(ctxT(t), ln.Addr().String(), "c", peer.WithMaxResponseSize(1<<20))
			if !errors.Is(err, tc.want) {
				t.Fatalf("err = %v, want %v", err, tc.want)
			}
		})
	}
}

func TestPeerPool(t *testing.T) {
	_, addr1 := start(t, newBroker())
	_, addr2 := start(t, newBroker())
	p := peer.NewPool("controller-1")
	c1, err := p.Get(1, addr1)
	if err != nil {
		t.Fatal(err)
	}
	if again, _ := p.Get(1, addr1); again != c1 {
		t.Fatal("Get returned a new client for the same broker")
	}
	if _, err := c1.Request(ctxT(t), metadata()); err != nil {
		t.Fatal(err)
	}
	moved, _ := p.Get(1, addr2)
	if moved == c1 || moved.Addr() != addr2 {
		t.Fatal("address change did not replace the client")
	}
	if _, err := c1.Request(ctxT(t), metadata()); !errors.Is(err, peer.ErrClosed) {
		t.Fatalf("old client: %v", err)
	}
	if _, err := moved.Request(ctxT(t), metadata()); err != nil {
		t.Fatal(err)
	}
	p.Remove(1)
	if _, err := moved.Request(ctxT(t), metadata()); !errors.Is(err, peer.ErrClosed) {
		t.Fatalf("removed client: %v", err)
	}
	c2, _ := p.Get(2, addr2)
	p.Close()
	if _, err := c2.Request(ctxT(t), metadata()); !errors.Is(err, peer.ErrClosed) {
		t.Fatalf("after pool Close: %v", err)
	}
	if _, err := p.Get(3, addr1); !errors.Is(err, peer.ErrClosed) {
		t.Fatalf("Get after Close: %v", err)
	}
	_ = kerr.UnsupportedVersion
}
