package record

import (
	"bytes"
	"encoding/hex"
	"errors"
	"fmt"
	"testing"

	"github.com/twmb/franz-go/pkg/kmsg"
)

// goldenBatch is one uncompressed record (key "k", value "hello", no
// headers) at offset 0 with firstTimestamp 1600000000000, laid out by hand
// from Kafka's DefaultRecordBatch spec; its CRC-32C was computed by an
// independent bit-by-bit implementation.
const goldenBatch = "0000000000000000" + // baseOffset 0
	"0000003e" + // batchLength 62
	"ffffffff" + // partitionLeaderEpoch -1
	"02" + // magic
	"353cae38" + // crc
	"0000" + // attributes
	"00000000" + // lastOffsetDelta
	"00000174876e8000" + // firstTimestamp
	"00000174876e8000" + // maxTimestamp
	"ffffffffffffffff" + // producerId
	"ffff" + // producerEpoch
	"ffffffff" + // baseSequence
	"00000001" + // records count
	"18" + "00" + "00" + "00" + "02" + "6b" + "0a" + "68656c6c6f" + "00" // record

func mustHex(t testing.TB, s string) []byte {
	t.Helper()
	b, err := hex.DecodeString(s)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// testRecords returns n records with offset deltas 0..n-1, timestamp deltas
// i, 8-byte keys and values of valueSize bytes (compressible text).
func testRecords(n, valueSize int) []Record {
	out := make([]Record, n)
	for i := range out {
		v := bytes.Repeat([]byte(fmt.Sprintf("value-%04d;", i)), valueSize/11+1)[:valueSize]
		out[i] = Record{TimestampDelta: int64(i), OffsetDelta: int32(i), Key: []byte(fmt.Sprintf("key-%04d", i)), Value: v}
	}
	return out
}

func TestRecordCRC32CVector(t *testing.T) {
	if got := crc32c([]byte("123456789")); got != 0xe3069283 {
		t.Fatalf("crc32c check value = %08x", got)
	}
}

func TestRecordBuildGolden(t *testing.T) {
	want := mustHex(t, goldenBatch)
	h := NewBuildHeader(0, 1600000000000)
	got, err := Build(h, []Record{{Key: []byte("k"), Value: []byte("hello")}}, CodecNone)
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(got, want) {
		t.Fatalf("Build:\n got %x\nwant %x", []byte(got), want)
	}
	b, rest, err := NextBatch(want)
	if err != nil || len(rest) != 0 {
		t.Fatalf("NextBatch: %v, %d rest", err, len(rest))
	}
	if err := b.Validate(Limits{Deep: true}); err != nil {
		t.Fatal(err)
	}
	recs, err := b.Records(0)
	if err != nil || len(recs) != 1 || string(recs[0].Key) != "k" || string(recs[0].Value) != "hello" {
		t.Fatalf("Records = %+v, %v", recs, err)
	}
}

// TestRecordBuildMatchesKmsg cross-checks the layout against franz-go's
// independent RecordBatch encoder (CRC filled in separately).
func TestRecordBuildMatchesKmsg(t *testing.T) {
	recs := []Record{
		{TimestampDelta: 0, OffsetDelta: 0, Key: nil, Value: []byte("v0")},
		{TimestampDelta: 5, OffsetDelta: 1, Key: []byte("k1"), Value: nil,
			Headers: []Header{{Key: "h", Value: []byte("x")}, {Key: "n", Value: nil}}},
		{TimestampDelta: -3, OffsetDelta: 2, Key: []byte{}, Value: bytes.Repeat([]byte{7}, 300)},
	}
	h := BuildHeader{BaseOffset: 1000, PartitionLeaderEpoch: 4, FirstTimestamp: 99, ProducerID: 77,
		ProducerEpoch: 2, BaseSequence: 12, Transactional: true}
	got, err := Build(h, recs, CodecNone)
	if err != nil {
		t.Fatal(err)
	}
	var raw []byte
	for _, r := range recs {
		kr := kmsg.Record{Attributes: r.Attributes, TimestampDelta64: r.TimestampDelta, TimestampDelta: int32(r.TimestampDelta), OffsetDelta: r.OffsetDelta, Key: r.Key, Value: r.Value}
		for _, hd := range r.Headers {
			kr.Headers = append(kr.Headers, kmsg.Header{Key: hd.Key, Value: hd.Value})
		}
		kr.Length = int32(len(kr.AppendTo(nil)) - 1) // all records here have 1-byte lengths
		raw = kr.AppendTo(raw)
	}
	kb := kmsg.RecordBatch{FirstOffset: 1000, PartitionLeaderEpoch: 4, Magic: 2, Attributes: 0x10,
		LastOffsetDelta: 2, FirstTimestamp: 99, MaxTimestamp: 104, ProducerID: 77, ProducerEpoch: 2,
		FirstSequence: 12, NumRecords: 3, Records: raw}
	kb.Length = int32(len(kb.AppendTo(nil)) - LogOverhead)
	want := kb.AppendTo(nil)
	Batch(want).UpdateCRC()
	if !bytes.Equal(got, want) {
		t.Fatalf("Build:\n got %x\nwant %x", []byte(got), want)
	}
	back, err := Batch(want).Records(0)
	if err != nil {
		t.Fatal(err)
	}
	for i := range recs {
		if !recordsEqual(back[i], recs[i]) {
			t.Fatalf("record %d: got %+v want %+v", i, back[i], recs[i])
		}
	}
}

func recordsEqual(a, b Record) bool {
	if a.Attributes != b.Attributes || a.TimestampDelta != b.TimestampDelta || a.OffsetDelta != b.OffsetDelta ||
		!bytesNullEqual(a.Key, b.Key) || !bytesNullEqual(a.Value, b.Value) || len(a.Headers) != len(b.Headers) {
		return false
	}
	for i := range a.Headers {
		if a.Headers[i].Key != b.Headers[i].Key || !bytesNullEqual(a.Headers[i].Value, b.Headers[i].Value) {
			return false
		}
	}
	return true
}

func bytesNullEqual(a, b []byte) bool { return (a == nil) == (b == nil) && bytes.Equal(a, b) }

func TestRecordCodecRoundTrip(t *testing.T) {
	recs := testRecords(200, 100)
	recs[3].Key = nil
	recs[4].Value = nil
	recs[5].Headers = []Header{{Key: "trace", Value: []byte("abc")}}
	for _, codec := range []Codec{CodecNone, CodecGzip, CodecSnappy, CodecLZ4, CodecZstd} {
		t.Run(codec.String(), func(t *testing.T) {
			b, err := Build(NewBuildHeader(50, 1700000000000), recs, codec)
			if err != nil {
				t.Fatal(err)
			}
			if b.Compression() != codec || b.NumRecords() != 200 || b.LastOffset() != 249 ||
				b.MaxTimestamp() != 1700000000199 {
				t.Fatalf("header: %s", b)
			}
			if codec != CodecNone && b.Size() > 200*100/2 {
				t.Fatalf("%s did not compress: %d bytes", codec, b.Size())
			}
			if err := b.Validate(Limits{Deep: true, MaxBatchBytes: 1 << 20}); err != nil {
				t.Fatal(err)
			}
			got, err := b.Records(1 << 20)
			if err != nil {
				t.Fatal(err)
			}
			if len(got) != len(recs) {
				t.Fatalf("%d records, want %d", len(got), len(recs))
			}
			for i := range recs {
				if !recordsEqual(got[i], recs[i]) {
					t.Fatalf("record %d: got %+v want %+v", i, got[i], recs[i])
				}
			}
			// A cap below the decompressed size fails cleanly.
			if codec != CodecNone {
				if _, err := b.Records(1000); !errors.Is(err, ErrDecompressedTooLarge) || !errors.Is(err, ErrCorrupt) {
					t.Fatalf("small cap err = %v", err)
				}
			}
		})
	}
}

func TestRecordValidateErrors(t *testing.T) {
	good, err := Build(NewBuildHeader(0, 1), testRecords(5, 20), CodecNone)
	if err != nil {
		t.Fatal(err)
	}
	mutate := func(f func(b Batch)) Batch {
		c := Batch(bytes.Clone(good))
		f(c)
		return c
	}
	cases := []struct {
		name   string
		b      Batch
		limits Limits
		want   error
	}{
		{"crc mismatch", mutate(func(b Batch) { b[len(b)-1] ^= 1 }), Limits{}, ErrCorrupt},
		{"crc field flipped", mutate(func(b Batch) { b[offCRC] ^= 0x80 }), Limits{}, ErrCorrupt},
		{"bad magic", mutate(func(b Batch) { b[offMagic] = 1 }), Limits{}, ErrCorrupt},
		{"length mismatch", good[:len(good)-1], Limits{}, ErrCorrupt},
		{"too large", good, Limits{MaxBatchBytes: len(good) - 1}, ErrTooLarge},
		{"count mismatch", mutate(func(b Batch) { b[offNumRecords+3] = 4; b.UpdateCRC() }), Limits{}, ErrInvalidRecord},
		{"count mismatch deep", mutate(func(b Batch) {
			b[offNumRecords+3] = 4
			b[offLastOffsetDelta+3] = 3
			b.UpdateCRC()
		}), Limits{Deep: true}, ErrInvalidRecord},
		{"unknown codec", mutate(func(b Batch) { b[offAttributes+1] |= 7; b.UpdateCRC() }), Limits{}, ErrCorrupt},
		{"corrupt gzip", mutate(func(b Batch) { b[offAttributes+1] |= 1; b.UpdateCRC() }), Limits{Deep: true}, ErrCorrupt},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			if err := c.b.Validate(c.limits); !errors.Is(err, c.want) {
				t.Fatalf("Validate = %v, want %v", err, c.want)
			}
		})
	}
	if err := good.Validate(Limits{Deep: true, MaxBatchBytes: len(good)}); err != nil {
		t.Fatalf("good batch: %v", err)
	}
}

func TestRecordValidateOffsetDeltas(t *testing.T) {
	recs := testRecords(3, 10)
	recs[1].OffsetDelta, recs[2].OffsetDelta = 2, 5 // a compacted batch
	b, err := Build(BuildHeader{LastOffsetDelta: 6, ProducerID: -1, BaseSequence: -1}, recs, CodecLZ4)
	if err != nil {
		t.Fatal(err)
	}
	if b.LastOffsetDelta() != 6 {
		t.Fatalf("LastOffsetDelta = %d", b.LastOffsetDelta())
	}
	if err := b.Validate(Limits{Deep: true}); !errors.Is(err, ErrInvalidRecord) {
		t.Fatalf("producer rules err = %v", err)
	}
	if err := b.Validate(Limits{Deep: true, AllowOffsetGaps: true}); err != nil {
		t.Fatalf("replication rules: %v", err)
	}
	// Offsets out of order are invalid for Build and for Validate.
	recs[2].OffsetDelta = 1
	if _, err := Build(BuildHeader{}, recs, CodecNone); !errors.Is(err, ErrInvalidRecord) {
		t.Fatalf("Build out of order err = %v", err)
	}
	// Same count, deltas 0,2,1 written by hand: fix delta after building.
	recs = testRecords(3, 10)
	b, _ = Build(NewBuildHeader(0, 0), recs, CodecNone)
	// Records start at HeaderSize; record 1's offset delta byte is at a
	// fixed spot: length(1) attrs(1) tsDelta(1) then offsetDelta.
	r0 := recordSize(&recs[0])
	b[HeaderSize+r0+3] = 4 // zig-zag 2
	r1 := recordSize(&recs[1])
	b[HeaderSize+r0+r1+3] = 2 // zig-zag 1
	b.UpdateCRC()
	for _, gaps := range []bool{false, true} {
		if err := b.Validate(Limits{Deep: true, AllowOffsetGaps: gaps}); !errors.Is(err, ErrInvalidRecord) {
			t.Fatalf("gaps=%t: out of order err = %v", gaps, err)
		}
	}
}

func TestRecordEmptyBatch(t *testing.T) {
	h := NewBuildHeader(10, 555)
	h.LastOffsetDelta = 9
	b, err := Build(h, nil, CodecNone)
	if err != nil {
		t.Fatal(err)
	}
	if b.Size() != HeaderSize || b.LastOffset() != 19 || b.NumRecords() != 0 || b.MaxTimestamp() != 555 {
		t.Fatalf("empty batch: %s", b)
	}
	if err := b.Validate(Limits{Deep: true, AllowOffsetGaps: true}); err != nil {
		t.Fatal(err)
	}
	if err := b.Validate(Limits{}); !errors.Is(err, ErrInvalidRecord) {
		t.Fatalf("empty producer batch err = %v", err)
	}
}
