package server

import (
	"context"
	"encoding/binary"
	"errors"
	"testing"
	"time"

	metrics "github.com/rcrowley/go-metrics"
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"

	"samsa/broker/wire"
	"samsa/internal/testwait"
)

func TestServerApiVersionsAndMetadata(t *testing.T) {
	checkNoGoroutineLeak(t)
	h := newTestHandler()
	_, addr, reg := startServer(t, h, nil)
	c := dial(t, addr)

	for _, v := range []int16{0, 3} {
		req := kmsg.NewPtrApiVersionsRequest()
		req.SetVersion(v)
		req.ClientSoftwareName, req.ClientSoftwareVersion = "test", "1"
		resp := c.roundTrip(req).(*kmsg.ApiVersionsResponse)
		if resp.ErrorCode != 0 || len(resp.ApiKeys) != 5 || resp.GetVersion() != v {
			t.Fatalf("v%d: %+v", v, resp)
		}
	}
	for _, v := range []int16{1, 9, 12} {
		resp := c.roundTrip(metadataReq(v, "a", "b")).(*kmsg.MetadataResponse)
		if len(resp.Topics) != 2 || *resp.Topics[1].Topic != "b" || resp.Brokers[0].Host != "PLAINTEXT|test-client" {
			t.Fatalf("v%d: %+v", v, resp)
		}
	}
	// The server records a request's metrics after it has written the response, so
	// the client can see the answer a moment before the count moves: wait for it.
	deadline := time.Now().Add(5 * time.Second)
	for {
		rm, tm := reg.Get(MetricRequestsPerSec+",request=Metadata"), reg.Get(MetricTotalTimeMs+",request=ApiVersions")
		if rm != nil && tm != nil && rm.(metrics.Meter).Count() == 3 && tm.(metrics.Histogram).Count() == 2 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("Metadata RequestsPerSec = %v, ApiVersions TotalTimeMs = %v", rm, tm)
		}
		time.Sleep(5 * time.Millisecond)
	}
}

// TestServerApiVersionsUnsupportedVersion: KIP-511. ApiVersions above our range gets a v0 body
// with UNSUPPORTED_VERSION and ApiVersions' range, behind a v0 header, on an open connection.
func TestServerApiVersionsUnsupportedVersion(t *testing.T) {
	_, addr, _ := startServer(t, newTestHandler(), nil)
	c := dial(t, addr)
	frame := binary.BigEndian.AppendUint32(nil, 12)
	frame = append(frame, 0, 18, 0, 99, 0, 0, 0, 5, 0, 1, 'x', 0x42) // ApiVersions v99, unknown body
	if _, err := c.conn.Write(frame); err != nil {
		t.Fatal(err)
	}
	req := kmsg.NewPtrApiVersionsRequest()
	req.SetVersion(3)
	resp := c.recv(req, 5).(*kmsg.ApiVersionsResponse)
	if resp.GetVersion() != 0 || resp.ErrorCode != kerr.UnsupportedVersion.Code || len(resp.ApiKeys) != 1 || resp.ApiKeys[0].MaxVersion != 3 {
		t.Fatalf("%+v", resp)
	}
	c.corr = 5
	if r := c.roundTrip(metadataReq(1, "still-open")).(*kmsg.MetadataResponse); len(r.Topics) != 1 {
		t.Fatal("connection not usable after UNSUPPORTED_VERSION")
	}
}

// TestServerPipelinedOrdering: "requests on a single TCP connection are processed in the order
// they are sent and responses return in that order" (kafka.apache.org/protocol).
func TestServerPipelinedOrdering(t *testing.T) {
	_, addr, _ := startServer(t, newTestHandler(), nil)
	c := dial(t, addr)
	const n = 200
	reqs := make([]kmsg.Request, n)
	var out []byte
	id := "pipeline"
	for i := range reqs {
		var r kmsg.Request
		switch i % 3 {
		case 0:
			r = metadataReq(int16(i%13), "t")
		case 1:
			av := kmsg.NewPtrApiVersionsRequest()
			av.SetVersion(int16(i % 4))
			r = av
		default:
			p := kmsg.NewPtrProduceRequest()
			p.SetVersion(int16(3 + i%7))
			p.Acks = 1
			r = p
		}
		reqs[i] = r
		out = wire.AppendRequest(out, r, int32(i+1), &id)
	}
	if _, err := c.conn.Write(out); err != nil { // all at once
		t.Fatal(err)
	}
	for i, r := range reqs {
		c.recv(r, int32(i+1)) // fails on a correlation id out of order
	}
}

func TestServerAcksZeroProduceHasNoResponse(t *testing.T) {
	_, addr, _ := startServer(t, newTestHandler(), nil)
	c := dial(t, addr)
	p := kmsg.NewPtrProduceRequest()
	p.SetVersion(7)
	p.Acks = 0
	c.send(p)
	md := metadataReq(5, "after")
	corr := c.send(md)
	if r := c.recv(md, corr).(*kmsg.MetadataResponse); *r.Topics[0].Topic != "after" {
		t.Fatal(r)
	}
}

// TestServerBadFramesClose: framing errors close that connection only (S5.5); the server keeps
// serving others.
func TestServerBadFramesClose(t *testing.T) {
	checkNoGoroutineLeak(t)
	hdr := func(key, version int16) []byte {
		b := binary.BigEndian.AppendUint16(nil, uint16(key))
		b = binary.BigEndian.AppendUint16(b, uint16(version))
		return append(b, 0, 0, 0, 9, 0, 1, 'c')
	}
	framed := func(body []byte) []byte {
		return append(binary.BigEndian.AppendUint32(nil, uint32(len(body))), body...)
	}
	cases := []struct {
		name  string
		bytes []byte
	}{
		{"oversized", binary.BigEndian.AppendUint32(nil, 1<<20+1)},
		{"negative length", []byte{0xff, 0xff, 0xff, 0xfe}},
		{"tls client hello", []byte{0x16, 0x03, 0x01, 0x00, 0xa5, 0x01, 0x00, 0x00}},
		{"zero length", []byte{0, 0, 0, 0}},
		{"short header", framed([]byte{0, 3, 0, 1, 0})},
		{"unknown api key", framed(hdr(4242, 0))},
		{"unsupported version", framed(hdr(3, 999))},
		{"truncated body", framed(append(hdr(3, 1), 0, 0, 0, 5, 0, 1))},
		{"array count int32 max", framed(append(hdr(3, 1), 0x7f, 0xff, 0xff, 0xff, 0, 0, 0, 0, 0, 0))},
		{"client id length -2", framed([]byte{0, 3, 0, 1, 0, 0, 0, 9, 0xff, 0xfe})},
		{"handler error", framed(append(hdr(13, 0), 0, 1, 'g', 0, 1, 'm'))},
	}
	_, addr, _ := startServer(t, newTestHandler(), nil)
	healthy := dial(t, addr)
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			c := dial(t, addr)
			if _, err := c.conn.Write(tc.bytes); err != nil {
				t.Fatal(err)
			}
			c.expectClosed()
			if r := healthy.roundTrip(metadataReq(1, tc.name)).(*kmsg.MetadataResponse); *r.Topics[0].Topic != tc.name {
				t.Fatal("healthy connection broken")
			}
		})
	}
}

// TestServerTornFrame: a peer that sends part of a frame and half-closes is dropped without a
// response, and its goroutine ends.
func TestServerTornFrame(t *testing.T) {
	checkNoGoroutineLeak(t)
	_, addr, _ := startServer(t, newTestHandler(), nil)
	c := dial(t, addr)
	c.conn.Write([]byte{0, 0, 1, 0, 0, 3, 0, 1})
	c.conn.(interface{ CloseWrite() error }).CloseWrite()
	c.expectClosed()
}

func TestServerPanicClosesOnlyThatConnection(t *testing.T) {
	s, addr, reg := startServer(t, newTestHandler(), nil)
	healthy := dial(t, addr)
	c := dial(t, addr)
	dg := kmsg.NewPtrDescribeGroupsRequest()
	dg.Groups = []string{"g"}
	c.send(dg)
	c.expectClosed()
	testwait.For(t, 5*time.Second, func() error {
		if s.Panics() != 1 || reg.Get(MetricPanics).(metrics.Counter).Count() != 1 {
			return errors.New("panic not counted")
		}
		return nil
	})
	healthy.roundTrip(metadataReq(0))
}

func TestServerIdleTimeout(t *testing.T) {
	_, addr, _ := startServer(t, newTestHandler(), func(o *Options) { o.IdleTimeout = 100 * time.Millisecond })
	c := dial(t, addr)
	c.roundTrip(metadataReq(1, "x"))
	start := time.Now()
	c.expectClosed()
	if d := time.Since(start); d < 50*time.Millisecond {
		t.Fatalf("closed after %v, before the idle timeout", d)
	}
	// Slowloris: a frame trickled in slower than the timeout is dropped too.
	c = dial(t, addr)
	c.conn.Write([]byte{0, 0, 0, 20, 0})
	c.expectClosed()
}

func TestServerListenersAndConn(t *testing.T) {
	h := newTestHandler()
	s, addr, _ := startServer(t, h, nil)
	addr2, err := s.Listen("REPLICATION", "127.0.0.1:0") // added while serving
	if err != nil {
		t.Fatal(err)
	}
	if got := s.Addrs(); got["PLAINTEXT"].String() != addr || got["REPLICATION"].String() != addr2.String() {
		t.Fatalf("Addrs %v", got)
	}
	c := dial(t, addr2.String())
	r := c.roundTrip(metadataReq(1)).(*kmsg.MetadataResponse)
	if r.Brokers[0].Host != "REPLICATION|test-client" {
		t.Fatal(r.Brokers[0].Host)
	}
	h.mu.Lock()
	conn := h.seen[len(h.seen)-1]
	h.mu.Unlock()
	if conn.RemoteAddr().String() != c.conn.LocalAddr().String() || conn.LocalAddr().String() != addr2.String() || conn.NetConn() == nil || conn.ID() == "" {
		t.Fatalf("conn %s %s %s", conn.ID(), conn.RemoteAddr(), conn.LocalAddr())
	}
	if _, err := s.Listen("BAD", "127.0.0.1:-1"); err == nil {
		t.Fatal("bad address accepted")
	}
}

func TestServerNewRequiresHandler(t *testing.T) {
	if _, err := New(Options{}); err == nil {
		t.Fatal("nil handler accepted")
	}
}

// TestServerServeContextCancel: cancelling Serve's ctx closes everything and cancels handler
// contexts; Serve returns after every goroutine ended.
func TestServerServeContextCancel(t *testing.T) {
	checkNoGoroutineLeak(t)
	h := newTestHandler()
	s, addr := newListening(t, Options{Handler: h})
	ctx, cancel := context.WithCancel(context.Background())
	served := make(chan error, 1)
	go func() { served <- s.Serve(ctx) }()
	c := dial(t, addr)
	c.send(kmsg.NewPtrHeartbeatRequest())
	<-h.entered
	cancel()
	if err := <-served; !errors.Is(err, context.Canceled) {
		t.Fatalf("Serve = %v", err)
	}
	if err := <-h.ctxErr; !errors.Is(err, context.Canceled) {
		t.Fatalf("handler ctx = %v", err)
	}
	c.expectClosed()
	if err := s.Serve(context.Background()); !errors.Is(err, ErrServerClosed) {
		t.Fatalf("second Serve = %v", err)
	}
}

// TestServerMaxConnectionsPerIP: connections beyond max.connections.per.ip from one address
// are closed at once; closing one frees a slot.
func TestServerMaxConnectionsPerIP(t *testing.T) {
	_, addr, _ := startServer(t, newTestHandler(), func(o *Options) {
		o.MaxConnectionsPerIP = 2
		o.SendBufferBytes, o.ReceiveBufferBytes = 64<<10, 64<<10
	})
	a, b := dial(t, addr), dial(t, addr)
	a.roundTrip(metadataReq(1))
	b.roundTrip(metadataReq(1))
	extra := dial(t, addr)
	extra.expectClosed()
	a.conn.Close()
	testwait.For(t, 5*time.Second, func() error {
		c, err := dialRaw(addr)
		if err != nil {
			return err
		}
		defer c.Close()
		id := "x"
		if _, err := c.Write(wire.AppendRequest(nil, metadataReq(1), 1, &id)); err != nil {
			return err
		}
		c.SetReadDeadline(time.Now().Add(time.Second))
		_, err = wire.ReadFrame(c, 0, nil)
		return err
	})
}
