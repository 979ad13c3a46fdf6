package group

// Primitive reads and writes of Kafka's classic types for the
// __consumer_offsets schemas, on franz-go's kbin with Kafka's stricter
// length rules on top.

import (
	"errors"
	"fmt"

	"github.com/twmb/franz-go/pkg/kbin"
)

// ErrCorrupt is wrapped by every decode error of a __consumer_offsets key or
// value: the bytes are not one of Kafka's schemas.
var ErrCorrupt = errors.New("group: corrupt __consumer_offsets record")

func corruptf(format string, args ...any) error {
	return fmt.Errorf("%w: "+format, append([]any{ErrCorrupt}, args...)...)
}

// reader decodes Kafka's classic (non-flexible) primitive types with
// franz-go's kbin.Reader and names the first field that failed. Every length
// is checked against the bytes left before anything is allocated; the first
// error sticks and later reads return zero values.
//
// Three rules are Kafka's (Type.STRING, Type.BYTES, ArrayOf) and stricter than
// kbin's own helpers, which is why strings, bytes and array counts are read
// through a length here: a non-null string may not be null, a length below -1
// is corrupt (kbin's NullableString would take it as null), and an array count
// is checked against the smallest element size, not one byte.
type reader struct {
	kb  kbin.Reader
	err error
}

func newReader(p []byte) *reader { return &reader{kb: kbin.Reader{Src: p}} }

// check records what as the failed field once the kbin reader has failed.
func (r *reader) check(what string, left int) {
	if r.err == nil && !r.kb.Ok() {
		r.err = corruptf("%s: truncated (%d bytes left)", what, left)
	}
}

// checkLen is check for a field of length n (formatted only on failure: this
// runs for every string of every loaded record).
func (r *reader) checkLen(what string, n, left int) {
	if r.err == nil && !r.kb.Ok() {
		r.err = corruptf("%s (length %d): truncated (%d bytes left)", what, n, left)
	}
}

func (r *reader) int16(what string) int16 {
	left := len(r.kb.Src)
	v := r.kb.Int16()
	r.check(what, left)
	return v
}

func (r *reader) int32(what string) int32 {
	left := len(r.kb.Src)
	v := r.kb.Int32()
	r.check(what, left)
	return v
}

func (r *reader) int64(what string) int64 {
	left := len(r.kb.Src)
	v := r.kb.Int64()
	r.check(what, left)
	return v
}

// span reads the n bytes of a field whose length was n; a length beyond the
// bytes left fails the reader.
func (r *reader) span(what string, n int) []byte {
	left := len(r.kb.Src)
	p := r.kb.Span(n)
	r.checkLen(what, n, left)
	return p
}

// fail records a corrupt length and stops the reader.
func (r *reader) fail(format string, args ...any) {
	if r.err == nil {
		r.err = corruptf(format, args...)
	}
	r.kb.Src = nil
}

// nullableString reads an int16-length string; -1 is null (returned as
// "", false).
func (r *reader) nullableString(what string) (string, bool) {
	n := r.int16(what)
	switch {
	case r.err != nil || n == -1:
		return "", false
	case n < -1:
		r.fail("%s (length %d)", what, n)
		return "", false
	}
	p := r.span(what, int(n))
	if r.err != nil {
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

// bytes reads an int32-length byte array (a copy, so a loaded group does not
// pin the batch it was read from); null is returned as nil.
func (r *reader) bytes(what string) []byte {
	n := r.int32(what)
	switch {
	case r.err != nil || n == -1:
		return nil
	case n < -1:
		r.fail("%s (length %d)", what, n)
		return nil
	}
	p := r.span(what, int(n))
	if r.err != nil {
		return nil
	}
	return append(make([]byte, 0, len(p)), p...)
}

// arrayLen reads an int32 element count and checks that count elements of
// at least minSize bytes each fit in what is left.
func (r *reader) arrayLen(what string, minSize int) int {
	n := r.int32(what)
	if r.err != nil {
		return 0
	}
	if n < 0 || int64(n)*int64(minSize) > int64(len(r.kb.Src)) {
		r.fail("%s (%d elements of at least %d bytes, %d left)", what, n, minSize, len(r.kb.Src))
		return 0
	}
	return int(n)
}

// appendNullableString writes "" as null (-1), anything else as a string:
// Kafka never stores an empty protocol, leader or group instance id.
func appendNullableString(b []byte, s string) []byte {
	if s == "" {
		return kbin.AppendInt16(b, -1)
	}
	return kbin.AppendString(b, s)
}
