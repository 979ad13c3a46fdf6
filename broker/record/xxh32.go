package record

import (
	"encoding/binary"
	"math/bits"
)

// xxh32 implements XXH32 with seed 0. It is used only to compute LZ4 frame
// descriptor checksums (a handful of bytes), to read and write the checksum
// Kafka got wrong for magic 0 (KAFKA-3160).
func xxh32(p []byte) uint32 {
	const (
		p1 uint32 = 2654435761
		p2 uint32 = 2246822519
		p3 uint32 = 3266489917
		p4 uint32 = 668265263
		p5 uint32 = 374761393
	)
	round := func(acc, in uint32) uint32 { return bits.RotateLeft32(acc+in*p2, 13) * p1 }
	n := uint32(len(p))
	var h uint32
	if len(p) >= 16 {
		var seed uint32 // 0, as a variable so the additions wrap
		v1, v2, v3, v4 := seed+p1+p2, seed+p2, seed, seed-p1
		for len(p) >= 16 {
			v1 = round(v1, binary.LittleEndian.Uint32(p[0:]))
			v2 = round(v2, binary.LittleEndian.Uint32(p[4:]))
			v3 = round(v3, binary.LittleEndian.Uint32(p[8:]))
			v4 = round(v4, binary.LittleEndian.Uint32(p[12:]))
			p = p[16:]
		}
		h = bits.RotateLeft32(v1, 1) + bits.RotateLeft32(v2, 7) + bits.RotateLeft32(v3, 12) + bits.RotateLeft32(v4, 18)
	} else {
		h = p5
	}
	h += n
	for ; len(p) >= 4; p = p[4:] {
		h += binary.LittleEndian.Uint32(p) * p3
		h = bits.RotateLeft32(h, 17) * p4
	}
	for _, c := range p {
		h += uint32(c) * p5
		h = bits.RotateLeft32(h, 11) * p1
	}
	h ^= h >> 15
	h *= p2
	h ^= h >> 13
	h *= p3
	h ^= h >> 16
	return h
}

// lz4DescriptorEnd returns the index of the header checksum byte (HC) of
// the LZ4 frame in p, or -1 when p does not start with a complete frame
// descriptor.
func lz4DescriptorEnd(p []byte) int {
	if len(p) < 7 || binary.LittleEndian.Uint32(p) != 0x184D2204 {
		return -1
	}
	end := 6
	if p[4]&0x08 != 0 { // content size present
		end += 8
	}
	if p[4]&0x01 != 0 { // dictionary id present
		end += 4
	}
	if len(p) <= end {
		return -1
	}
	return end
}

// lz4FixLegacyChecksum returns p with the frame descriptor checksum
// recomputed the standard way (over the descriptor, without the magic
// number). Kafka's magic 0 LZ4 writer hashed the magic number too; its
// readers ignore the byte for magic 0, and so do we by rewriting it. p is
// not modified; the result shares no bytes with it when changed.
func lz4FixLegacyChecksum(p []byte) []byte {
	end := lz4DescriptorEnd(p)
	if end < 0 {
		return p
	}
	hc := byte(xxh32(p[4:end]) >> 8)
	if p[end] == hc {
		return p
	}
	q := append([]byte(nil), p...)
	q[end] = hc
	return q
}

// lz4BreakLegacyChecksum rewrites, in place, the descriptor checksum of the
// LZ4 frame in p the way Kafka's magic 0 writer computed it (over magic
// number and descriptor), so old magic 0 readers accept it.
func lz4BreakLegacyChecksum(p []byte) {
	if end := lz4DescriptorEnd(p); end >= 0 {
		p[end] = byte(xxh32(p[:end]) >> 8)
	}
}
