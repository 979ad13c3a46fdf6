package wire

import "github.com/twmb/franz-go/pkg/kbin"

// The header primitives come from franz-go's kbin (the reader kmsg itself decodes with): every
// read checks the remaining length, and after the first failure the reader is not Ok and
// returns zero values. Two header rules are stricter than kbin's own helpers, and so are
// written here:

// readClientID reads the request header's client_id: an INT16-length nullable string, never
// compact (header v2 keeps this form, KIP-482). Length -1 is null. ok is false when the
// reader fails, or for a length below -1: kbin's NullableString would take that as null, but a
// length of -2 is a corrupt header, and ParseRequest refuses it as malformed.
func readClientID(r *kbin.Reader) (id *string, ok bool) {
	n := r.Int16()
	switch {
	case !r.Ok() || n < -1:
		return nil, false
	case n == -1:
		return nil, true
	}
	p := r.Span(int(n))
	if !r.Ok() {
		return nil, false
	}
	s := string(p)
	return &s, true
}

// skipTags skips a header's tagged-field section: a count, then (tag, size, bytes) per field,
// each read with kbin. It is kmsg.SkipTags' loop written out because SkipTags takes an
// interface, which moves the reader to the heap: one more allocation per request (measured
// with BenchmarkWireParseMetadata). It stops as soon as the reader fails; each field costs at
// least two bytes, so a forged count ends with the input, and nothing is allocated.
func skipTags(r *kbin.Reader) bool {
	for n := r.Uvarint(); n > 0 && r.Ok(); n-- {
		r.Uvarint() // tag
		r.Span(int(r.Uvarint()))
	}
	return r.Ok()
}
