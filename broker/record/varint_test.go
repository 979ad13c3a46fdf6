package record

import (
	"math"
	"testing"
)

func TestRecordVarintRoundTrip(t *testing.T) {
	for _, v := range []int32{0, 1, -1, 63, -64, 64, 300, -300, math.MaxInt32, math.MinInt32} {
		p := appendVarint(nil, v)
		got, n := readVarint(p)
		if got != v || n != len(p) || n != sizeofVarint(v) {
			t.Errorf("varint %d: got %d, %d bytes of %d", v, got, n, len(p))
		}
	}
	for _, v := range []int64{0, -1, 1 << 40, -(1 << 40), math.MaxInt64, math.MinInt64} {
		p := appendVarlong(nil, v)
		got, n := readVarlong(p)
		if got != v || n != len(p) || n != sizeofVarlong(v) {
			t.Errorf("varlong %d: got %d, %d bytes of %d", v, got, n, len(p))
		}
	}
	// Kafka's examples: 1 -> 02, -1 -> 01, 300 -> d8 04.
	if p := appendVarint(nil, 300); len(p) != 2 || p[0] != 0xd8 || p[1] != 0x04 {
		t.Errorf("varint 300 = % x", p)
	}
	// Truncated and over-long encodings are rejected.
	for _, p := range [][]byte{{}, {0x80}, {0x80, 0x80, 0x80, 0x80, 0x80, 0x00}} {
		if _, n := readVarint(p); n != 0 {
			t.Errorf("readVarint(% x) accepted", p)
		}
	}
	if _, n := readVarlong([]byte{0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x00}); n != 0 {
		t.Error("11-byte varlong accepted")
	}
}
