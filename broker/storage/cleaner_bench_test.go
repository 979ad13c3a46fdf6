package storage

import (
	"bytes"
	"context"
	"fmt"
	"testing"

	"samsa/broker/record"
	"samsa/kafka"
)

// BenchmarkStorageCleanerClean measures one full cleaning pass over 10
// segments of 100 batches × 10 records (1,000 distinct keys, each written
// 10 times, 100-byte values), uncompressed. Bytes are the bytes read.
func BenchmarkStorageCleanerClean(b *testing.B) {
	cfg := cleanerTestConfig()
	value := bytes.Repeat([]byte("v"), 100)
	for i := 0; i < b.N; i++ {
		b.StopTimer()
		l, err := OpenLog(LogOptions{Dir: b.TempDir() + "/t-0", TP: kafka.TopicPartition{Topic: "t", Partition: 0}, Config: cfg, CleanShutdown: true})
		if err != nil {
			b.Fatal(err)
		}
		n := 0
		for seg := 0; seg < 10; seg++ {
			for batch := 0; batch < 100; batch++ {
				recs := make([]record.Record, 10)
				for r := range recs {
					recs[r] = record.Record{OffsetDelta: int32(r), Key: []byte(fmt.Sprintf("key-%04d", n%1000)), Value: value}
					n++
				}
				bt, err := record.Build(record.NewBuildHeader(0, 1000), recs, record.CodecNone)
				if err != nil {
					b.Fatal(err)
				}
				if _, err := l.AppendAsLeader(bt, 0); err != nil {
					b.Fatal(err)
				}
			}
			if err := l.Roll(); err != nil {
				b.Fatal(err)
			}
		}
		l.SetHighWatermark(l.LogEndOffset())
		b.SetBytes(l.Size())
		c := NewCleaner(CleanerOptions{Config: DefaultCleanerConfig(), Logs: func() []*Log { return []*Log{l} }})
		b.StartTimer()
		if ok, err := c.CleanOnce(context.Background()); !ok || err != nil {
			b.Fatal(ok, err)
		}
		b.StopTimer()
		l.Close()
	}
}

// BenchmarkStorageCleanerOffsetMap measures offset map inserts of new
// 12-byte keys.
func BenchmarkStorageCleanerOffsetMap(b *testing.B) {
	keys := make([][]byte, 1<<16)
	for i := range keys {
		keys[i] = []byte(fmt.Sprintf("key-%08d", i))
	}
	om := newOffsetMap(1 << 30)
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		if i%len(keys) == 0 {
			om.reset()
		}
		om.put(keys[i%len(keys)], int64(i))
	}
}

// BenchmarkStorageCheckpointRoundTrip encodes and parses an offset
// checkpoint of 10,000 partitions.
func BenchmarkStorageCheckpointRoundTrip(b *testing.B) {
	m := make(map[kafka.TopicPartition]int64)
	for i := 0; i < 10000; i++ {
		m[kafka.TopicPartition{Topic: fmt.Sprintf("topic-%d", i/50), Partition: int32(i % 50)}] = int64(i) * 1000
	}
	for i := 0; i < b.N; i++ {
		data, err := EncodeOffsetCheckpoint(m)
		if err != nil {
			b.Fatal(err)
		}
		b.SetBytes(int64(len(data)))
		if _, err := ReadOffsetCheckpoint(bytes.NewReader(data), "bench"); err != nil {
			b.Fatal(err)
		}
	}
}
