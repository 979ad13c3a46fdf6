package record

import (
	"bytes"
	"errors"
	"testing"
)

// ParseHeader decodes the same header ReadHeaderAt reads, from a buffer
// holding several batches, and reports the same errors without a read.
func TestRecordParseHeader(t *testing.T) {
	stream := append(emptyBatch(0, 2), emptyBatch(3, 0)...)
	h, err := ParseHeader(stream[HeaderSize:], HeaderSize)
	if err != nil || h.BaseOffset != 3 || h.Size() != HeaderSize {
		t.Fatalf("ParseHeader = %+v, %v", h, err)
	}
	first, err := ParseHeader(stream, 0)
	if want, _ := ReadHeaderAt(bytes.NewReader(stream), 0); err != nil || first != want {
		t.Fatalf("ParseHeader = %+v, %v; ReadHeaderAt %+v", first, err, want)
	}
	if _, err := ParseHeader(stream[:HeaderSize-1], 0); !errors.Is(err, ErrShortBatch) || errors.Is(err, ErrCorrupt) {
		t.Fatalf("short header err = %v", err)
	}
	bad := append([]byte(nil), stream[:HeaderSize]...)
	bad[offMagic] = 1
	if _, err := ParseHeader(bad, 0); !errors.Is(err, ErrCorrupt) {
		t.Fatalf("magic err = %v", err)
	}
	if _, err := ParseHeader(bad[:LogOverhead+5], 0); !errors.Is(err, ErrCorrupt) {
		t.Fatalf("magic in a short tail err = %v", err)
	}
	bad = append([]byte(nil), stream[:HeaderSize]...)
	bad[offBatchLength] = 0x80
	if _, err := ParseHeader(bad[:LogOverhead], 0); !errors.Is(err, ErrCorrupt) {
		t.Fatalf("negative length in a short tail err = %v", err)
	}
	if n := testing.AllocsPerRun(100, func() { _, _ = ParseHeader(stream, 0) }); n != 0 {
		t.Fatalf("ParseHeader allocates %v times", n)
	}
}

// FuzzRecordParseHeader feeds arbitrary bytes to ParseHeader.
//
// Invariants:
//   - nothing panics, and every error wraps ErrShortBatch or ErrCorrupt;
//   - ParseHeader and ReadHeaderAt over the same bytes agree (header, or
//     the same error class);
//   - when the whole batch is present, NextBatch accepts it and its header
//     equals the parsed one.
func FuzzRecordParseHeader(f *testing.F) {
	for _, s := range fuzzSeeds(f) {
		f.Add(s)
		f.Add(s[:HeaderSize-1])
	}
	f.Add(emptyBatch(7, 1))
	f.Fuzz(func(t *testing.T, data []byte) {
		h, err := ParseHeader(data, 0)
		rh, rerr := ReadHeaderAt(bytes.NewReader(data), 0)
		if err != nil {
			if !errors.Is(err, ErrShortBatch) && !errors.Is(err, ErrCorrupt) {
				t.Fatalf("error %v wraps no sentinel", err)
			}
			if errors.Is(err, ErrCorrupt) != errors.Is(rerr, ErrCorrupt) || errors.Is(err, ErrShortBatch) != errors.Is(rerr, ErrShortBatch) {
				t.Fatalf("ParseHeader error %v, ReadHeaderAt error %v", err, rerr)
			}
			return
		}
		if rerr != nil || rh != h {
			t.Fatalf("ParseHeader %+v, ReadHeaderAt %+v, %v", h, rh, rerr)
		}
		if h.Size() <= int64(len(data)) {
			b, _, nerr := NextBatch(data)
			if nerr != nil || b.Header() != h {
				t.Fatalf("NextBatch on a whole batch: %v", nerr)
			}
		}
	})
}
