package record

import (
	"bytes"
	"errors"
	"testing"
)

// fuzzCap is the decompression cap in fuzz targets: small, so a bomb in the
// corpus costs little.
const fuzzCap = 1 << 20

// fuzzSeeds returns valid v2 streams used as seeds by several targets.
func fuzzSeeds(t testing.TB) [][]byte {
	var out [][]byte
	for _, codec := range []Codec{CodecNone, CodecGzip, CodecSnappy, CodecLZ4, CodecZstd} {
		recs := testRecords(3, 20)
		recs[1].Headers = []Header{{Key: "h", Value: []byte("v")}, {Key: "n"}}
		recs[2].Key = nil
		b, err := Build(NewBuildHeader(5, 1600000000000), recs, codec)
		if err != nil {
			t.Fatal(err)
		}
		out = append(out, b)
	}
	if tb, ok := t.(*testing.T); ok {
		out = append(out, v2Stream(tb, CodecNone))
	}
	return out
}

// FuzzRecordBatch feeds arbitrary bytes to the v2 batch scanner and decoder.
//
// Invariants:
//   - nothing panics, whatever the input;
//   - NextBatch consumes exactly 12+batchLength bytes and the valid prefix
//     never exceeds the input;
//   - a batch that passes deep validation decodes with Records, and
//     rebuilding it with Build from its header and records gives a batch
//     that validates and decodes to the same records (same count, same
//     offsets, keys, values and headers) and the same header fields.
func FuzzRecordBatch(f *testing.F) {
	for _, s := range fuzzSeeds(f) {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		rest := data
		consumed := 0
		for len(rest) > 0 {
			b, next, err := NextBatch(rest)
			if err != nil {
				if !errors.Is(err, ErrShortBatch) && !errors.Is(err, ErrCorrupt) {
					t.Fatalf("NextBatch error %v wraps no sentinel", err)
				}
				break
			}
			if b.Size() != len(b) || len(next) != len(rest)-len(b) {
				t.Fatalf("NextBatch sizes: batch %d, length field %d, rest %d of %d", len(b), b.Size(), len(next), len(rest))
			}
			consumed += len(b)
			rest = next
			_ = b.String()
			h, err := ReadHeaderAt(bytes.NewReader(data), int64(consumed-len(b)))
			if err != nil || h != b.Header() {
				t.Fatalf("ReadHeaderAt = %+v, %v; want %+v", h, err, b.Header())
			}
			for _, gaps := range []bool{false, true} {
				checkBatchRoundTrip(t, b, gaps)
			}
		}
		if consumed > len(data) {
			t.Fatalf("consumed %d of %d bytes", consumed, len(data))
		}
	})
}

func checkBatchRoundTrip(t *testing.T, b Batch, gaps bool) {
	err := b.Validate(Limits{Deep: true, MaxDecompressed: fuzzCap, AllowOffsetGaps: gaps})
	if err != nil {
		if !errors.Is(err, ErrCorrupt) && !errors.Is(err, ErrInvalidRecord) {
			t.Fatalf("Validate error %v wraps no sentinel", err)
		}
		return
	}
	recs, err := b.Records(fuzzCap)
	if err != nil {
		t.Fatalf("valid batch does not decode: %v", err)
	}
	h := BuildHeader{
		BaseOffset: b.BaseOffset(), PartitionLeaderEpoch: b.PartitionLeaderEpoch(),
		FirstTimestamp: b.FirstTimestamp(), MaxTimestamp: b.MaxTimestamp(), TimestampType: b.TimestampType(),
		Transactional: b.IsTransactional(), Control: b.IsControl(), ProducerID: b.ProducerID(),
		ProducerEpoch: b.ProducerEpoch(), BaseSequence: b.BaseSequence(), LastOffsetDelta: b.LastOffsetDelta(),
	}
	re, err := Build(h, recs, b.Compression())
	if err != nil {
		t.Fatalf("rebuild: %v", err)
	}
	if err := re.Validate(Limits{Deep: true, MaxDecompressed: 2 * fuzzCap, AllowOffsetGaps: gaps}); err != nil {
		t.Fatalf("rebuilt batch invalid: %v", err)
	}
	back, err := re.Records(2 * fuzzCap)
	if err != nil || len(back) != len(recs) {
		t.Fatalf("rebuilt records: %d, %v; want %d", len(back), err, len(recs))
	}
	for i := range recs {
		if !recordsEqual(back[i], recs[i]) {
			t.Fatalf("record %d: %+v after rebuild, was %+v", i, back[i], recs[i])
		}
	}
	if re.BaseOffset() != b.BaseOffset() || re.LastOffsetDelta() != b.LastOffsetDelta() ||
		re.Attributes() != b.Attributes() || re.ProducerID() != b.ProducerID() {
		t.Fatalf("rebuilt header %s, was %s", re, b)
	}
}

// FuzzRecordMessageSet feeds arbitrary bytes to the legacy message set
// decoder.
//
// Invariants:
//   - nothing panics;
//   - every error wraps one of the package's sentinels;
//   - ValidateMessageSet (deep) succeeds exactly when ReadMessageSet does
//     (with the same budget);
//   - the messages of a valid set, re-encoded as plain messages, read back
//     to the same offsets, magic, timestamps, keys and values.
func FuzzRecordMessageSet(f *testing.F) {
	f.Add(mustHexF(goldenV1))
	f.Add(mustHexF(goldenV0))
	for _, s := range fuzzSeeds(f) {
		for _, magic := range []int8{MagicV0, MagicV1} {
			if set, err := ConvertFromV2(s, magic, DownConvertOptions{}); err == nil {
				f.Add(set)
			}
		}
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		msgs, err := ReadMessageSet(data, fuzzCap)
		verr := ValidateMessageSet(data, Limits{Deep: true, MaxDecompressed: fuzzCap})
		if (err == nil) != (verr == nil) {
			t.Fatalf("ReadMessageSet err %v, ValidateMessageSet err %v", err, verr)
		}
		if err != nil {
			if !errors.Is(err, ErrShortBatch) && !errors.Is(err, ErrCorrupt) && !errors.Is(err, ErrInvalidRecord) &&
				!errors.Is(err, ErrUnsupportedCompression) {
				t.Fatalf("error %v wraps no sentinel", err)
			}
			return
		}
		var re []byte
		for i := range msgs {
			m := msgs[i]
			m.Attributes &^= attrCompressionMask
			re = appendMessage(re, &m)
		}
		back, err := ReadMessageSet(re, fuzzCap)
		if err != nil || len(back) != len(msgs) {
			t.Fatalf("re-read: %d, %v; want %d", len(back), err, len(msgs))
		}
		for i := range msgs {
			a, b := back[i], msgs[i]
			if a.Offset != b.Offset || a.Magic != b.Magic || a.Timestamp != b.Timestamp ||
				!bytesNullEqual(a.Key, b.Key) || !bytesNullEqual(a.Value, b.Value) {
				t.Fatalf("message %d: %+v after re-encode, was %+v", i, a, b)
			}
		}
	})
}

// FuzzRecordConvert feeds arbitrary bytes to both conversions.
//
// Invariants:
//   - nothing panics;
//   - ConvertToV2 output, when there is no error, is exactly one batch that
//     passes deep producer validation and holds as many records as
//     ReadMessageSet finds messages;
//   - ConvertFromV2 output, when there is no error, is a message set that
//     ReadMessageSet reads without error, for magic 0 and 1.
func FuzzRecordConvert(f *testing.F) {
	for _, s := range fuzzSeeds(f) {
		f.Add(s)
		if set, err := ConvertFromV2(s, MagicV1, DownConvertOptions{}); err == nil {
			f.Add(set)
		}
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		if up, err := ConvertToV2(data, CodecProducer, fuzzCap); err == nil && up != nil {
			b, rest, err := NextBatch(up)
			if err != nil || len(rest) != 0 {
				t.Fatalf("ConvertToV2 output not one batch: %v, %d rest", err, len(rest))
			}
			if err := b.Validate(Limits{Deep: true, MaxDecompressed: 2 * fuzzCap}); err != nil {
				t.Fatalf("ConvertToV2 output invalid: %v", err)
			}
			msgs, _ := ReadMessageSet(data, fuzzCap)
			if int(b.NumRecords()) != len(msgs) {
				t.Fatalf("ConvertToV2: %d records for %d messages", b.NumRecords(), len(msgs))
			}
		}
		for _, magic := range []int8{MagicV0, MagicV1} {
			set, err := ConvertFromV2(data, magic, DownConvertOptions{MaxDecompressed: fuzzCap})
			if err != nil {
				continue
			}
			if _, err := ReadMessageSet(set, 0); err != nil {
				t.Fatalf("ConvertFromV2 v%d output unreadable: %v", magic, err)
			}
		}
	})
}

// FuzzRecordDecompress feeds arbitrary bytes to every codec's decoder.
//
// Invariants:
//   - nothing panics and no call returns more than the cap;
//   - every error wraps ErrCorrupt (ErrDecompressedTooLarge does too);
//   - data that decodes re-encodes with the same codec and decodes back to
//     the same bytes.
func FuzzRecordDecompress(f *testing.F) {
	plain := []byte("seed data seed data seed data 0123456789")
	for _, c := range []Codec{CodecGzip, CodecSnappy, CodecLZ4, CodecZstd} {
		out, err := compress(c, nil, plain)
		if err != nil {
			f.Fatal(err)
		}
		f.Add(byte(c), out)
	}
	f.Add(byte(CodecSnappy), []byte{0xff, 0xff, 0xff, 0xff, 0x0f, 0x00})
	const limit = 64 << 10
	f.Fuzz(func(t *testing.T, codec byte, data []byte) {
		c := Codec(codec % 8)
		out, err := decompress(c, data, limit)
		if err != nil {
			if !errors.Is(err, ErrCorrupt) {
				t.Fatalf("%s: error %v does not wrap ErrCorrupt", c, err)
			}
			return
		}
		if len(out) > limit {
			t.Fatalf("%s: %d bytes out, cap %d", c, len(out), limit)
		}
		again, err := compress(c, nil, out)
		if err != nil {
			t.Fatal(err)
		}
		back, err := decompress(c, again, limit)
		if err != nil || !bytes.Equal(back, out) {
			t.Fatalf("%s: round trip %d bytes, %v", c, len(back), err)
		}
	})
}

func mustHexF(s string) []byte {
	b := make([]byte, len(s)/2)
	for i := range b {
		b[i] = unhex(s[2*i])<<4 | unhex(s[2*i+1])
	}
	return b
}

func unhex(c byte) byte {
	if c >= 'a' {
		return c - 'a' + 10
	}
	return c - '0'
}
