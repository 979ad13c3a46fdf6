package wire

import "encoding/binary"

// reader decodes the few header primitives wire parses itself. Every read checks the remaining
// length first; after the first failure ok is false and every later read returns zero values.
type reader struct {
	src []byte
	ok  bool
}

// take consumes the next n bytes; ok is false (and the reader failed) when fewer are left, n
// is negative, or an earlier read failed.
func (r *reader) take(n int) (p []byte, ok bool) {
	if !r.ok || n < 0 || n > len(r.src) {
		r.fail()
		return nil, false
	}
	p, r.src = r.src[:n], r.src[n:]
	return p, true
}

func (r *reader) int16() int16 {
	p, ok := r.take(2)
	if !ok {
		return 0
	}
	return int16(binary.BigEndian.Uint16(p))
}

func (r *reader) int32() int32 {
	p, ok := r.take(4)
	if !ok {
		return 0
	}
	return int32(binary.BigEndian.Uint32(p))
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
	p, ok := r.take(int(n))
	if !ok {
		return nil
	}
	s := string(p)
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
		if _, ok := r.take(int(r.uvarint())); !ok {
			return
		}
	}
}

func (r *reader) fail() {
	r.ok = false
	r.src = nil
}
