package record

// Kafka's record fields use zig-zag varints (protobuf style): int32 values
// take at most 5 bytes, int64 values at most 10. Decoders reject longer or
// truncated encodings; like Kafka's ByteUtils.readVarint/readVarlong they
// ignore the bits of the last byte that do not fit.

// readVarint decodes a zig-zag varint that must fit in an int32. It returns
// the value and the number of bytes read; n == 0 means malformed or
// truncated input.
func readVarint(p []byte) (int32, int) {
	var u uint32
	for i := 0; i < 5 && i < len(p); i++ {
		c := p[i]
		u |= uint32(c&0x7f) << (7 * i)
		if c < 0x80 {
			return int32(u>>1) ^ -int32(u&1), i + 1
		}
	}
	return 0, 0
}

// readVarlong decodes a zig-zag varint that must fit in an int64.
func readVarlong(p []byte) (int64, int) {
	var u uint64
	for i := 0; i < 10 && i < len(p); i++ {
		c := p[i]
		u |= uint64(c&0x7f) << (7 * i)
		if c < 0x80 {
			return int64(u>>1) ^ -int64(u&1), i + 1
		}
	}
	return 0, 0
}

// appendVarint appends the zig-zag varint encoding of v.
func appendVarint(dst []byte, v int32) []byte {
	return appendUvarint(dst, uint64(uint32((v<<1)^(v>>31))))
}

// appendVarlong appends the zig-zag varint encoding of v.
func appendVarlong(dst []byte, v int64) []byte {
	return appendUvarint(dst, uint64((v<<1)^(v>>63)))
}

func appendUvarint(dst []byte, u uint64) []byte {
	for u >= 0x80 {
		dst = append(dst, byte(u)|0x80)
		u >>= 7
	}
	return append(dst, byte(u))
}

// sizeofVarint returns the encoded size of v as a zig-zag varint.
func sizeofVarint(v int32) int { return sizeofUvarint(uint64(uint32((v << 1) ^ (v >> 31)))) }

// sizeofVarlong returns the encoded size of v as a zig-zag varint.
func sizeofVarlong(v int64) int { return sizeofUvarint(uint64((v << 1) ^ (v >> 63))) }

func sizeofUvarint(u uint64) int {
	n := 1
	for u >= 0x80 {
		u >>= 7
		n++
	}
	return n
}
