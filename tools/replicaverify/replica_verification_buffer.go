package replicaverify

// The verification half of kafka-replica-verification: Kafka 2.8's
// ReplicaBuffer.verifyCheckSum over one round of fetched data, and the
// shallow record-batch reader it needs (offsets and CRCs only).

import (
	"encoding/binary"
	"fmt"
	"io"
	"sort"
	"time"

	"samsa/kafka"
)

// rvDateLayout is Kafka's "yyyy-MM-dd HH:mm:ss,SSS" (local time).
const rvDateLayout = "2006-01-02 15:04:05,000"

// rvBatch is Kafka's MessageInfo: a batch's last offset, next offset and
// checksum (the stored CRC, unsigned).
type rvBatch struct {
	lastOffset, nextOffset int64
	checksum               uint32
}

// rvReplicaData is one replica's fetch answer for one partition.
type rvReplicaData struct {
	highWatermark int64
	records       []byte
}

// rvShallowBatches splits records into batches, as Kafka's
// batches().iterator: a v2 batch gives base+lastOffsetDelta and its CRC;
// a v0/v1 entry (message set) gives its offset and its message CRC. A
// partial entry at the end (the fetch size cut it) ends the list; a
// malformed one is an error.
func rvShallowBatches(records []byte) ([]rvBatch, error) {
	var out []rvBatch
	for pos := 0; len(records)-pos >= 12; {
		base := int64(binary.BigEndian.Uint64(records[pos:]))
		size := int32(binary.BigEndian.Uint32(records[pos+8:]))
		if size < 14 {
			return out, fmt.Errorf("record size %d is less than the minimum record overhead (14)", size)
		}
		end := pos + 12 + int(size)
		if end > len(records) || end < pos {
			break // partial batch
		}
		b := records[pos:end]
		switch magic := b[16]; magic {
		case 2:
			if len(b) < 27 {
				return out, fmt.Errorf("record batch at offset %d is too short", base)
			}
			last := base + int64(int32(binary.BigEndian.Uint32(b[23:])))
			out = append(out, rvBatch{lastOffset: last, nextOffset: last + 1, checksum: binary.BigEndian.Uint32(b[17:])})
		case 0, 1:
			out = append(out, rvBatch{lastOffset: base, nextOffset: base + 1, checksum: binary.BigEndian.Uint32(b[12:])})
		default:
			return out, fmt.Errorf("unknown magic value %d at offset %d", magic, base)
		}
		pos = end
	}
	return out, nil
}

// rvBuffer holds the verification state across rounds (Kafka's
// ReplicaBuffer).
type rvBuffer struct {
	out            io.Writer
	now            func() time.Time
	reportInterval time.Duration
	fetchOffsets   map[kafka.TopicPartition]int64
	partitions     []kafka.TopicPartition // sorted
	lastReport     time.Time
}

func newRVBuffer(out io.Writer, now func() time.Time, reportInterval time.Duration, initial map[kafka.TopicPartition]int64) *rvBuffer {
	b := &rvBuffer{out: out, now: now, reportInterval: reportInterval, fetchOffsets: initial, lastReport: now()}
	for tp := range initial {
		b.partitions = append(b.partitions, tp)
	}
	kafka.SortPartitions(b.partitions)
	return b
}

// rvMismatch is the offset mismatch that ends Kafka's tool (exit 1).
type rvMismatch struct{ line string }

func (e rvMismatch) Error() string { return e.line }

// verify compares one round of fetched data (data[tp][replicaID]) and
// advances the verified offsets; it prints the checksum mismatches and,
// once the report interval has passed, the max lag line. An offset
// mismatch is printed and returned as rvMismatch.
func (b *rvBuffer) verify(data map[kafka.TopicPartition]map[int32]rvReplicaData) error {
	maxLag, offsetWithMaxLag := int64(-1), int64(-1)
	var maxLagTP *kafka.TopicPartition
	for i := range b.partitions {
		tp := b.partitions[i]
		perReplica := data[tp]
		ids := make([]int32, 0, len(perReplica))
		maxHW := int64(-1)
		batches := map[int32][]rvBatch{}
		for id, d := range perReplica {
			ids = append(ids, id)
			maxHW = max(maxHW, d.highWatermark)
			bs, err := rvShallowBatches(d.records)
			if err != nil {
				return fmt.Errorf("Error in processing replica %d in partition %s at offset %d.: %v", id, tp.String(), b.fetchOffsets[tp], err)
			}
			batches[id] = bs
		}
		sort.Slice(ids, func(i, j int) bool { return ids[i] < ids[j] })
		for step := 0; len(ids) > 0; step++ {
			inAll := true
			var first *rvBatch
			firstID := int32(-1)
			for _, id := range ids {
				bs := batches[id]
				if step >= len(bs) {
					inAll = false
					continue
				}
				batch := bs[step]
				if batch.lastOffset >= perReplica[id].highWatermark {
					inAll = false // only verify up to the high watermark
					continue
				}
				if first == nil {
					first, firstID = &batch, id
					continue
				}
				if first.lastOffset != batch.lastOffset {
					line := fmt.Sprintf("%s: partition %s: replica %d's offset %d doesn't match replica %d's offset %d",
						b.now().Format(rvDateLayout), tp.String(), firstID, first.lastOffset, id, batch.lastOffset)
					fmt.Fprintln(b.out, line)
					return rvMismatch{line}
				}
				if first.checksum != batch.checksum {
					fmt.Fprintf(b.out, "%s: partition %s has unmatched checksum at offset %d; replica %d's checksum %d; replica %d's checksum %d\n",
						b.now().Format(rvDateLayout), tp.String(), batch.lastOffset, firstID, first.checksum, id, batch.checksum)
				}
			}
			if !inAll || first == nil {
				break
			}
			b.fetchOffsets[tp] = first.nextOffset
		}
		if lag := maxHW - b.fetchOffsets[tp]; lag > maxLag {
			offsetWithMaxLag = b.fetchOffsets[tp]
			maxLag = lag
			maxLagTP = &b.partitions[i]
		}
	}
	now := b.now()
	if now.Sub(b.lastReport) > b.reportInterval {
		name := "null"
		if maxLagTP != nil {
			name = maxLagTP.String()
		}
		fmt.Fprintf(b.out, "%s: max lag is %d for partition %s at offset %d among %d partitions\n",
			now.Format(rvDateLayout), maxLag, name, offsetWithMaxLag, len(b.partitions))
		b.lastReport = now
	}
	return nil
}
