package broker_test

import (
	"encoding/binary"
	"testing"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"

	"samsa/broker/brokertest"
	"samsa/broker/record"
)

// TestAPIProduceRecordLengthsBeyondBatch: the bad-input list's "recordsCount
// larger than the actual records; varint key or value lengths beyond the
// batch" sent as Produce with a correct CRC, so only the record walk can
// catch them. Kafka 2.8 reads every record of an uncompressed v2 batch
// (LogValidator.assignOffsetsNonCompressed; DefaultRecord.readFrom throws
// InvalidRecordException) and answers INVALID_RECORD; nothing is appended,
// and a good batch on the same connection still is.
func TestAPIProduceRecordLengthsBeyondBatch(t *testing.T) {
	c := brokertest.NewCluster(t, 1)
	c.CreateTopic(t, "lens", 1, 1)
	rc := brokertest.DialRaw(t, c.Addr(0))
	build := func() record.Batch {
		b, err := record.Build(record.NewBuildHeader(0, 1600000000000), []record.Record{{Key: []byte("k"), Value: []byte("v")}}, record.CodecNone)
		if err != nil {
			t.Fatal(err)
		}
		// length, attributes, timestamp delta, offset delta, key length, "k",
		// value length, "v", header count: one byte each.
		if sec := b.RecordsSection(); len(sec) != 9 {
			t.Fatalf("records section % x, want 9 bytes", sec)
		}
		return b
	}
	produce := func(b record.Batch) int16 {
		kr, err := rc.RoundTrip(brokertest.ProduceRequest(7, 1, 5000, "lens", 0, b))
		if err != nil {
			t.Fatal(err)
		}
		return kr.(*kmsg.ProduceResponse).Topics[0].Partitions[0].ErrorCode
	}
	const numRecordsAt = record.HeaderSize - 4
	for _, tc := range []struct {
		name string
		edit func(b record.Batch)
	}{
		{"record length beyond the batch", func(b record.Batch) { b.RecordsSection()[0] = 100 }},
		{"key length beyond the record", func(b record.Batch) { b.RecordsSection()[4] = 100 }},
		{"value length beyond the record", func(b record.Batch) { b.RecordsSection()[6] = 100 }},
		{"header count beyond the record", func(b record.Batch) { b.RecordsSection()[8] = 100 }},
		{"records count 2 for 1 record", func(b record.Batch) { binary.BigEndian.PutUint32(b[numRecordsAt:], 2) }},
		{"records count 1 << 30", func(b record.Batch) { binary.BigEndian.PutUint32(b[numRecordsAt:], 1<<30) }},
	} {
		b := build()
		tc.edit(b)
		b.UpdateCRC()
		if code := produce(b); code != kerr.InvalidRecord.Code {
			t.Fatalf("%s: code %v, want INVALID_RECORD", tc.name, kerr.ErrorForCode(code))
		}
	}
	if leo := brokertest.ListLatest(t, rc, "lens", 0); leo != 0 {
		t.Fatalf("a refused batch was appended: latest offset %d", leo)
	}
	if code := produce(build()); code != 0 {
		t.Fatalf("good batch after the bad ones: %v", kerr.ErrorForCode(code))
	}
}
