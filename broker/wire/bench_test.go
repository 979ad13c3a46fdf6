package wire

import (
	"bufio"
	"bytes"
	"io"
	"testing"

	"github.com/twmb/franz-go/pkg/kmsg"
)

func produceFrame(recordBytes int) []byte {
	p := kmsg.NewPtrProduceRequest()
	p.SetVersion(8)
	p.Acks = -1
	t := kmsg.NewProduceRequestTopic()
	t.Topic = "bench"
	pp := kmsg.NewProduceRequestTopicPartition()
	pp.Records = make([]byte, recordBytes)
	t.Partitions = append(t.Partitions, pp)
	p.Topics = append(p.Topics, t)
	id := "bench"
	return AppendRequest(nil, p, 1, &id)
}

func BenchmarkWireReadAndParseProduce1MiB(b *testing.B) {
	frame := produceFrame(1<<20 - 200)
	b.SetBytes(int64(len(frame)))
	r := bytes.NewReader(frame)
	for b.Loop() {
		r.Reset(frame)
		body, err := ReadFrame(r, 0, nil)
		if err != nil {
			b.Fatal(err)
		}
		if _, err := ParseRequest(body); err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkWireParseMetadata(b *testing.B) {
	req := kmsg.NewPtrMetadataRequest()
	req.SetVersion(9)
	for _, name := range []string{"a", "b", "c", "orders", "payments"} {
		t := kmsg.NewMetadataRequestTopic()
		t.Topic = kmsg.StringPtr(name)
		req.Topics = append(req.Topics, t)
	}
	frame := AppendRequest(nil, req, 1, nil)[4:]
	b.SetBytes(int64(len(frame)))
	for b.Loop() {
		if _, err := ParseRequest(frame); err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkWireSplicedFetch1MiB(b *testing.B) {
	body := kmsg.NewPtrFetchRequest()
	body.SetVersion(11)
	req, err := ParseRequest(AppendRequest(nil, body, 9, nil)[4:])
	if err != nil {
		b.Fatal(err)
	}
	data := BytesRegion(make([]byte, 1<<20))
	b.SetBytes(int64(len(data)))
	for b.Loop() {
		resp := kmsg.NewPtrFetchResponse()
		sp := NewSpliced(resp)
		fillFetch(resp, func(i int) []byte {
			if i == 0 {
				return sp.Placeholder(data)
			}
			return nil
		})
		if err := sp.WriteResponse(io.Discard, req); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkWireReadFramePooledProduce reads 4 MiB produce frames (a producer's request of
// many batches) through a FramePool and returns each, as the server does with every Produce
// frame once answered.
func BenchmarkWireReadFramePooledProduce(b *testing.B) {
	frame := produceFrame(4 << 20)
	b.SetBytes(int64(len(frame)))
	pool := NewFramePool()
	pooled := func(int16) bool { return true }
	r := bytes.NewReader(frame)
	br := bufio.NewReaderSize(r, 16<<10)
	for b.Loop() {
		r.Reset(frame)
		br.Reset(r)
		body, err := ReadFramePooled(br, 0, pool, pooled)
		if err != nil {
			b.Fatal(err)
		}
		pool.Put(body)
	}
}
