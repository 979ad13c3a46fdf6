package server

import (
	"context"
	"net"
	"os"
	"path/filepath"
	"sync/atomic"
	"testing"

	"github.com/twmb/franz-go/pkg/kmsg"

	"samsa/broker/wire"
)

// BenchmarkServerMetadataRoundTrip measures one request/response at a time over loopback.
func BenchmarkServerMetadataRoundTrip(b *testing.B) {
	_, addr, _ := startServerB(b, newTestHandler())
	conn, err := net.Dial("tcp", addr)
	if err != nil {
		b.Fatal(err)
	}
	defer conn.Close()
	req := metadataReq(9, "orders")
	var out []byte
	corr := int32(0)
	for b.Loop() {
		corr++
		out = wire.AppendRequest(out[:0], req, corr, nil)
		if _, err := conn.Write(out); err != nil {
			b.Fatal(err)
		}
		frame, err := wire.ReadFrame(conn, 0, nil)
		if err != nil {
			b.Fatal(err)
		}
		if _, err := wire.ParseResponse(frame, req, corr); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkServerProducePipelined measures request bytes per second for 64 KiB produce
// requests (acks=1, empty response) pipelined on one connection (the writer never waits).
func BenchmarkServerProducePipelined(b *testing.B) {
	_, addr, _ := startServerB(b, newTestHandler())
	conn, err := net.Dial("tcp", addr)
	if err != nil {
		b.Fatal(err)
	}
	defer conn.Close()
	p := kmsg.NewPtrProduceRequest()
	p.SetVersion(8)
	p.Acks = 1
	tp := kmsg.NewProduceRequestTopic()
	tp.Topic = "bench"
	pp := kmsg.NewProduceRequestTopicPartition()
	pp.Records = make([]byte, 64<<10)
	tp.Partitions = append(tp.Partitions, pp)
	p.Topics = append(p.Topics, tp)
	frame := wire.AppendRequest(nil, p, 1, nil)
	b.SetBytes(int64(len(frame)))
	done := make(chan error, 1)
	n := b.N
	go func() {
		for i := 0; i < n; i++ {
			f, err := wire.ReadFrame(conn, 0, nil)
			if err != nil {
				done <- err
				return
			}
			_ = f
		}
		done <- nil
	}()
	b.ResetTimer()
	for i := 0; i < n; i++ {
		if _, err := conn.Write(frame); err != nil {
			b.Fatal(err)
		}
	}
	if err := <-done; err != nil {
		b.Fatal(err)
	}
}

// BenchmarkServerSplicedFetch measures a 1 MiB fetch response spliced from a file (sendfile).
func BenchmarkServerSplicedFetch(b *testing.B) { benchFetch(b, true) }

// BenchmarkServerInlineFetch is the same fetch with the records read into memory and encoded
// inline, for a side-by-side ratio with the spliced path.
func BenchmarkServerInlineFetch(b *testing.B) { benchFetch(b, false) }

func benchFetch(b *testing.B, spliced bool) {
	path := filepath.Join(b.TempDir(), "seg.log")
	if err := os.WriteFile(path, make([]byte, 1<<20), 0o644); err != nil {
		b.Fatal(err)
	}
	f, err := os.Open(path)
	if err != nil {
		b.Fatal(err)
	}
	defer f.Close()
	var saw atomic.Bool
	h := HandlerFunc(func(ctx context.Context, c *Conn, req *wire.Request) (kmsg.Response, error) {
		resp := req.Body.ResponseKind().(*kmsg.FetchResponse)
		sp := wire.NewSpliced(resp)
		tp := kmsg.NewFetchResponseTopic()
		tp.Topic = "t"
		pp := kmsg.NewFetchResponseTopicPartition()
		if spliced {
			pp.RecordBatches = sp.Placeholder(fileRegion{f, 0, 1 << 20, &saw})
		} else {
			pp.RecordBatches = make([]byte, 1<<20)
			if _, err := f.ReadAt(pp.RecordBatches, 0); err != nil {
				return nil, err
			}
		}
		tp.Partitions = append(tp.Partitions, pp)
		resp.Topics = append(resp.Topics, tp)
		if !spliced {
			return resp, nil
		}
		return sp, nil
	})
	_, addr, _ := startServerB(b, h)
	conn, err := net.Dial("tcp", addr)
	if err != nil {
		b.Fatal(err)
	}
	defer conn.Close()
	req := kmsg.NewPtrFetchRequest()
	req.SetVersion(11)
	out := wire.AppendRequest(nil, req, 1, nil)
	b.SetBytes(1 << 20)
	buf := make([]byte, 0, 2<<20)
	for b.Loop() {
		if _, err := conn.Write(out); err != nil {
			b.Fatal(err)
		}
		if _, err := wire.ReadFrame(conn, 0, buf); err != nil {
			b.Fatal(err)
		}
	}
}

func startServerB(b *testing.B, h Handler) (*Server, string, any) {
	b.Helper()
	s, addr := newListening(b, Options{Handler: h})
	go s.Serve(context.Background())
	b.Cleanup(func() { s.Shutdown(context.Background()) })
	return s, addr, nil
}
