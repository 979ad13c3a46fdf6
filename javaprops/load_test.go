package javaprops

import (
	"errors"
	"reflect"
	"testing"
)

func TestJavapropsLoad(t *testing.T) {
	tests := []struct {
		name string
		in   string
		want map[string]string
	}{
		{"empty", "", map[string]string{}},
		{"comments and blanks", "# c\n! c2\n   \n\t# indented\nk=v\n", map[string]string{"k": "v"}},
		{"separators", "a=1\nb:2\nc 3\nd\t=\t4\ne : 5\nf   6", map[string]string{"a": "1", "b": "2", "c": "3", "d": "4", "e": "5", "f": "6"}},
		{"only first separator", "a==b\nc=d=e\nf:=g", map[string]string{"a": "=b", "c": "d=e", "f": "=g"}},
		{"key alone", "alone\nother=", map[string]string{"alone": "", "other": ""}},
		{"leading whitespace", "   key = value  ", map[string]string{"key": "value  "}},
		{"escaped separators in key", `a\=b=c` + "\n" + `x\:y:z` + "\n" + `s\ p=q`, map[string]string{"a=b": "c", "x:y": "z", "s p": "q"}},
		{"escapes", `k=\t\n\r\f\\\q\#`, map[string]string{"k": "\t\n\r\f\\q#"}},
		{"unicode", `k=\u00e9\u0041`, map[string]string{"k": "éA"}},
		{"surrogate pair", `k=\ud83d\ude00`, map[string]string{"k": "😀"}},
		{"continuation", "k=a,\\\n    b,\\\n\tc\nn=1", map[string]string{"k": "a,b,c", "n": "1"}},
		{"escaped backslash at end is not continuation", "k=a\\\\\nn=1", map[string]string{"k": `a\`, "n": "1"}},
		{"comment does not continue", "# c \\\nk=v", map[string]string{"k": "v"}},
		{"continued line starting with hash", "k=a\\\n#b", map[string]string{"k": "a#b"}},
		{"crlf and cr", "a=1\r\nb=2\rc=3", map[string]string{"a": "1", "b": "2", "c": "3"}},
		{"continuation with crlf", "a=1\\\r\n  2\r\n", map[string]string{"a": "12"}},
		{"trailing backslash at eof", "k=v\\", map[string]string{"k": "v"}},
		{"duplicate last wins", "k=1\nk=2", map[string]string{"k": "2"}},
		{"utf8 kept", "k=héllo", map[string]string{"k": "héllo"}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got, err := Load([]byte(tc.in))
			if err != nil {
				t.Fatalf("Load: %v", err)
			}
			if !reflect.DeepEqual(got, tc.want) {
				t.Fatalf("got %q, want %q", got, tc.want)
			}
		})
	}
}

func TestJavapropsMalformedEscape(t *testing.T) {
	for _, in := range []string{`k=\u12`, `k=\uzzzz`, "a=1\nk\\u00g0=1"} {
		_, err := Load([]byte(in))
		if !errors.Is(err, ErrMalformedEscape) {
			t.Errorf("%q: err = %v, want ErrMalformedEscape", in, err)
		}
	}
}

func TestJavapropsFormatRoundTrip(t *testing.T) {
	m := map[string]string{
		"plain": "v", "k=with:sep s": " leading space", "#hash": "a\\b\nc\td", "!bang": "", "uni": "é😀",
	}
	got, err := Load(Format(m))
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(got, m) {
		t.Fatalf("round trip: got %q, want %q", got, m)
	}
}
