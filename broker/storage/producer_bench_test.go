package storage

import (
	"encoding/binary"
	"path/filepath"
	"testing"

	"samsa/broker/record"
	"samsa/kafka"
)

// BenchmarkStorageAppendIdempotent compares AppendAsLeader of the same
// 16 KiB batch without a producer id and as an idempotent producer's
// successive batches (sequence check, state update), in the same run.
// Run: go test -run XXX -bench BenchmarkStorageAppendIdempotent ./broker/storage
func BenchmarkStorageAppendIdempotent(b *testing.B) {
	plain := benchBatch(b)
	for _, idem := range []bool{false, true} {
		name := "plain"
		if idem {
			name = "idempotent"
		}
		b.Run(name, func(b *testing.B) {
			l, err := OpenLog(LogOptions{Dir: filepath.Join(b.TempDir(), "t-0"), TP: kafka.TopicPartition{Topic: "t", Partition: 0},
				Config: DefaultConfig(), CleanShutdown: true})
			if err != nil {
				b.Fatal(err)
			}
			defer l.Close()
			batch := record.Batch(append([]byte(nil), plain...))
			n := int32(batch.LastOffsetDelta()) + 1
			if idem {
				// Producer id 1, epoch 0 at header offsets 43 and 51 (inside
				// the CRC, so it is recomputed for each sequence).
				binary.BigEndian.PutUint64(batch[43:], 1)
				binary.BigEndian.PutUint16(batch[51:], 0)
			}
			b.SetBytes(int64(len(batch)))
			b.ReportAllocs()
			b.ResetTimer()
			for i := 0; i < b.N; i++ {
				if idem {
					binary.BigEndian.PutUint32(batch[53:], uint32(int32(i)*n))
					batch.UpdateCRC()
				}
				if _, err := l.AppendAsLeader(batch, 1); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
