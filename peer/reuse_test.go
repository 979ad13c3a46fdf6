package peer_test

import (
	"bytes"
	"context"
	"encoding/binary"
	"errors"
	"io"
	"net"
	"os"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kmsg"

	"samsa/broker/server"
	"samsa/broker/wire"
	"samsa/peer"
)

// fetchBroker is broker answering Fetch with one partition per requested partition whose
// RecordBatches are the fetch offset repeated, as 8 bytes, PartitionMaxBytes/8 times.
type fetchBroker struct{ *broker }

func (b fetchBroker) Serve(ctx context.Context, c *server.Conn, req *wire.Request) (kmsg.Response, error) {
	body, ok := req.Body.(*kmsg.FetchRequest)
	if !ok {
		return b.broker.Serve(ctx, c, req)
	}
	resp := body.ResponseKind().(*kmsg.FetchResponse)
	for _, rt := range body.Topics {
		t := kmsg.NewFetchResponseTopic()
		t.Topic = rt.Topic
		for _, rp := range rt.Partitions {
			p := kmsg.NewFetchResponseTopicPartition()
			p.Partition, p.HighWatermark = rp.Partition, rp.FetchOffset
			p.RecordBatches = fetchPayload(rp.FetchOffset, int(rp.PartitionMaxBytes))
			t.Partitions = append(t.Partitions, p)
		}
		resp.Topics = append(resp.Topics, t)
	}
	return resp, nil
}

func fetchPayload(offset int64, size int) []byte {
	one := []byte{byte(offset >> 56), byte(offset >> 48), byte(offset >> 40), byte(offset >> 32),
		byte(offset >> 24), byte(offset >> 16), byte(offset >> 8), byte(offset)}
	return bytes.Repeat(one, size/8)
}

func fetchReq(offset int64, size int32) *kmsg.FetchRequest {
	req := kmsg.NewPtrFetchRequest()
	req.ReplicaID, req.SessionEpoch = 1, -1
	t := kmsg.NewFetchRequestTopic()
	t.Topic = "t"
	p := kmsg.NewFetchRequestTopicPartition()
	p.FetchOffset, p.PartitionMaxBytes = offset, size
	t.Partitions = append(t.Partitions, p)
	req.Topics = append(req.Topics, t)
	return req
}

func TestPeerRequestIntoReusesFrameAndResponse(t *testing.T) {
	b := fetchBroker{newBroker()}
	c := dialPeer(t, b, "replica-fetcher-1")
	resp := kmsg.NewPtrFetchResponse()
	var buf []byte
	var err error
	// Sizes shrink and grow: the frame is reused when it fits and grown when not, and the
	// decoded response never carries bytes of an earlier answer.
	for i, size := range []int32{4096, 64, 64 << 10, 8, 4096} {
		offset := int64(1000 + i)
		prev := buf
		buf, err = c.RequestInto(ctxT(t), fetchReq(offset, size), resp, buf)
		if err != nil {
			t.Fatalf("fetch %d: %v", i, err)
		}
		if resp.Version != 12 {
			t.Fatalf("fetch %d decoded at v%d, want v12", i, resp.Version)
		}
		if len(resp.Topics) != 1 || resp.Topics[0].Topic != "t" || len(resp.Topics[0].Partitions) != 1 {
			t.Fatalf("fetch %d: response %+v", i, resp.Topics)
		}
		p := resp.Topics[0].Partitions[0]
		if p.HighWatermark != offset || !bytes.Equal(p.RecordBatches, fetchPayload(offset, int(size))) {
			t.Fatalf("fetch %d: hw %d, %d record bytes; want %d, %d", i, p.HighWatermark, len(p.RecordBatches), offset, size/8*8)
		}
		if cap(prev) >= len(buf) && len(prev) > 0 && &prev[:1][0] != &buf[:1][0] {
			t.Fatalf("fetch %d: a %d-byte frame did not reuse the %d-byte buffer", i, len(buf), cap(prev))
		}
	}
	// The plain Request still works on the same connection.
	if _, err := c.Request(ctxT(t), metadata("x")); err != nil {
		t.Fatal(err)
	}
}

// startRawFetchBroker serves one connection without the server package, so that it allocates
// nothing per request once warm: ApiVersions gets Fetch v4-v12 and ApiVersions v0-v3, every
// Fetch the answer fetchBroker gives to fetchReq(5, 512), with the correlation id patched.
func startRawFetchBroker(t *testing.T) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { ln.Close() })
	go func() {
		conn, err := ln.Accept()
		if err != nil {
			return
		}
		defer conn.Close()
		var buf, fetchFrame []byte
		prefix := make([]byte, 4)
		for {
			if _, err := io.ReadFull(conn, prefix); err != nil {
				return
			}
			n := int(binary.BigEndian.Uint32(prefix))
			if cap(buf) < n {
				buf = make([]byte, n)
			}
			buf = buf[:n]
			if _, err := io.ReadFull(conn, buf); err != nil {
				return
			}
			if key := int16(binary.BigEndian.Uint16(buf)); key != 1 || fetchFrame == nil {
				req, err := wire.ParseRequest(buf)
				if err != nil {
					return
				}
				var resp kmsg.Response
				if body, ok := req.Body.(*kmsg.FetchRequest); ok {
					resp, _ = fetchBroker{}.Serve(context.Background(), nil, &wire.Request{Header: req.Header, Body: body})
				} else {
					av := kmsg.NewPtrApiVersionsResponse()
					av.SetVersion(req.Version)
					for _, k := range [][3]int16{{1, 4, 12}, {18, 0, 3}} {
						ak := kmsg.NewApiVersionsResponseApiKey()
						ak.ApiKey, ak.MinVersion, ak.MaxVersion = k[0], k[1], k[2]
						av.ApiKeys = append(av.ApiKeys, ak)
					}
					resp = av
				}
				frame := wire.AppendResponse(nil, req, resp)
				if key == 1 {
					fetchFrame = frame
				}
				if _, err := conn.Write(frame); err != nil {
					return
				}
				continue
			}
			copy(fetchFrame[4:8], buf[4:8]) // the correlation id
			if _, err := conn.Write(fetchFrame); err != nil {
				return
			}
		}
	}()
	return ln.Addr().String()
}

// TestPeerRequestIntoAllocations counts the client's allocations per warm RequestInto against
// a broker that allocates none.
func TestPeerRequestIntoAllocations(t *testing.T) {
	if raceEnabled {
		t.Skip("allocation counts differ under -race")
	}
	c, err := peer.Dial(ctxT(t), startRawFetchBroker(t), "replica-fetcher-1")
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	// A lifetime ctx without a deadline, as a replica fetcher's.
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	req, resp := fetchReq(5, 512), kmsg.NewPtrFetchResponse()
	buf, err := c.RequestInto(ctx, req, resp, nil)
	if err != nil {
		t.Fatal(err)
	}
	allocs := testing.AllocsPerRun(50, func() {
		if buf, err = c.RequestInto(ctx, req, resp, buf); err != nil {
			t.Fatal(err)
		}
	})
	if p := resp.Topics[0].Partitions[0]; !bytes.Equal(p.RecordBatches, fetchPayload(5, 512)) {
		t.Fatalf("%d record bytes", len(p.RecordBatches))
	}
	// kmsg allocates the partitions slice and the topic string per response (ReadFrame may
	// allocate its 4-byte prefix); the frames, the response and the ctx watch are reused.
	if allocs > 4 {
		t.Fatalf("%.1f allocations per fetch, want at most 4", allocs)
	}
	t.Logf("%.1f allocations per fetch", allocs)
}

func TestPeerRequestIntoRefuses(t *testing.T) {
	b := newBroker()
	c := dialPeer(t, b, "c")
	if _, err := c.RequestInto(ctxT(t), kmsg.NewPtrApiVersionsRequest(), kmsg.NewPtrApiVersionsResponse(), nil); err == nil {
		t.Fatal("ApiVersions accepted")
	}
	if _, err := c.RequestInto(ctxT(t), metadata(), kmsg.NewPtrFetchResponse(), nil); err == nil {
		t.Fatal("mismatched response kind accepted")
	}
	acks0 := kmsg.NewPtrProduceRequest()
	acks0.Acks = 0
	if _, err := c.RequestInto(ctxT(t), acks0, kmsg.NewPtrProduceResponse(), nil); err == nil {
		t.Fatal("acks=0 produce accepted")
	}
	if _, err := c.RequestInto(ctxT(t), metadata("a"), kmsg.NewPtrMetadataResponse(), nil); err != nil {
		t.Fatalf("after refusals: %v", err)
	}
}

// TestPeerCancelInterruptsOnlyItsCall cancels (without a deadline) calls parked at the broker
// and checks each returns context.Canceled and the interruption never reaches the next call.
func TestPeerCancelInterruptsOnlyItsCall(t *testing.T) {
	b := newBroker()
	c := dialPeer(t, b, "c", peer.WithReconnectBackoff(time.Millisecond, time.Millisecond))
	for i := 0; i < 5; i++ {
		before := len(b.versions(12))
		ctx, cancel := context.WithCancel(context.Background())
		done := make(chan error, 1)
		go func() {
			_, err := c.RequestInto(ctx, kmsg.NewPtrHeartbeatRequest(), kmsg.NewPtrHeartbeatResponse(), nil)
			done <- err
		}()
		deadline := time.Now().Add(5 * time.Second)
		for len(b.versions(12)) == before {
			if time.Now().After(deadline) {
				t.Fatal("heartbeat never arrived")
			}
			time.Sleep(time.Millisecond)
		}
		cancel()
		select {
		case err := <-done:
			if !errors.Is(err, context.Canceled) {
				t.Fatalf("round %d: err = %v", i, err)
			}
		case <-time.After(5 * time.Second):
			t.Fatalf("round %d: cancel did not interrupt the call", i)
		}
		if _, err := c.RequestInto(ctxT(t), metadata("m"), kmsg.NewPtrMetadataResponse(), nil); err != nil {
			t.Fatalf("round %d: call after a cancelled one: %v", i, err)
		}
	}
}

// TestPeerWatchFollowsTheCallsContext: calls that share a ctx share its watch, and cancelling
// it interrupts the call in flight; a ctx cancelled after its calls returned never interrupts
// a later call made with another ctx (that call ends by its own deadline).
func TestPeerWatchFollowsTheCallsContext(t *testing.T) {
	b := newBroker()
	c := dialPeer(t, b, "c", peer.WithReconnectBackoff(time.Millisecond, time.Millisecond))
	parkedCall := func(ctx context.Context) <-chan error {
		before := len(b.versions(12))
		done := make(chan error, 1)
		go func() {
			_, err := c.RequestInto(ctx, kmsg.NewPtrHeartbeatRequest(), kmsg.NewPtrHeartbeatResponse(), nil)
			done <- err
		}()
		deadline := time.Now().Add(5 * time.Second)
		for len(b.versions(12)) == before {
			if time.Now().After(deadline) {
				t.Fatal("heartbeat never arrived")
			}
			time.Sleep(time.Millisecond)
		}
		return done
	}

	shared, cancelShared := context.WithCancel(context.Background())
	for i := 0; i < 3; i++ {
		if _, err := c.RequestInto(shared, metadata("m"), kmsg.NewPtrMetadataResponse(), nil); err != nil {
			t.Fatalf("call %d: %v", i, err)
		}
	}
	done := parkedCall(shared)
	cancelShared()
	if err := <-done; !errors.Is(err, context.Canceled) {
		t.Fatalf("shared ctx cancelled: err = %v", err)
	}

	earlier, cancelEarlier := context.WithCancel(context.Background())
	if _, err := c.RequestInto(earlier, metadata("m"), kmsg.NewPtrMetadataResponse(), nil); err != nil {
		t.Fatal(err)
	}
	later, cancelLater := context.WithTimeout(context.Background(), 300*time.Millisecond)
	defer cancelLater()
	begin := time.Now()
	done = parkedCall(later)
	cancelEarlier()
	if err := <-done; !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("a call was ended by an earlier call's ctx: err = %v after %v", err, time.Since(begin))
	}
}

// TestPeerRequestTimeout: with WithRequestTimeout a call whose ctx has no deadline still ends
// when the broker does not answer, and the next call works on a new connection.
func TestPeerRequestTimeout(t *testing.T) {
	b := newBroker()
	_, addr := start(t, b)
	c, err := peer.Dial(ctxT(t), addr, "c", peer.WithRequestTimeout(200*time.Millisecond),
		peer.WithReconnectBackoff(time.Millisecond, time.Millisecond))
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	begin := time.Now()
	_, err = c.RequestInto(context.Background(), kmsg.NewPtrHeartbeatRequest(), kmsg.NewPtrHeartbeatResponse(), nil)
	if !errors.Is(err, os.ErrDeadlineExceeded) {
		t.Fatalf("err = %v", err)
	}
	if d := time.Since(begin); d < 150*time.Millisecond || d > 5*time.Second {
		t.Fatalf("timed out after %v, want about 200ms", d)
	}
	if _, err := c.Request(context.Background(), metadata("m")); err != nil {
		t.Fatalf("after a timeout: %v", err)
	}
}
