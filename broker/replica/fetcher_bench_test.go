package replica

import (
	"context"
	"encoding/binary"
	"errors"
	"sync/atomic"
	"testing"
	"time"

	"samsa/broker/record"
	"samsa/broker/storage"
	"samsa/kafka"
)

// loopSource is a FetchSource that answers every fetch at once with one
// batch at the fetch offset (a leader that always has one more batch), so
// a fetcher spins through fetch -> append -> fetch. After limit answers
// it parks fetches until ctx ends, and closes done.
type loopSource struct {
	noEpochSource
	start   chan struct{} // the first fetch waits for it
	done    chan struct{}
	limit   int64
	calls   atomic.Int64
	batch   []byte // patched in place with each fetch offset
	records int64
}

func (s *loopSource) Fetch(ctx context.Context, _ LeaderEndpoint, req FollowerFetch, resp *FollowerFetchResponse) error {
	n := s.calls.Add(1)
	if n == 1 {
		<-s.start
	}
	if n > s.limit {
		if n == s.limit+1 {
			close(s.done)
		}
		<-ctx.Done()
		return ctx.Err()
	}
	resp.Partitions = resp.Partitions[:0]
	for _, p := range req.Partitions {
		binary.BigEndian.PutUint64(s.batch, uint64(p.FetchOffset))
		resp.Partitions = append(resp.Partitions, FollowerFetchResult{TopicPartition: p.TopicPartition,
			HighWatermark: p.FetchOffset, LogStartOffset: 0, Records: s.batch})
	}
	return nil
}

// noEpochSource is the part of a benchmark's FetchSource that the
// benchmarks never reach usefully: no leader epochs (so no truncation) and
// no LogRange.
type noEpochSource struct{ name string }

func (n noEpochSource) EndOffsetsForEpoch(_ context.Context, _ LeaderEndpoint, q map[kafka.TopicPartition]EpochQuery) (map[kafka.TopicPartition]EpochEndOffset, error) {
	out := make(map[kafka.TopicPartition]EpochEndOffset, len(q))
	for tp := range q {
		out[tp] = EpochEndOffset{LeaderEpoch: -1, EndOffset: -1}
	}
	return out, nil
}

func (n noEpochSource) LogRange(context.Context, LeaderEndpoint, kafka.TopicPartition) (int64, int64, error) {
	return 0, 0, errors.New(n.name + ": no LogRange")
}

// BenchmarkReplicaFollowerFetchAppend measures one follower cycle without
// the network: build the fetch request, take the leader's answer (one
// 100-byte record in a batch), validate and append it to a real log,
// follow the high watermark, and send the next fetch. Compare with
// benchstat; allocs/op is what the follower side allocates per fetch.
func BenchmarkReplicaFollowerFetchAppend(b *testing.B) {
	hdr := record.NewBuildHeader(0, time.Now().UnixMilli())
	hdr.PartitionLeaderEpoch = 1
	batch, err := record.Build(hdr, []record.Record{{Value: make([]byte, 100)}}, record.CodecNone)
	if err != nil {
		b.Fatal(err)
	}
	src := &loopSource{noEpochSource: noEpochSource{"loopSource"}, start: make(chan struct{}), done: make(chan struct{}), limit: int64(b.N), batch: batch}
	logs := &dirLogs{dir: b.TempDir(), logs: map[kafka.TopicPartition]*storage.Log{}}
	m, err := New(Config{BrokerID: 1, Logs: logs, Fetcher: FetcherConfig{Source: src, BackoffMs: 1000,
		MaxWaitMs: 500, MinBytes: 1, MaxBytes: 10 << 20, PartitionMaxBytes: 1 << 20},
		TopicConfig: func(string) (TopicConfig, error) {
			return TopicConfig{Log: storage.DefaultConfig(), MinInsyncReplicas: 1}, nil
		}})
	if err != nil {
		b.Fatal(err)
	}
	defer func() { m.Close(); logs.closeAll() }()
	if _, err := m.BecomeLeaderOrFollower(context.Background(), LeaderAndIsr{ControllerEpoch: 1,
		Partitions: []PartitionState{{TopicPartition: tp0, Leader: 2, LeaderEpoch: 1, ISR: []int32{2, 1}, Replicas: []int32{2, 1}}}}); err != nil {
		b.Fatal(err)
	}
	b.ReportAllocs()
	b.ResetTimer()
	close(src.start)
	select {
	case <-src.done:
	case <-time.After(5 * time.Minute):
		b.Fatal("the fetcher did not finish")
	}
	b.StopTimer()
	if leo := m.Partition(tp0).Log().LogEndOffset(); leo != int64(b.N) {
		b.Fatalf("log end offset %d after %d fetches", leo, b.N)
	}
}
