package replica

import (
	"context"
	"encoding/binary"
	"fmt"
	"testing"
	"time"

	"samsa/broker/record"
	"samsa/broker/storage"
	"samsa/kafka"
)

// stepSource is a FetchSource that answers one fetch per step of the
// benchmark loop: each answer holds one batch for every partition asked at
// the lowest fetch offset asked. Once every partition is in the request
// they fetch in lockstep (each gets one batch per round), so every
// answer's records alias one batch patched with the round's offset.
type stepSource struct {
	noEpochSource
	next    chan struct{} // a token per fetch to answer
	applied chan struct{} // sent when the fetcher comes back for the next fetch: the last answer is applied
	batch   []byte
	// answered is how many partitions the last answer held (read by the
	// benchmark after applied).
	answered int
}

func (s *stepSource) Fetch(ctx context.Context, _ LeaderEndpoint, req FollowerFetch, resp *FollowerFetchResponse) error {
	select {
	case s.applied <- struct{}{}:
	case <-ctx.Done():
		return ctx.Err()
	}
	select {
	case <-s.next:
	case <-ctx.Done():
		return ctx.Err()
	}
	resp.Partitions = resp.Partitions[:0]
	lowest := int64(-1)
	for _, p := range req.Partitions {
		if lowest < 0 || p.FetchOffset < lowest {
			lowest = p.FetchOffset
		}
	}
	binary.BigEndian.PutUint64(s.batch, uint64(lowest))
	for _, p := range req.Partitions {
		if p.FetchOffset == lowest {
			resp.Partitions = append(resp.Partitions, FollowerFetchResult{TopicPartition: p.TopicPartition,
				HighWatermark: p.FetchOffset, Records: s.batch})
		}
	}
	s.answered = len(resp.Partitions)
	return nil
}

// BenchmarkReplicaFollowerApply measures what a follower does with one
// fetch answer from a leader of 4,000 partitions, each answering one batch
// (64 KiB of 63 records of 1 KiB, what franz-go's default partitioner
// sends at 12,000 partitions; and one 1 KiB record, where the
// per-partition work shows): the request bookkeeping, applyFetch, the
// follower append to a real log (CRC check, pwrite) and the high watermark
// it follows, per answer. No network: the remote benchmarks cover the
// decoding. Run with -benchtime 3x or so: a 64 KiB op writes 250 MiB.
func BenchmarkReplicaFollowerApply(b *testing.B) {
	for _, c := range []struct{ records, size int }{{63, 1000}, {1, 1024}} {
		hdr := record.NewBuildHeader(0, time.Now().UnixMilli())
		hdr.PartitionLeaderEpoch = 1
		recs := make([]record.Record, c.records)
		for i := range recs {
			recs[i] = record.Record{OffsetDelta: int32(i), Value: make([]byte, c.size)}
		}
		batch, err := record.Build(hdr, recs, record.CodecNone)
		if err != nil {
			b.Fatal(err)
		}
		b.Run(fmt.Sprintf("partitions=4000/batch=%dB", len(batch)), func(b *testing.B) {
			benchFollowerApply(b, 4000, batch, int64(c.records))
		})
	}
}

func benchFollowerApply(b *testing.B, partitions int, batch []byte, records int64) {
	src := &stepSource{noEpochSource: noEpochSource{"stepSource"}, next: make(chan struct{}), applied: make(chan struct{}), batch: batch}
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
	states := make([]PartitionState, partitions)
	for i := range states {
		states[i] = PartitionState{TopicPartition: kafka.TopicPartition{Topic: "t", Partition: int32(i)},
			Leader: 2, LeaderEpoch: 1, ISR: []int32{2, 1}, Replicas: []int32{2, 1}}
	}
	if _, err := m.BecomeLeaderOrFollower(context.Background(), LeaderAndIsr{ControllerEpoch: 1, Partitions: states}); err != nil {
		b.Fatal(err)
	}
	step := func() {
		select {
		case src.next <- struct{}{}:
		case <-time.After(5 * time.Minute):
			b.Fatal("the fetcher did not fetch")
		}
		select {
		case <-src.applied:
		case <-time.After(5 * time.Minute):
			b.Fatal("the fetcher did not apply its answer")
		}
	}
	<-src.applied // the first fetch
	// Untimed rounds until one answers every partition (each has made its
	// first append, which writes its epoch cache), and one more to settle
	// the request's delta.
	warm := 0
	for ; src.answered < partitions; warm++ {
		if warm == 1000 {
			b.Fatalf("after %d rounds, the last answered %d of %d partitions", warm, src.answered, partitions)
		}
		step()
	}
	step()
	base := m.Partition(kafka.TopicPartition{Topic: "t", Partition: 0}).Log().LogEndOffset()
	b.SetBytes(int64(partitions * len(batch)))
	b.ReportAllocs()
	b.ResetTimer()
	for range b.N {
		step()
	}
	b.StopTimer()
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N*partitions), "ns/partition")
	want := base + int64(b.N)*records
	for i := range partitions {
		if leo := m.Partition(kafka.TopicPartition{Topic: "t", Partition: int32(i)}).Log().LogEndOffset(); leo != want {
			b.Fatalf("partition %d: log end offset %d, want %d after %d timed rounds of %d records", i, leo, want, b.N, records)
		}
	}
}
