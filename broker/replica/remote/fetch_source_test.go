package remote

import (
	"bytes"
	"context"
	"encoding/binary"
	"errors"
	"io"
	"net"
	"strconv"
	"testing"
	"time"

	"github.com/sirupsen/logrus"
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"

	"samsa/broker/replica"
	"samsa/broker/storage"
	"samsa/broker/wire"
	"samsa/kafka"
	"samsa/peer"
)

// fakeLeader serves one connection without the server package: ApiVersions
// gets Fetch v4-v12, and each Fetch is answered by answer (or, when the
// request is byte-identical to an earlier one apart from its correlation
// id, with that answer's frame and the correlation id patched, so that a
// warm benchmark loop allocates nothing on this side).
func fakeLeader(tb testing.TB, answer func(*kmsg.FetchRequest) *kmsg.FetchResponse) replica.LeaderEndpoint {
	tb.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		tb.Fatal(err)
	}
	tb.Cleanup(func() { ln.Close() })
	go func() {
		conn, err := ln.Accept()
		if err != nil {
			return
		}
		defer conn.Close()
		var buf, key []byte
		answers := map[string][]byte{} // request without its correlation id -> answer frame
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
			// Byte-identical apart from the correlation id (bytes 4-8).
			key = append(append(key[:0], buf[:4]...), buf[8:]...)
			if frame, ok := answers[string(key)]; ok {
				copy(frame[4:8], buf[4:8]) // after the frame's size
				if _, err := conn.Write(frame); err != nil {
					return
				}
				continue
			}
			req, err := wire.ParseRequest(buf)
			if err != nil {
				return
			}
			var resp kmsg.Response
			switch body := req.Body.(type) {
			case *kmsg.FetchRequest:
				resp = answer(body)
			default:
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
			if req.Key == 1 {
				answers[string(key)] = frame
			}
			if _, err := conn.Write(frame); err != nil {
				return
			}
		}
	}()
	host, port, _ := net.SplitHostPort(ln.Addr().String())
	p, _ := strconv.Atoi(port)
	return replica.LeaderEndpoint{ID: 2, Host: host, Port: int32(p)}
}

// echoAnswer answers each partition with records holding its fetch offset
// (8 bytes, PartitionMaxBytes/8 times) and its high watermark; partition
// 9 answers OFFSET_OUT_OF_RANGE.
func echoAnswer(req *kmsg.FetchRequest) *kmsg.FetchResponse {
	resp := req.ResponseKind().(*kmsg.FetchResponse)
	for _, rt := range req.Topics {
		t := kmsg.NewFetchResponseTopic()
		t.Topic = rt.Topic
		for _, rp := range rt.Partitions {
			p := kmsg.NewFetchResponseTopicPartition()
			p.Partition, p.HighWatermark, p.LogStartOffset = rp.Partition, rp.FetchOffset+1, rp.LogStartOffset
			if rp.Partition == 9 {
				p.ErrorCode = kerr.OffsetOutOfRange.Code
			} else {
				p.RecordBatches = echoRecords(rp.FetchOffset, rp.PartitionMaxBytes)
			}
			t.Partitions = append(t.Partitions, p)
		}
		resp.Topics = append(resp.Topics, t)
	}
	return resp
}

func echoRecords(offset int64, size int32) []byte {
	return bytes.Repeat(binary.BigEndian.AppendUint64(nil, uint64(offset)), int(size)/8)
}

func testFetchSource(tb testing.TB) *FetchSource {
	l := logrus.New()
	l.SetOutput(io.Discard)
	s := NewFetchSource(Config{
		BrokerID:       1,
		PeerOptions:    func() []peer.Option { return []peer.Option{peer.WithLogger(l.WithField("broker", 1))} },
		RequestTimeout: 30 * time.Second,
		Addr:           func(int32) (string, bool) { return "", false },
	})
	tb.Cleanup(s.Close)
	return s
}

// TestReplicaFetchSourceReusesResponse: successive fetches through one
// FollowerFetchResponse (the fetcher's) group partitions by topic, answer
// each partition with its own bytes whatever the earlier answers' sizes,
// and map error codes.
func TestReplicaFetchSourceReusesResponse(t *testing.T) {
	s := testFetchSource(t)
	leader := fakeLeader(t, echoAnswer)
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	var resp replica.FollowerFetchResponse
	rounds := [][]replica.FollowerFetchPartition{
		{{TopicPartition: kafka.TopicPartition{Topic: "a", Partition: 0}, FetchOffset: 10, MaxBytes: 4096},
			{TopicPartition: kafka.TopicPartition{Topic: "b", Partition: 1}, FetchOffset: 20, MaxBytes: 64},
			{TopicPartition: kafka.TopicPartition{Topic: "a", Partition: 2}, FetchOffset: 30, MaxBytes: 800}},
		{{TopicPartition: kafka.TopicPartition{Topic: "b", Partition: 1}, FetchOffset: 21, MaxBytes: 64 << 10}},
		{{TopicPartition: kafka.TopicPartition{Topic: "a", Partition: 9}, FetchOffset: 5, MaxBytes: 64},
			{TopicPartition: kafka.TopicPartition{Topic: "c", Partition: 0}, FetchOffset: 7, MaxBytes: 8}},
		{{TopicPartition: kafka.TopicPartition{Topic: "a", Partition: 0}, FetchOffset: 11, MaxBytes: 4 << 20}},
		{{TopicPartition: kafka.TopicPartition{Topic: "a", Partition: 0}, FetchOffset: 12, MaxBytes: 64}},
		{{TopicPartition: kafka.TopicPartition{Topic: "a", Partition: 0}, FetchOffset: 13, MaxBytes: 64}},
	}
	small := rounds[len(rounds)-1]
	for range frameShrinkAnswers {
		rounds = append(rounds, small)
	}
	for i, parts := range rounds {
		req := replica.FollowerFetch{ReplicaID: 1, MaxWaitMs: 500, MinBytes: 1, MaxBytes: 10 << 20, Partitions: parts}
		if err := s.Fetch(ctx, leader, req, &resp); err != nil {
			t.Fatalf("round %d: %v", i, err)
		}
		// The 4 MiB frame of the catch-up round (round 3) is kept through
		// the small answers that follow, until frameShrinkAnswers of them.
		if sc := resp.Scratch.(*fetchScratch); i > 3 && i < 3+frameShrinkAnswers && cap(sc.frame) < 4<<20 {
			t.Fatalf("round %d: the 4 MiB frame was let go after %d small answers", i, i-3)
		}
		if len(resp.Partitions) != len(parts) {
			t.Fatalf("round %d: %d results for %d partitions", i, len(resp.Partitions), len(parts))
		}
		got := map[kafka.TopicPartition]replica.FollowerFetchResult{}
		for _, r := range resp.Partitions {
			got[r.TopicPartition] = r
		}
		for _, p := range parts {
			r, ok := got[p.TopicPartition]
			switch {
			case !ok:
				t.Fatalf("round %d: no result for %s", i, p.TopicPartition)
			case p.Partition == 9:
				if !errors.Is(r.Err, storage.ErrOffsetOutOfRange) || len(r.Records) != 0 {
					t.Fatalf("round %d: %s: err %v, %d bytes", i, p.TopicPartition, r.Err, len(r.Records))
				}
			case r.Err != nil || r.HighWatermark != p.FetchOffset+1 || !bytes.Equal(r.Records, echoRecords(p.FetchOffset, p.MaxBytes)):
				t.Fatalf("round %d: %s: err %v, hw %d, %d bytes", i, p.TopicPartition, r.Err, r.HighWatermark, len(r.Records))
			}
		}
	}
	// ... and let go after that many.
	if sc := resp.Scratch.(*fetchScratch); cap(sc.frame) > 1<<20 {
		t.Fatalf("a %d-byte frame kept after small answers", cap(sc.frame))
	}
}

// BenchmarkReplicaFetchSourceFetch measures the follower's side of one
// fetch round trip over loopback TCP: building the request, writing it,
// reading and decoding a 1-partition answer with 512 record bytes.
// allocs/op counts the follower only (the fake leader allocates nothing
// once warm).
func BenchmarkReplicaFetchSourceFetch(b *testing.B) {
	s := testFetchSource(b)
	leader := fakeLeader(b, echoAnswer)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	req := replica.FollowerFetch{ReplicaID: 1, MaxWaitMs: 500, MinBytes: 1, MaxBytes: 10 << 20,
		Partitions: []replica.FollowerFetchPartition{{TopicPartition: kafka.TopicPartition{Topic: "bench", Partition: 0},
			FetchOffset: 100, MaxBytes: 512}}}
	var resp replica.FollowerFetchResponse
	for i := 0; i < 2; i++ { // connect, then warm the leader's cached answer
		if err := s.Fetch(ctx, leader, req, &resp); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		if err := s.Fetch(ctx, leader, req, &resp); err != nil {
			b.Fatal(err)
		}
		if len(resp.Partitions) != 1 || len(resp.Partitions[0].Records) != 512 {
			b.Fatalf("answer %+v", resp.Partitions)
		}
	}
}

// BenchmarkReplicaFetchSourceFetchSwing measures the follower's side of
// fetch round trips whose answers swing in size, as at 12,000 partitions
// under franz-go's default partitioner: one answer of 160 partitions × 64
// KiB (replica.fetch.response.max.bytes, 10 MiB), then one of a single
// partition with 1 KiB; an op is the pair. B/op and allocs/op are the
// follower's (the fake leader answers from its cache).
func BenchmarkReplicaFetchSourceFetchSwing(b *testing.B) {
	s := testFetchSource(b)
	leader := fakeLeader(b, echoAnswer)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	large := replica.FollowerFetch{ReplicaID: 1, MaxWaitMs: 500, MinBytes: 1, MaxBytes: 10 << 20}
	for i := range 160 {
		large.Partitions = append(large.Partitions, replica.FollowerFetchPartition{
			TopicPartition: kafka.TopicPartition{Topic: "bench", Partition: int32(i)}, FetchOffset: 100, MaxBytes: 64 << 10})
	}
	small := replica.FollowerFetch{ReplicaID: 1, MaxWaitMs: 500, MinBytes: 1, MaxBytes: 10 << 20,
		Partitions: []replica.FollowerFetchPartition{{TopicPartition: kafka.TopicPartition{Topic: "bench", Partition: 0},
			FetchOffset: 100, MaxBytes: 1 << 10}}}
	var resp replica.FollowerFetchResponse
	fetch := func(req replica.FollowerFetch) {
		if err := s.Fetch(ctx, leader, req, &resp); err != nil {
			b.Fatal(err)
		}
		if len(resp.Partitions) != len(req.Partitions) || len(resp.Partitions[0].Records) != int(req.Partitions[0].MaxBytes) {
			b.Fatalf("%d results for %d partitions", len(resp.Partitions), len(req.Partitions))
		}
	}
	for range 2 { // connect, then warm the leader's cached answers
		fetch(large)
		fetch(small)
	}
	b.SetBytes(160 << 16)
	b.ReportAllocs()
	b.ResetTimer()
	for range b.N {
		fetch(large)
		fetch(small)
	}
}
