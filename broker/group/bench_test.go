package group

import (
	"context"
	"fmt"
	"testing"
	"time"

	"samsa/internal/testwait"
	"samsa/kafka"
)

// BenchmarkGroupCommitOffsets measures an OffsetCommit of 10 partitions
// through the group goroutine into a real storage.Log (no fsync).
func BenchmarkGroupCommitOffsets(b *testing.B) {
	e := &env{t: b, clock: newManualClock(), olog: newStorageOffsetLog(b.TempDir()), cfg: testConfig()}
	e.c = NewCoordinator(Options{Config: e.cfg, Log: e.olog, Clock: e.clock})
	defer e.olog.Close()
	defer e.c.Shutdown()
	p := e.c.PartitionFor("bench")
	e.c.BecomeLeader(p, 0)
	testwait.For(b, 10*time.Second, func() error {
		if _, loading := e.c.Owned(p); loading {
			return fmt.Errorf("loading")
		}
		return nil
	})
	req := CommitRequest{Group: "bench", Generation: -1, RetentionMs: -1}
	for i := int32(0); i < 10; i++ {
		req.Offsets = append(req.Offsets, CommitOffset{TopicPartition: kafka.TopicPartition{Topic: "topic", Partition: i}, Offset: 1, LeaderEpoch: -1})
	}
	ctx := context.Background()
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		if codes := e.c.CommitOffsets(ctx, req); codes[0] != 0 {
			b.Fatal(codes)
		}
	}
}

// BenchmarkGroupHeartbeat measures one Heartbeat round trip through the
// group goroutine.
func BenchmarkGroupHeartbeat(b *testing.B) {
	e := &env{t: b, clock: newManualClock(), olog: newStorageOffsetLog(b.TempDir()), cfg: testConfig()}
	e.start()
	defer e.olog.Close()
	defer e.c.Shutdown()
	ids, gen := e.joinStable("hb", "c1")
	req := HeartbeatRequest{Group: "hb", Generation: gen, MemberID: ids[0]}
	ctx := context.Background()
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		if code := e.c.Heartbeat(ctx, req); code != 0 {
			b.Fatal(code)
		}
	}
}

// BenchmarkGroupEncodeGroupValue measures encoding the metadata of a
// 100-member group.
func BenchmarkGroupEncodeGroupValue(b *testing.B) {
	v := GroupValue{ProtocolType: "consumer", Generation: 7, Protocol: "range", Leader: "m0", CurrentStateTimestamp: 1}
	for i := 0; i < 100; i++ {
		v.Members = append(v.Members, MemberValue{MemberID: fmt.Sprintf("consumer-%d-0123456789abcdef", i),
			ClientID: "consumer", ClientHost: "/10.0.0.1", RebalanceTimeoutMs: 60000, SessionTimeoutMs: 10000,
			Subscription: make([]byte, 64), Assignment: make([]byte, 128)})
	}
	b.ReportAllocs()
	for i := 0; i < b.N; i++ {
		EncodeGroupValue(v)
	}
}

// BenchmarkGroupDecodeGroupValue is the load-time decode of the same value.
func BenchmarkGroupDecodeGroupValue(b *testing.B) {
	v := GroupValue{ProtocolType: "consumer", Generation: 7, Protocol: "range", Leader: "m0", CurrentStateTimestamp: 1}
	for i := 0; i < 100; i++ {
		v.Members = append(v.Members, MemberValue{MemberID: fmt.Sprintf("consumer-%d-0123456789abcdef", i),
			ClientID: "consumer", ClientHost: "/10.0.0.1", Subscription: make([]byte, 64), Assignment: make([]byte, 128)})
	}
	raw := EncodeGroupValue(v)
	b.SetBytes(int64(len(raw)))
	b.ReportAllocs()
	for i := 0; i < b.N; i++ {
		if _, err := DecodeGroupValue(raw); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkGroupLoadPartition measures replaying an offsets partition of
// 100 groups x 100 partitions x 5 commits (50,000 records in 500 batches)
// from a real storage.Log.
func BenchmarkGroupLoadPartition(b *testing.B) {
	cfg := testConfig()
	cfg.NumPartitions = 1
	e := &env{t: b, clock: newManualClock(), olog: newStorageOffsetLog(b.TempDir()), cfg: cfg}
	e.start()
	defer e.olog.Close()
	defer e.c.Shutdown()
	ctx := context.Background()
	for round := 0; round < 5; round++ {
		for g := 0; g < 100; g++ {
			req := CommitRequest{Group: fmt.Sprintf("group-%d", g), Generation: -1, RetentionMs: -1}
			for p := int32(0); p < 100; p++ {
				req.Offsets = append(req.Offsets, CommitOffset{TopicPartition: kafka.TopicPartition{Topic: "topic", Partition: p}, Offset: int64(round), LeaderEpoch: -1})
			}
			if codes := e.c.CommitOffsets(ctx, req); codes[0] != 0 {
				b.Fatal(codes)
			}
		}
	}
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		groups, err := e.c.replay(ctx, 0)
		if err != nil || len(groups) != 100 {
			b.Fatal(len(groups), err)
		}
	}
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N)/50000, "ns/record")
}
