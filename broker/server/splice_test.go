package server

import (
	"bytes"
	"context"
	"io"
	"net"
	"os"
	"path/filepath"
	"sync/atomic"
	"testing"

	"github.com/twmb/franz-go/pkg/kmsg"

	"samsa/broker/wire"
)

// fileRegion is a wire.Region over part of a file, as storage's FileRegion is.
type fileRegion struct {
	f      *os.File
	off, n int64
	sawTCP *atomic.Bool
}

func (r fileRegion) Len() int64 { return r.n }
func (r fileRegion) WriteTo(w io.Writer) (int64, error) {
	_, ok := w.(*net.TCPConn)
	r.sawTCP.Store(ok)
	return io.Copy(w, io.NewSectionReader(r.f, r.off, r.n)) // TCPConn.ReadFrom: sendfile
}

// TestServerSplicedFetchFromFile: a handler returns a wire.Spliced Fetch response whose record
// bytes come from a file; the server hands the raw *net.TCPConn to WriteResponse (so the copy
// can be sendfile) and the client decodes the records.
func TestServerSplicedFetchFromFile(t *testing.T) {
	data := make([]byte, 3<<20)
	for i := range data {
		data[i] = byte(i * 31)
	}
	path := filepath.Join(t.TempDir(), "00000000000000000000.log")
	if err := os.WriteFile(path, data, 0o644); err != nil {
		t.Fatal(err)
	}
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	var sawTCP atomic.Bool
	h := HandlerFunc(func(ctx context.Context, c *Conn, req *wire.Request) (kmsg.Response, error) {
		body := req.Body.(*kmsg.FetchRequest)
		resp := body.ResponseKind().(*kmsg.FetchResponse)
		sp := wire.NewSpliced(resp)
		for _, rt := range body.Topics {
			tp := kmsg.NewFetchResponseTopic()
			tp.Topic = rt.Topic
			for _, rp := range rt.Partitions {
				pp := kmsg.NewFetchResponseTopicPartition()
				pp.Partition = rp.Partition
				pp.RecordBatches = sp.Placeholder(fileRegion{f, rp.FetchOffset, int64(rp.PartitionMaxBytes), &sawTCP})
				tp.Partitions = append(tp.Partitions, pp)
			}
			resp.Topics = append(resp.Topics, tp)
		}
		return sp, nil
	})
	_, addr, _ := startServer(t, h, nil)
	c := dial(t, addr)
	for _, v := range []int16{4, 11, 12} {
		req := kmsg.NewPtrFetchRequest()
		req.SetVersion(v)
		ft := kmsg.NewFetchRequestTopic()
		ft.Topic = "t"
		for p, rng := range [][2]int64{{0, 100}, {5000, 2 << 20}, {10, 0}} {
			fp := kmsg.NewFetchRequestTopicPartition()
			fp.Partition = int32(p)
			fp.FetchOffset, fp.PartitionMaxBytes = rng[0], int32(rng[1])
			ft.Partitions = append(ft.Partitions, fp)
		}
		req.Topics = append(req.Topics, ft)
		resp := c.roundTrip(req).(*kmsg.FetchResponse)
		for i, pp := range resp.Topics[0].Partitions {
			want := data[ft.Partitions[i].FetchOffset:][:ft.Partitions[i].PartitionMaxBytes]
			if !bytes.Equal(pp.RecordBatches, want) {
				t.Fatalf("v%d partition %d: %d bytes, want %d", v, i, len(pp.RecordBatches), len(want))
			}
		}
	}
	if !sawTCP.Load() {
		t.Fatal("region was not written to the *net.TCPConn")
	}
}
