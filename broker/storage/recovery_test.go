package storage

import (
	"bytes"
	"errors"
	"testing"

	"samsa/broker/record"
)

// ScanBatches is recovery's scanner, run alone over bytes in memory: it
// accepts the valid prefix and names why it stopped.
func TestStorageScanBatches(t *testing.T) {
	var seg []byte
	var ends []int64
	for i := 0; i < 5; i++ {
		b := testBatch(t, 2, 50, 0)
		record.Batch(b).SetBaseOffset(100 + int64(2*i))
		seg = append(seg, b...)
		ends = append(ends, int64(len(seg)))
	}
	flip := func(pos int) []byte {
		c := append([]byte(nil), seg...)
		c[pos] ^= 0x40
		return c
	}
	for _, c := range []struct {
		name  string
		data  []byte
		base  int64
		valid int64
		stop  error
	}{
		{"whole", seg, 100, ends[4], nil},
		{"torn tail", seg[:ends[3]+30], 100, ends[3], record.ErrShortBatch},
		{"torn header", seg[:ends[2]+5], 100, ends[2], record.ErrShortBatch},
		{"crc", flip(int(ends[1]) + 70), 100, ends[1], record.ErrCorrupt},
		{"bad length", flip(int(ends[0]) + 8), 100, ends[0], record.ErrCorrupt},
		{"offset before segment base", seg, 101, 0, record.ErrCorrupt},
		{"garbage", append(append([]byte(nil), seg[:ends[0]]...), bytes.Repeat([]byte{0xee}, 100)...), 100, ends[0], record.ErrCorrupt},
	} {
		t.Run(c.name, func(t *testing.T) {
			var visited int
			valid, stop, err := ScanBatches(bytes.NewReader(c.data), int64(len(c.data)), c.base, func(pos int64, b record.Batch) error {
				visited++
				return nil
			})
			if err != nil {
				t.Fatal(err)
			}
			if valid != c.valid || (c.stop == nil) != (stop == nil) || (c.stop != nil && !errors.Is(stop, c.stop)) {
				t.Fatalf("valid %d stop %v; want %d %v", valid, stop, c.valid, c.stop)
			}
			if want := countEnds(ends, valid); visited != want {
				t.Fatalf("visited %d batches, want %d", visited, want)
			}
		})
	}
}

func countEnds(ends []int64, valid int64) int {
	n := 0
	for _, e := range ends {
		if e <= valid {
			n++
		}
	}
	return n
}
