package record

import (
	"bytes"
	"encoding/binary"
	"fmt"
	"slices"

	"github.com/klauspost/compress/snappy"
)

// Xerial snappy framing, as written by Kafka's Java clients through
// org.xerial.snappy.SnappyOutputStream:
//
//	magic    [8]byte  0x82 'S' 'N' 'A' 'P' 'P' 'Y' 0x00
//	version  int32    1
//	compat   int32    1
//	blocks   { length int32, snappy block [length]byte } ...
//
// Each block is an independent raw snappy block of at most 32 KiB input.
var xerialMagic = []byte{0x82, 'S', 'N', 'A', 'P', 'P', 'Y', 0}

const (
	xerialHeaderSize = 16
	xerialBlockSize  = 32 << 10
)

// xerialEncode appends the xerial-framed snappy encoding of src to dst.
func xerialEncode(dst, src []byte) []byte {
	dst = append(dst, xerialMagic...)
	dst = binary.BigEndian.AppendUint32(dst, 1)
	dst = binary.BigEndian.AppendUint32(dst, 1)
	for len(src) > 0 {
		n := min(len(src), xerialBlockSize)
		lenAt := len(dst)
		dst = append(dst, 0, 0, 0, 0)
		start := len(dst)
		dst = append(dst, make([]byte, snappy.MaxEncodedLen(n))...)
		enc := snappy.Encode(dst[start:], src[:n])
		dst = dst[:start+len(enc)]
		binary.BigEndian.PutUint32(dst[lenAt:], uint32(len(enc)))
		src = src[n:]
	}
	return dst
}

// xerialDecode decodes xerial-framed snappy, or a single raw snappy block
// when src does not start with the xerial magic (some non-Java clients
// write raw blocks). The decoded length declared by each block is checked
// against the remaining budget before anything is allocated.
func xerialDecode(src []byte, max int) ([]byte, error) {
	if len(src) < xerialHeaderSize || !bytes.Equal(src[:len(xerialMagic)], xerialMagic) {
		return snappyBlock(nil, src, max)
	}
	src = src[xerialHeaderSize:]
	var out []byte
	for len(src) > 0 {
		if len(src) < 4 {
			return nil, corruptf("snappy: truncated xerial block length")
		}
		n := binary.BigEndian.Uint32(src)
		src = src[4:]
		if uint64(n) > uint64(len(src)) {
			return nil, corruptf("snappy: xerial block of %d bytes, %d left", n, len(src))
		}
		var err error
		if out, err = snappyBlock(out, src[:n], max); err != nil {
			return nil, err
		}
		src = src[n:]
	}
	return out, nil
}

// snappyBlock appends the decoding of one raw snappy block to out, failing
// when len(out) would exceed max.
func snappyBlock(out, block []byte, max int) ([]byte, error) {
	n, err := snappy.DecodedLen(block)
	if err != nil {
		return nil, corruptf("snappy: %v", err)
	}
	if n > max-len(out) {
		return nil, fmt.Errorf("%w: snappy output exceeds %d bytes", ErrDecompressedTooLarge, max)
	}
	start := len(out)
	out = slices.Grow(out, n)[:start+n]
	dec, err := snappy.Decode(out[start:], block)
	if err != nil {
		return nil, corruptf("snappy: %v", err)
	}
	if len(dec) != n {
		return nil, corruptf("snappy: decoded %d bytes, header said %d", len(dec), n)
	}
	return out, nil
}
