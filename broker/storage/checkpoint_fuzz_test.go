package storage

import (
	"bytes"
	"reflect"
	"testing"
)

// FuzzStorageCheckpoint feeds arbitrary bytes to the offset checkpoint reader.
// Invariants: it never panics; whatever it accepts encodes and parses back
// to the same offsets (parse(encode(x)) == x); and the encoding is stable
// (encode(parse(encode(x))) == encode(x)).
func FuzzStorageCheckpoint(f *testing.F) {
	for _, s := range []string{
		"", "0\n", "0\n0\n", "0\n3\nbar 0 0\nfoo 0 1234\nfoo 1 987\n",
		"0\n1\nfoo\t2   7 \r\n", "1\n0\n", "0\n2\nfoo 0 1\nfoo 0 2\n", "0\n1\n foo 0 1\n",
		"0\n1\nfoo -1 1\n", "0\n1\nfoo 0 -9223372036854775808\n",
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, in []byte) {
		m, err := ReadOffsetCheckpoint(bytes.NewReader(in), "fuzz")
		if err != nil {
			return
		}
		enc, err := EncodeOffsetCheckpoint(m)
		if err != nil {
			t.Fatalf("accepted %q but cannot encode it: %v", in, err)
		}
		back, err := ReadOffsetCheckpoint(bytes.NewReader(enc), "fuzz")
		if err != nil {
			t.Fatalf("cannot parse own encoding %q: %v", enc, err)
		}
		if !reflect.DeepEqual(back, m) {
			t.Fatalf("round trip changed %v to %v", m, back)
		}
		enc2, err := EncodeOffsetCheckpoint(back)
		if err != nil || !bytes.Equal(enc, enc2) {
			t.Fatalf("encoding not stable: %q vs %q (%v)", enc, enc2, err)
		}
	})
}
