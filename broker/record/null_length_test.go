package record

import (
	"bytes"
	"encoding/binary"
	"errors"
	"testing"
)

// negativeLengthBatch builds an uncompressed batch of one record with a
// null key, a null value and one header "h" with a null value, then
// rewrites the three -1 lengths as key, value and header value lengths
// (one-byte varints) and fixes the CRC.
func negativeLengthBatch(t *testing.T, key, value, header int32) Batch {
	t.Helper()
	b, err := Build(NewBuildHeader(0, 1600000000000), []Record{{Headers: []Header{{Key: "h"}}}}, CodecNone)
	if err != nil {
		t.Fatal(err)
	}
	// length, attributes, timestamp delta, offset delta, key length (4),
	// value length (5), header count, header key length, "h", header
	// value length (9): every field one byte.
	sec := b.RecordsSection()
	if len(sec) != 10 {
		t.Fatalf("records section % x, want 10 bytes", sec)
	}
	for _, f := range []struct {
		pos int
		v   int32
	}{{4, key}, {5, value}, {9, header}} {
		enc := appendVarint(nil, f.v)
		if len(enc) != 1 {
			t.Fatalf("length %d does not fit one varint byte", f.v)
		}
		sec[f.pos] = enc[0]
	}
	b.UpdateCRC()
	return b
}

// TestRecordNegativeLengthIsNull checks Kafka's rule (DefaultRecord.readFrom)
// that any negative key, value or header value length is null: the decoder
// and the in-place walk accept it, the record reads back with nil fields,
// and re-encoding writes -1.
func TestRecordNegativeLengthIsNull(t *testing.T) {
	for _, lens := range [][3]int32{{-1, -1, -1}, {-5, -2, -7}, {-64, -33, -2}} {
		b := negativeLengthBatch(t, lens[0], lens[1], lens[2])
		if err := b.Validate(Limits{Deep: true}); err != nil {
			t.Fatalf("lengths %v: Validate = %v", lens, err)
		}
		sec := b.RecordsSection()
		if !walkRecords(sec, 1, 0, false) {
			t.Fatalf("lengths %v: walkRecords rejected the section", lens)
		}
		recs, err := b.Records(0)
		if err != nil {
			t.Fatalf("lengths %v: Records = %v", lens, err)
		}
		r := recs[0]
		if r.Key != nil || r.Value != nil || len(r.Headers) != 1 || r.Headers[0].Key != "h" || r.Headers[0].Value != nil {
			t.Fatalf("lengths %v: record %+v, want null key, value and header value", lens, r)
		}
		// Re-encoding writes the canonical -1 everywhere.
		again, err := Build(NewBuildHeader(0, 1600000000000), recs, CodecNone)
		if err != nil {
			t.Fatal(err)
		}
		want := negativeLengthBatch(t, -1, -1, -1)
		if !bytes.Equal(again.RecordsSection(), want.RecordsSection()) {
			t.Fatalf("lengths %v: re-encoded % x, want % x", lens, again.RecordsSection(), want.RecordsSection())
		}
		// Down-conversion carries the nulls into a v1 message.
		ms, err := ConvertFromV2(b, MagicV1, DownConvertOptions{Uncompressed: true})
		if err != nil {
			t.Fatalf("lengths %v: ConvertFromV2 = %v", lens, err)
		}
		m, _, err := NextMessage(ms)
		if err != nil || m.Key != nil || m.Value != nil {
			t.Fatalf("lengths %v: down-converted %+v, %v; want null key and value", lens, m, err)
		}
	}
}

// TestRecordNegativeHeaderKeyLengthInvalid checks that a negative header key
// length stays invalid for both the decoder and the walk, as in Kafka.
func TestRecordNegativeHeaderKeyLengthInvalid(t *testing.T) {
	b := negativeLengthBatch(t, -1, -1, -1)
	sec := b.RecordsSection()
	sec[7] = appendVarint(nil, -1)[0] // header key length
	b.UpdateCRC()
	if err := b.Validate(Limits{Deep: true}); !errors.Is(err, ErrInvalidRecord) {
		t.Fatalf("Validate = %v, want ErrInvalidRecord", err)
	}
	if walkRecords(sec, 1, 0, false) {
		t.Fatal("walkRecords accepted a negative header key length")
	}
}

// TestRecordLegacyNegativeLengthIsNull checks Kafka's LegacyRecord rule
// that any negative key or value length of a v0/v1 message is null.
func TestRecordLegacyNegativeLengthIsNull(t *testing.T) {
	for _, magic := range []int8{MagicV0, MagicV1} {
		m := Message{Magic: magic, Timestamp: NoTimestamp}
		if magic == MagicV1 {
			m.Timestamp = 1600000000000
		}
		p := appendMessage(nil, &m)
		keyAt := legacyOffTS
		if magic == MagicV1 {
			keyAt += 8
		}
		binary.BigEndian.PutUint32(p[keyAt:], uint32(0xfffffffd))   // -3
		binary.BigEndian.PutUint32(p[keyAt+4:], uint32(0x80000000)) // MinInt32
		fixLegacyCRC(p)
		got, rest, err := NextMessage(p)
		if err != nil || len(rest) != 0 {
			t.Fatalf("magic %d: NextMessage = %v (%d bytes left)", magic, err, len(rest))
		}
		if got.Key != nil || got.Value != nil {
			t.Fatalf("magic %d: key %v value %v, want both null", magic, got.Key, got.Value)
		}
		if err := ValidateMessageSet(p, Limits{Deep: true}); err != nil {
			t.Fatalf("magic %d: ValidateMessageSet = %v", magic, err)
		}
		v2, err := ConvertToV2(p, CodecNone, 0)
		if err != nil {
			t.Fatalf("magic %d: ConvertToV2 = %v", magic, err)
		}
		recs, err := Batch(v2).Records(0)
		if err != nil || len(recs) != 1 || recs[0].Key != nil || recs[0].Value != nil {
			t.Fatalf("magic %d: converted records %+v, %v; want one null record", magic, recs, err)
		}
	}
}
