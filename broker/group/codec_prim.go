package group

import (
	"encoding/binary"
	"errors"
	"fmt"
)

// ErrCorrupt is wrapped by every decode error of a __consumer_offsets key or
// value: the bytes are not one of Kafka's schemas.
var ErrCorrupt = errors.New("group: corrupt __consumer_offsets record")

func corruptf(format string, args ...any) error {
	return fmt.Errorf("%w: "+format, append([]any{ErrCorrupt}, args...)...)
}

// reader decodes Kafka's classic (non-flexible) primitive types. Every
// length is checked against the bytes left before anything is allocated;
// the first error sticks and later reads return zero values.
type reader struct {
	b   []byte
	err error
}

func (r *reader) fail(what string, need int) {
	if r.err == nil {
		r.err = corruptf("%s needs %d bytes, %d left", what, need, len(r.b))
	}
	r.b = nil
}

// take consumes the next n bytes; ok is false (and the error recorded) when
// fewer are left.
func (r *reader) take(what string, n int) (p []byte, ok bool) {
	if len(r.b) < n {
		r.fail(what, n)
		return nil, false
	}
	p, r.b = r.b[:n], r.b[n:]
	return p, true
}

func (r *reader) int16(what string) int16 {
	p, ok := r.take(what, 2)
	if !ok {
		return 0
	}
	return int16(binary.BigEndian.Uint16(p))
}

func (r *reader) int32(what string) int32 {
	p, ok := r.take(what, 4)
	if !ok {
		return 0
	}
	return int32(binary.BigEndian.Uint32(p))
}

func (r *reader) int64(what string) int64 {
	p, ok := r.take(what, 8)
	if !ok {
		return 0
	}
	return int64(binary.BigEndian.Uint64(p))
}

// nullableString reads an int16-length string; -1 is null (returned as
// "", false).
func (r *reader) nullableString(what string) (string, bool) {
	n := r.int16(what)
	if r.err != nil {
		return "", false
	}
	if n == -1 {
		return "", false
	}
	if n < 0 {
		r.fail(fmt.Sprintf("%s (length %d)", what, n), 0)
		return "", false
	}
	p, ok := r.take(what, int(n))
	if !ok {
		return "", false
	}
	return string(p), true
}

// string reads a non-null string.
func (r *reader) string(what string) string {
	s, ok := r.nullableString(what)
	if !ok && r.err == nil {
		r.err = corruptf("%s is null", what)
	}
	return s
}

// bytes reads an int32-length byte array (a copy); null is returned as nil.
func (r *reader) bytes(what string) []byte {
	n := r.int32(what)
	if r.err != nil || n == -1 {
		return nil
	}
	if n < 0 || int64(n) > int64(len(r.b)) {
		r.fail(fmt.Sprintf("%s (length %d)", what, n), int(max(n, 0)))
		return nil
	}
	p := make([]byte, n)
	copy(p, r.b)
	r.b = r.b[n:]
	return p
}

// arrayLen reads an int32 element count and checks that count elements of
// at least minSize bytes each fit in what is left.
func (r *reader) arrayLen(what string, minSize int) int {
	n := r.int32(what)
	if r.err != nil {
		return 0
	}
	if n < 0 || int64(n)*int64(minSize) > int64(len(r.b)) {
		r.fail(fmt.Sprintf("%s (%d elements)", what, n), int(max(n, 0))*minSize)
		return 0
	}
	return int(n)
}

func appendInt16(b []byte, v int16) []byte { return binary.BigEndian.AppendUint16(b, uint16(v)) }
func appendInt32(b []byte, v int32) []byte { return binary.BigEndian.AppendUint32(b, uint32(v)) }
func appendInt64(b []byte, v int64) []byte { return binary.BigEndian.AppendUint64(b, uint64(v)) }

// appendString writes s with an int16 length. Callers bound s to 32767
// bytes (Kafka's limit) before encoding.
func appendString(b []byte, s string) []byte {
	b = appendInt16(b, int16(len(s)))
	return append(b, s...)
}

// appendNullableString writes "" as null (-1), anything else as a string.
func appendNullableString(b []byte, s string) []byte {
	if s == "" {
		return appendInt16(b, -1)
	}
	return appendString(b, s)
}

// appendBytes writes p with an int32 length; nil is written as empty, as
// Kafka never stores null subscription or assignment bytes.
func appendBytes(b []byte, p []byte) []byte {
	b = appendInt32(b, int32(len(p)))
	return append(b, p...)
}
