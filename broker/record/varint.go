package record

import "github.com/twmb/franz-go/pkg/kbin"

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

// The encoders are kbin's: writing has no acceptance rule to keep, and
// kbin's output is the same canonical encoding. The decoders above stay here:
// kbin.Varint rejects a fifth byte above 0x0f, where Kafka's
// ByteUtils.readVarint (and so Samsa) ignores the bits that do not fit, and
// the fetch and validation paths use the inlined varint12 in walk.go.

// appendVarint appends the zig-zag varint encoding of v.
func appendVarint(dst []byte, v int32) []byte { return kbin.AppendVarint(dst, v) }

// appendVarlong appends the zig-zag varint encoding of v.
func appendVarlong(dst []byte, v int64) []byte { return kbin.AppendVarlong(dst, v) }

// sizeofVarint returns the encoded size of v as a zig-zag varint.
func sizeofVarint(v int32) int { return kbin.VarintLen(v) }

// sizeofVarlong returns the encoded size of v as a zig-zag varint.
func sizeofVarlong(v int64) int { return kbin.VarlongLen(v) }
