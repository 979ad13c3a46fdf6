package record

import (
	"bytes"
	"testing"

	"github.com/pierrec/lz4/v4"
)

func TestRecordXXH32(t *testing.T) {
	// Reference values of XXH32 with seed 0.
	for in, want := range map[string]uint32{
		"":    0x02cc5d05,
		"a":   0x550d7456,
		"abc": 0x32d153ff,
		"Nobody inspects the spammish repetition": 0xe2293b2f,
	} {
		if got := xxh32([]byte(in)); got != want {
			t.Errorf("xxh32(%q) = %08x, want %08x", in, got, want)
		}
	}
	// The descriptor checksum of a frame written by pierrec/lz4 matches ours.
	var buf bytes.Buffer
	w := lz4.NewWriter(&buf)
	_, _ = w.Write([]byte("hello hello hello"))
	_ = w.Close()
	frame := buf.Bytes()
	end := lz4DescriptorEnd(frame)
	if end < 0 || frame[end] != byte(xxh32(frame[4:end])>>8) {
		t.Fatalf("descriptor checksum mismatch in %x", frame[:8])
	}
}
