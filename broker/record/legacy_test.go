package record

import (
	"bytes"
	"errors"
	"testing"

	"github.com/pierrec/lz4/v4"
	"github.com/twmb/franz-go/pkg/kmsg"
)

// Golden legacy messages laid out by hand from Kafka's LegacyRecord spec,
// CRC-32 computed with Python's zlib.crc32.
const (
	goldenV1 = "0000000000000005" + "00000018" + "5eaf63dc" + "01" + "00" + "00000174876e8000" +
		"00000001" + "6b" + "00000001" + "76" // offset 5, key "k", value "v", ts 1600000000000
	goldenV0 = "0000000000000007" + "00000013" + "87a77ab2" + "00" + "00" +
		"ffffffff" + "00000005" + "68656c6c6f" // offset 7, null key, value "hello"
)

func TestRecordLegacyGolden(t *testing.T) {
	v1 := Message{Offset: 5, Magic: 1, Timestamp: 1600000000000, Key: []byte("k"), Value: []byte("v")}
	v0 := Message{Offset: 7, Magic: 0, Timestamp: NoTimestamp, Value: []byte("hello")}
	for _, c := range []struct {
		golden string
		m      Message
	}{{goldenV1, v1}, {goldenV0, v0}} {
		want := mustHex(t, c.golden)
		if got := appendMessage(nil, &c.m); !bytes.Equal(got, want) {
			t.Fatalf("appendMessage:\n got %x\nwant %x", got, want)
		}
		m, rest, err := NextMessage(want)
		if err != nil || len(rest) != 0 || m.Offset != c.m.Offset || m.Timestamp != c.m.Timestamp ||
			!bytesNullEqual(m.Key, c.m.Key) || !bytesNullEqual(m.Value, c.m.Value) {
			t.Fatalf("NextMessage = %+v, %v", m, err)
		}
		if mg, err := Magic(want); err != nil || mg != c.m.Magic {
			t.Fatalf("Magic = %d, %v", mg, err)
		}
	}
	// Cross-check with franz-go's independent v1 encoder.
	k := kmsg.MessageV1{Offset: 5, Magic: 1, Timestamp: 1600000000000, Key: []byte("k"), Value: []byte("v")}
	k.MessageSize = int32(len(k.AppendTo(nil)) - LogOverhead)
	enc := k.AppendTo(nil)
	if want := mustHex(t, goldenV1); !bytes.Equal(enc[16:], want[16:]) || !bytes.Equal(enc[:12], want[:12]) {
		t.Fatalf("kmsg v1:\n got %x\nwant %x", enc, want)
	}
}

func TestRecordLegacyErrors(t *testing.T) {
	good := mustHex(t, goldenV1)
	mut := func(f func(p []byte)) []byte { p := bytes.Clone(good); f(p); return p }
	cases := []struct {
		name string
		p    []byte
		want error
	}{
		{"short", good[:20], ErrShortBatch},
		{"crc", mut(func(p []byte) { p[len(p)-1] ^= 1 }), ErrCorrupt},
		{"magic", mut(func(p []byte) { p[16] = 3 }), ErrCorrupt},
		{"size too small", mut(func(p []byte) { p[11] = 13 }), ErrCorrupt},
	}
	for _, c := range cases {
		if _, _, err := NextMessage(c.p); !errors.Is(err, c.want) {
			t.Errorf("%s: err = %v, want %v", c.name, err, c.want)
		}
	}
	// A key length running past the message is invalid (with a fixed CRC).
	bad := bytes.Clone(good)
	bad[29] = 9
	fixLegacyCRC(bad)
	if _, _, err := NextMessage(bad); !errors.Is(err, ErrInvalidRecord) {
		t.Errorf("key length err = %v", err)
	}
	if _, err := Magic([]byte{1, 2}); !errors.Is(err, ErrShortBatch) {
		t.Errorf("Magic short err = %v", err)
	}
}

func fixLegacyCRC(p []byte) {
	c := crc32IEEE(p[legacyOffMagic:])
	p[12], p[13], p[14], p[15] = byte(c>>24), byte(c>>16), byte(c>>8), byte(c)
}

// v2Stream builds three batches: compressed with codec, a control batch,
// and a LogAppendTime batch.
func v2Stream(t *testing.T, codec Codec) []byte {
	t.Helper()
	recs := testRecords(10, 30)
	recs[2].Key = nil
	recs[3].Headers = []Header{{Key: "dropped", Value: []byte("x")}}
	b1, err := Build(NewBuildHeader(100, 1600000000000), recs, codec)
	if err != nil {
		t.Fatal(err)
	}
	ch := NewBuildHeader(110, 1600000000100)
	ch.Control = true
	b2, err := Build(ch, []Record{{Key: []byte{0, 0, 0, 0}, Value: []byte{0, 0, 0, 0, 0, 0}}}, CodecNone)
	if err != nil {
		t.Fatal(err)
	}
	lh := NewBuildHeader(111, 1600000000200)
	lh.TimestampType = TimestampLogAppendTime
	lh.MaxTimestamp = 1700000000000
	b3, err := Build(lh, testRecords(3, 10), codec)
	if err != nil {
		t.Fatal(err)
	}
	return append(append(append([]byte{}, b1...), b2...), b3...)
}

func TestRecordDownConvert(t *testing.T) {
	for _, codec := range []Codec{CodecNone, CodecGzip, CodecSnappy, CodecLZ4, CodecZstd} {
		for _, magic := range []int8{MagicV0, MagicV1} {
			for _, plain := range []bool{false, true} {
				stream := v2Stream(t, codec)
				set, err := ConvertFromV2(stream, magic, DownConvertOptions{MinOffset: 103, Uncompressed: plain})
				if err != nil {
					t.Fatalf("%s v%d: %v", codec, magic, err)
				}
				if err := ValidateMessageSet(set, Limits{Deep: true}); err != nil {
					t.Fatalf("%s v%d: %v", codec, magic, err)
				}
				msgs, err := ReadMessageSet(set, 0)
				if err != nil {
					t.Fatalf("%s v%d: %v", codec, magic, err)
				}
				// Offsets 103..109 from batch 1, 111..113 from batch 3.
				want := []int64{103, 104, 105, 106, 107, 108, 109, 111, 112, 113}
				if len(msgs) != len(want) {
					t.Fatalf("%s v%d: %d messages", codec, magic, len(msgs))
				}
				for i, m := range msgs {
					if m.Offset != want[i] || m.Magic != magic || m.Compression() != CodecNone {
						t.Fatalf("%s v%d msg %d: %+v", codec, magic, i, m)
					}
					wantTS := NoTimestamp
					if magic == MagicV1 {
						wantTS = 1600000000000 + m.Offset - 100
						if m.Offset > 110 {
							wantTS = 1700000000000
						}
					}
					if m.Timestamp != wantTS {
						t.Fatalf("%s v%d msg %d: timestamp %d, want %d", codec, magic, i, m.Timestamp, wantTS)
					}
				}
				top, _, err := NextMessage(set)
				if err != nil {
					t.Fatal(err)
				}
				wantCodec := codec
				if plain || codec == CodecZstd {
					wantCodec = CodecNone
				}
				if top.Compression() != wantCodec {
					t.Fatalf("%s v%d plain=%t: first message codec %s", codec, magic, plain, top.Compression())
				}

				// And back up to v2.
				up, err := ConvertToV2(set, CodecProducer, 0)
				if err != nil {
					t.Fatalf("%s v%d up: %v", codec, magic, err)
				}
				b, rest, err := NextBatch(up)
				if err != nil || len(rest) != 0 {
					t.Fatalf("%s v%d up: %v", codec, magic, err)
				}
				if err := b.Validate(Limits{Deep: true}); err != nil {
					t.Fatal(err)
				}
				if b.NumRecords() != 10 || b.BaseOffset() != 103 || b.Compression() != wantCodec {
					t.Fatalf("up: %s", b)
				}
				if magic == MagicV0 && (b.FirstTimestamp() != NoTimestamp || b.MaxTimestamp() != NoTimestamp) {
					t.Fatalf("v0 up timestamps: %s", b)
				}
				recs, _ := b.Records(0)
				if magic == MagicV1 && b.FirstTimestamp()+recs[9].TimestampDelta != 1700000000000 {
					t.Fatalf("v1 up timestamp of last record wrong: %s", b)
				}
			}
		}
	}
}

// TestRecordLegacyLZ4V0Checksum checks that magic 0 LZ4 wrappers carry
// Kafka's broken descriptor checksum (a standard reader rejects it) and
// that we read them back.
func TestRecordLegacyLZ4V0Checksum(t *testing.T) {
	set, err := ConvertFromV2(v2Stream(t, CodecLZ4), MagicV0, DownConvertOptions{})
	if err != nil {
		t.Fatal(err)
	}
	w, _, err := NextMessage(set)
	if err != nil || w.Compression() != CodecLZ4 {
		t.Fatalf("wrapper: %+v, %v", w, err)
	}
	if _, err := lz4.NewReader(bytes.NewReader(w.Value)).Read(make([]byte, 10)); err == nil {
		t.Fatal("standard LZ4 reader accepted the magic 0 frame checksum")
	}
	msgs, err := ReadMessageSet(set, 0)
	if err != nil || len(msgs) != 13 {
		t.Fatalf("ReadMessageSet = %d, %v", len(msgs), err)
	}
}

func TestRecordMessageSetRules(t *testing.T) {
	inner := appendMessage(nil, &Message{Offset: 0, Magic: 1, Timestamp: 5, Value: []byte("a")})
	nested := appendMessage(nil, &Message{Offset: 0, Magic: 1, Attributes: int8(CodecGzip), Timestamp: 5,
		Value: mustCompress(t, CodecGzip, inner)})
	cases := []struct {
		name string
		set  []byte
		want error
	}{
		{"nested compression", appendMessage(nil, &Message{Offset: 0, Magic: 1, Attributes: int8(CodecGzip),
			Value: mustCompress(t, CodecGzip, nested)}), ErrInvalidRecord},
		{"inner magic mismatch", appendMessage(nil, &Message{Offset: 0, Magic: 0, Attributes: int8(CodecGzip),
			Value: mustCompress(t, CodecGzip, inner)}), ErrInvalidRecord},
		{"null wrapper value", appendMessage(nil, &Message{Offset: 0, Magic: 1, Attributes: int8(CodecSnappy)}), ErrInvalidRecord},
		{"zstd wrapper", appendMessage(nil, &Message{Offset: 0, Magic: 1, Attributes: int8(CodecZstd),
			Value: mustCompress(t, CodecZstd, inner)}), ErrUnsupportedCompression},
		{"mixed magic", append(appendMessage(nil, &Message{Magic: 0}), inner...), ErrInvalidRecord},
		{"empty wrapper", appendMessage(nil, &Message{Offset: 0, Magic: 1, Attributes: int8(CodecGzip),
			Value: mustCompress(t, CodecGzip, nil)}), ErrInvalidRecord},
	}
	for _, c := range cases {
		if _, err := ReadMessageSet(c.set, 0); !errors.Is(err, c.want) {
			t.Errorf("%s: err = %v, want %v", c.name, err, c.want)
		}
		if _, err := ConvertToV2(c.set, CodecNone, 0); !errors.Is(err, c.want) {
			t.Errorf("%s: ConvertToV2 err = %v, want %v", c.name, err, c.want)
		}
	}
	// A partial trailing message: ReadMessageSet returns the prefix and
	// ErrShortBatch; ConvertToV2 ignores the tail like Kafka.
	set := append(bytes.Clone(inner), inner[:10]...)
	msgs, err := ReadMessageSet(set, 0)
	if len(msgs) != 1 || !errors.Is(err, ErrShortBatch) {
		t.Fatalf("partial tail: %d, %v", len(msgs), err)
	}
	if up, err := ConvertToV2(set, CodecNone, 0); err != nil || Batch(up).NumRecords() != 1 {
		t.Fatalf("ConvertToV2 partial tail: %v", err)
	}
	if _, err := ConvertToV2(inner[:10], CodecNone, 0); !errors.Is(err, ErrShortBatch) {
		t.Fatalf("ConvertToV2 only partial: %v", err)
	}
	// Many small gzip bombs share one budget.
	zeros := make([]byte, 600<<10)
	bombMsg := appendMessage(nil, &Message{Magic: 1, Value: zeros})
	w := appendMessage(nil, &Message{Magic: 1, Attributes: int8(CodecGzip), Value: mustCompress(t, CodecGzip, bombMsg)})
	if _, err := ReadMessageSet(append(bytes.Clone(w), w...), 1<<20); !errors.Is(err, ErrDecompressedTooLarge) {
		t.Fatalf("shared budget err = %v", err)
	}
}

func mustCompress(t *testing.T, c Codec, p []byte) []byte {
	t.Helper()
	out, err := compress(c, nil, p)
	if err != nil {
		t.Fatal(err)
	}
	return out
}

// TestRecordLegacyV1InnerOffsets checks the wire form of a v1 wrapper: the
// wrapper carries the last absolute offset and the inner messages relative
// offsets 0..n-1; a v0 wrapper's inner messages keep absolute offsets.
func TestRecordLegacyV1InnerOffsets(t *testing.T) {
	b, err := Build(NewBuildHeader(1000, 0), testRecords(4, 10), CodecGzip)
	if err != nil {
		t.Fatal(err)
	}
	for _, magic := range []int8{MagicV0, MagicV1} {
		set, err := ConvertFromV2(b, magic, DownConvertOptions{})
		if err != nil {
			t.Fatal(err)
		}
		w, rest, err := NextMessage(set)
		if err != nil || len(rest) != 0 || w.Offset != 1003 {
			t.Fatalf("v%d wrapper offset %d, %d rest, %v", magic, w.Offset, len(rest), err)
		}
		raw, err := decompress(CodecGzip, w.Value, 1<<20)
		if err != nil {
			t.Fatal(err)
		}
		for i := int64(0); len(raw) > 0; i++ {
			m, next, err := NextMessage(raw)
			if err != nil {
				t.Fatal(err)
			}
			want := i
			if magic == MagicV0 {
				want = 1000 + i
			}
			if m.Offset != want {
				t.Fatalf("v%d inner %d offset %d, want %d", magic, i, m.Offset, want)
			}
			raw = next
		}
	}
}
