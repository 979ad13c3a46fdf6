package record

import (
	"bytes"
	"errors"
	"io"
	"testing"
	"time"

	"github.com/klauspost/compress/gzip"
	"github.com/klauspost/compress/snappy"
	"github.com/klauspost/compress/zstd"
	"github.com/pierrec/lz4/v4"
)

// zeroReader yields n zero bytes without allocating them.
type zeroReader struct{ n int64 }

func (z *zeroReader) Read(p []byte) (int, error) {
	if z.n == 0 {
		return 0, io.EOF
	}
	if int64(len(p)) > z.n {
		p = p[:z.n]
	}
	clear(p)
	z.n -= int64(len(p))
	return len(p), nil
}

// bomb compresses 1 GiB of zeros (128 MiB under the race detector, where
// compressing takes too long) with codec, streaming so the test never holds
// the plain data.
func bomb(t *testing.T, codec Codec) []byte {
	t.Helper()
	size := int64(1 << 30)
	if testIsRace {
		size = 128 << 20
	}
	var buf bytes.Buffer
	var w io.WriteCloser
	switch codec {
	case CodecGzip:
		w, _ = gzip.NewWriterLevel(&buf, gzip.BestSpeed)
	case CodecZstd:
		zw, err := zstd.NewWriter(&buf, zstd.WithEncoderLevel(zstd.SpeedFastest), zstd.WithEncoderConcurrency(1))
		if err != nil {
			t.Fatal(err)
		}
		w = zw
	case CodecLZ4:
		w = lz4.NewWriter(&buf)
	default:
		t.Fatalf("no bomb for %s", codec)
	}
	if _, err := io.Copy(w, &zeroReader{n: size}); err != nil {
		t.Fatal(err)
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	return buf.Bytes()
}

func TestRecordDecompressionBomb(t *testing.T) {
	if testing.Short() {
		t.Skip("compresses 1 GiB per codec")
	}
	for _, codec := range []Codec{CodecGzip, CodecZstd, CodecLZ4} {
		t.Run(codec.String(), func(t *testing.T) {
			payload := bomb(t, codec)
			start := time.Now()
			out, err := decompress(codec, payload, 1<<20)
			if !errors.Is(err, ErrDecompressedTooLarge) || out != nil {
				t.Fatalf("decompress = %d bytes, %v", len(out), err)
			}
			// The same payload inside a batch fails Validate and Records.
			b := Batch(append(make([]byte, HeaderSize), payload...))
			copy(b, mustHex(t, goldenBatch)[:HeaderSize])
			b.SetBaseOffset(0)
			putBatchLength(b)
			b[offAttributes+1] = byte(codec)
			b.UpdateCRC()
			if err := b.Validate(Limits{Deep: true, MaxDecompressed: 1 << 20}); !errors.Is(err, ErrDecompressedTooLarge) {
				t.Fatalf("Validate = %v", err)
			}
			if _, err := b.Records(1 << 20); !errors.Is(err, ErrDecompressedTooLarge) {
				t.Fatalf("Records = %v", err)
			}
			t.Logf("%s: %d compressed bytes rejected in %v", codec, len(payload), time.Since(start))
		})
	}
}

func putBatchLength(b Batch) {
	n := uint32(len(b) - LogOverhead)
	b[8], b[9], b[10], b[11] = byte(n>>24), byte(n>>16), byte(n>>8), byte(n)
}

func TestRecordSnappyBombAndFraming(t *testing.T) {
	// A raw snappy block that claims 4 GiB: rejected before allocating.
	claim := []byte{0xff, 0xff, 0xff, 0xff, 0x0f, 0x00}
	if _, err := decompress(CodecSnappy, claim, 1<<20); !errors.Is(err, ErrDecompressedTooLarge) {
		t.Fatalf("raw claim err = %v", err)
	}
	// Xerial framing with many blocks whose total passes the cap.
	big := make([]byte, 4<<20)
	framed := xerialEncode(nil, big)
	if _, err := decompress(CodecSnappy, framed, 1<<20); !errors.Is(err, ErrDecompressedTooLarge) {
		t.Fatalf("xerial bomb err = %v", err)
	}
	got, err := decompress(CodecSnappy, framed, len(big))
	if err != nil || !bytes.Equal(got, big) {
		t.Fatalf("xerial exact cap: %d bytes, %v", len(got), err)
	}
	// Raw blocks (no xerial header) decode too.
	raw := snappy.Encode(nil, []byte("raw snappy block from a non-Java client"))
	got, err = decompress(CodecSnappy, raw, 1<<10)
	if err != nil || string(got) != "raw snappy block from a non-Java client" {
		t.Fatalf("raw block: %q, %v", got, err)
	}
	// Truncated framing is corrupt.
	if _, err := decompress(CodecSnappy, framed[:len(framed)-3], 8<<20); !errors.Is(err, ErrCorrupt) {
		t.Fatalf("truncated err = %v", err)
	}
}

func TestRecordDecompressGarbage(t *testing.T) {
	junk := []byte("this is not compressed data at all, just text")
	for _, codec := range []Codec{CodecGzip, CodecSnappy, CodecLZ4, CodecZstd, Codec(5)} {
		if _, err := decompress(codec, junk, 1<<20); !errors.Is(err, ErrCorrupt) {
			t.Fatalf("%s: err = %v", codec, err)
		}
	}
}

// TestRecordLZ4FrameLikeKafka checks the frame descriptor we write is the
// one Kafka's KafkaLZ4BlockOutputStream writes: version 01, independent
// blocks, no block or content checksum, no content size (FLG 0x60), 64 KiB
// blocks (BD 0x40).
func TestRecordLZ4FrameLikeKafka(t *testing.T) {
	out := mustCompress(t, CodecLZ4, bytes.Repeat([]byte("abc"), 100000))
	if len(out) < 7 || out[4] != 0x60 || out[5] != 0x40 {
		t.Fatalf("LZ4 descriptor % x, want FLG 60 BD 40", out[:7])
	}
	snap := mustCompress(t, CodecSnappy, []byte("x"))
	if !bytes.Equal(snap[:16], append(append([]byte{}, xerialMagic...), 0, 0, 0, 1, 0, 0, 0, 1)) {
		t.Fatalf("xerial header % x", snap[:16])
	}
}
