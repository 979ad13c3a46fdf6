package record

import (
	"bytes"
	"encoding/binary"
	"errors"
	"testing"
)

// emptyBatch builds a v2 batch with no records by hand, field by field, as
// Kafka's DefaultRecordBatch.writeEmptyHeader lays it out.
func emptyBatch(baseOffset int64, lastOffsetDelta int32) []byte {
	b := make([]byte, HeaderSize)
	binary.BigEndian.PutUint64(b[0:], uint64(baseOffset))
	binary.BigEndian.PutUint32(b[8:], MinBatchLength)
	binary.BigEndian.PutUint32(b[12:], 7) // leader epoch
	b[16] = 2
	binary.BigEndian.PutUint16(b[21:], 0x0010) // transactional
	binary.BigEndian.PutUint32(b[23:], uint32(lastOffsetDelta))
	binary.BigEndian.PutUint64(b[27:], 1000)
	binary.BigEndian.PutUint64(b[35:], 2000)
	binary.BigEndian.PutUint64(b[43:], 42)
	binary.BigEndian.PutUint16(b[51:], 3)
	binary.BigEndian.PutUint32(b[53:], 10)
	binary.BigEndian.PutUint32(b[57:], 0)
	binary.BigEndian.PutUint32(b[17:], crc32c(b[21:]))
	return b
}

func TestRecordBatchHeaderAccessors(t *testing.T) {
	b := Batch(emptyBatch(100, 4))
	if got := b.BaseOffset(); got != 100 {
		t.Fatalf("BaseOffset = %d", got)
	}
	if b.BatchLength() != MinBatchLength || b.Size() != HeaderSize {
		t.Fatalf("BatchLength = %d, Size = %d", b.BatchLength(), b.Size())
	}
	if b.PartitionLeaderEpoch() != 7 || b.Magic() != 2 || !b.IsTransactional() || b.IsControl() {
		t.Fatalf("header: %s", b)
	}
	if b.LastOffset() != 104 || b.NextOffset() != 105 || b.FirstTimestamp() != 1000 || b.MaxTimestamp() != 2000 {
		t.Fatalf("offsets/timestamps: %s", b)
	}
	if b.ProducerID() != 42 || b.ProducerEpoch() != 3 || b.BaseSequence() != 10 || b.LastSequence() != 14 {
		t.Fatalf("producer: %s", b)
	}
	if b.NumRecords() != 0 || b.Compression() != CodecNone || b.TimestampType() != TimestampCreateTime {
		t.Fatalf("records: %s", b)
	}
	if !b.CRCValid() {
		t.Fatal("CRC invalid")
	}
	h := b.Header()
	if h.LastOffset() != 104 || h.Size() != HeaderSize || !h.IsTransactional() {
		t.Fatalf("Header() = %+v", h)
	}
}

func TestRecordBatchSetters(t *testing.T) {
	b := Batch(emptyBatch(0, 0))
	crc := b.CRC()
	b.SetBaseOffset(555)
	b.SetPartitionLeaderEpoch(9)
	if b.BaseOffset() != 555 || b.PartitionLeaderEpoch() != 9 || b.CRC() != crc || !b.CRCValid() {
		t.Fatalf("after setters: %s", b)
	}
	b.SetLogAppendTime(123456)
	if b.TimestampType() != TimestampLogAppendTime || b.MaxTimestamp() != 123456 || b.FirstTimestamp() != 1000 {
		t.Fatalf("after SetLogAppendTime: %s", b)
	}
	if !b.CRCValid() || b.CRC() == crc {
		t.Fatal("CRC not recomputed")
	}
}

func TestRecordNextBatch(t *testing.T) {
	a, b := emptyBatch(0, 0), emptyBatch(1, 0)
	stream := append(append([]byte{}, a...), b...)
	got, rest, err := NextBatch(stream)
	if err != nil || !bytes.Equal(got, a) || !bytes.Equal(rest, b) {
		t.Fatalf("NextBatch = %v, %d rest, %v", got, len(rest), err)
	}
	for _, n := range []int{0, 5, 11, 12, 17, 60} {
		if _, _, err := NextBatch(a[:n]); !errors.Is(err, ErrShortBatch) {
			t.Fatalf("NextBatch(%d bytes) err = %v, want ErrShortBatch", n, err)
		}
	}
	bad := append([]byte{}, a...)
	binary.BigEndian.PutUint32(bad[8:], 48)
	if _, _, err := NextBatch(bad); !errors.Is(err, ErrCorrupt) {
		t.Fatalf("short length err = %v", err)
	}
	binary.BigEndian.PutUint32(bad[8:], 0xffffffff)
	if _, _, err := NextBatch(bad); !errors.Is(err, ErrCorrupt) {
		t.Fatalf("negative length err = %v", err)
	}
	bad = append([]byte{}, a...)
	bad[16] = 1
	if _, _, err := NextBatch(bad); !errors.Is(err, ErrCorrupt) {
		t.Fatalf("magic err = %v", err)
	}
}

func TestRecordReadHeaderAt(t *testing.T) {
	stream := append(emptyBatch(0, 2), emptyBatch(3, 0)...)
	r := bytes.NewReader(stream)
	h, err := ReadHeaderAt(r, HeaderSize)
	if err != nil || h.BaseOffset != 3 || h.Size() != HeaderSize {
		t.Fatalf("ReadHeaderAt = %+v, %v", h, err)
	}
	if _, err := ReadHeaderAt(bytes.NewReader(stream[:HeaderSize+30]), HeaderSize); !errors.Is(err, ErrShortBatch) {
		t.Fatalf("short header err = %v", err)
	}
	if _, err := ReadHeaderAt(r, int64(len(stream))); !errors.Is(err, ErrShortBatch) {
		t.Fatalf("at EOF err = %v", err)
	}
}

func TestRecordBatchSetMaxTimestamp(t *testing.T) {
	b := Batch(emptyBatch(0, 0))
	b.SetLogAppendTime(5)
	b.SetMaxTimestamp(TimestampCreateTime, 1500)
	if b.TimestampType() != TimestampCreateTime || b.MaxTimestamp() != 1500 || !b.CRCValid() || !b.IsTransactional() {
		t.Fatalf("after SetMaxTimestamp: %s", b)
	}
	crc := b.CRC()
	b.SetMaxTimestamp(TimestampCreateTime, 1500)
	if b.CRC() != crc {
		t.Fatal("unchanged SetMaxTimestamp rewrote the CRC")
	}
}
