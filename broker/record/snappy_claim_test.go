package record

import (
	"encoding/binary"
	"errors"
	"runtime"
	"testing"
)

// TestRecordSnappyXerialHugeChunkLength is the CVE-2023-34455 input the
// bad-input list names beside the snappy bombs: xerial framing whose one
// chunk claims 2 GiB (and a raw block inside a chunk that claims 4 GiB of
// output) in a few bytes. Both are refused (corrupt, too large) without
// allocating anything near the claim.
func TestRecordSnappyXerialHugeChunkLength(t *testing.T) {
	framed := append([]byte(nil), xerialMagic...)
	framed = binary.BigEndian.AppendUint32(framed, 1)
	framed = binary.BigEndian.AppendUint32(framed, 1)
	hugeChunk := binary.BigEndian.AppendUint32(append([]byte(nil), framed...), 0x7fffffff)
	hugeChunk = append(hugeChunk, 1, 2, 3, 4, 5, 6, 7, 8)
	claim := []byte{0xff, 0xff, 0xff, 0xff, 0x0f, 0x00} // a raw block decoding to 4 GiB
	hugeOutput := binary.BigEndian.AppendUint32(append([]byte(nil), framed...), uint32(len(claim)))
	hugeOutput = append(hugeOutput, claim...)
	for _, tc := range []struct {
		name string
		in   []byte
		want error
	}{{"chunk length 2 GiB", hugeChunk, ErrCorrupt}, {"chunk decoding to 4 GiB", hugeOutput, ErrDecompressedTooLarge}} {
		var before, after runtime.MemStats
		runtime.ReadMemStats(&before)
		out, err := decompress(CodecSnappy, tc.in, 1<<20)
		runtime.ReadMemStats(&after)
		if !errors.Is(err, tc.want) || out != nil {
			t.Fatalf("%s: %d bytes, %v; want %v", tc.name, len(out), err, tc.want)
		}
		if d := after.TotalAlloc - before.TotalAlloc; d > 64<<10 {
			t.Fatalf("%s: allocated %d bytes for a %d-byte input", tc.name, d, len(tc.in))
		}
	}
}
