package wire

import "encoding/binary"

// reader decodes the few header primitives wire parses itself. Every read checks the remaining
// length first; after the first failure ok is false and every later read returns zero values.
type reader struct {
	src []byte
	ok  bool
}

func (r *reader) int16() int16 {
	if !r.ok || len(r.src) < 2 {
		r.fail()
		return 0
	}
	v := int16(binary.BigEndian.Uint16(r.src))
	r.src = r.src[2:]
	return v
}

func (r *reader) int32() int32 {
	if !r.ok || len(r.src) < 4 {
		r.fail()
		return 0
	}
	v := int32(binary.BigEndian.Uint32(r.src))
	r.src = r.src[4:]
	return v
}

// uvarint reads an unsigned varint that must fit in 32 bits (Kafka's UNSIGNED_VARINT).
func (r *reader) uvarint() uint32 {
	if !r.ok {
		return 0
	}
	v, n := binary.Uvarint(r.src)
	if n <= 0 || n > 5 || v > 1<<32-1 {
		r.fail()
		return 0
	}
	r.src = r.src[n:]
	return uint32(v)
}

// nullableString reads an INT16-length nullable string (never compact: the request header's
// client_id keeps this form even in header v2, KIP-482). Length -1 is null; any other negative
// length, or a length beyond the remaining bytes, fails.
func (r *reader) nullableString() *string {
	n := r.int16()
	if !r.ok || n == -1 {
		return nil
	}
	if n < 0 || int(n) > len(r.src) {
		r.fail()
		return nil
	}
	s := string(r.src[:n])
	r.src = r.src[n:]
	return &s
}

// skipTags skips a tagged-field section: a count, then (tag, size, bytes) per field. Counts and
// sizes are bounded by the remaining bytes before anything is skipped.
func (r *reader) skipTags() {
	num := r.uvarint()
	if !r.ok {
		return
	}
	if uint64(num)*2 > uint64(len(r.src)) { // each field is at least a tag byte and a size byte
		r.fail()
		return
	}
	for i := uint32(0); i < num && r.ok; i++ {
		r.uvarint()
		size := r.uvarint()
		if !r.ok || uint64(size) > uint64(len(r.src)) {
			r.fail()
			return
		}
		r.src = r.src[size:]
	}
}

func (r *reader) fail() {
	r.ok = false
	r.src = nil
}
