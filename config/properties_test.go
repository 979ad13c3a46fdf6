package config

import (
	"errors"
	"reflect"
	"strings"
	"testing"
)

func TestConfigParseProperties(t *testing.T) {
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
			got, err := ParseProperties([]byte(tc.in))
			if err != nil {
				t.Fatalf("ParseProperties: %v", err)
			}
			if !reflect.DeepEqual(got, tc.want) {
				t.Fatalf("got %q, want %q", got, tc.want)
			}
		})
	}
}

func TestConfigParsePropertiesMalformedEscape(t *testing.T) {
	for _, in := range []string{`k=\u12`, `k=\uzzzz`, "a=1\nk\\u00g0=1"} {
		_, err := ParseProperties([]byte(in))
		if !errors.Is(err, ErrMalformedEscape) {
			t.Errorf("%q: err = %v, want ErrMalformedEscape", in, err)
		}
	}
}

func TestConfigFormatPropertiesRoundTrip(t *testing.T) {
	m := map[string]string{
		"plain": "v", "k=with:sep s": " leading space", "#hash": "a\\b\nc\td", "!bang": "", "uni": "é😀",
	}
	got, err := ParseProperties(FormatProperties(m))
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(got, m) {
		t.Fatalf("round trip: got %q, want %q", got, m)
	}
}

func TestConfigParseOverrides(t *testing.T) {
	got, err := ParseOverrides([]string{"broker.id=3", "listeners=PLAINTEXT://:9093", "x=a=b", "empty="})
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]string{"broker.id": "3", "listeners": "PLAINTEXT://:9093", "x": "a=b", "empty": ""}
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("got %q, want %q", got, want)
	}
	_, err = ParseOverrides([]string{"noequals", "=v", "ok=1"})
	if err == nil {
		t.Fatal("want error")
	}
	for _, s := range []string{`"noequals"`, `"=v"`} {
		if !strings.Contains(err.Error(), s) {
			t.Errorf("error %q does not mention %s", err, s)
		}
	}
}

// FuzzConfigProperties checks that ParseProperties never panics and that
// whatever it returns survives a FormatProperties round trip.
func FuzzConfigProperties(f *testing.F) {
	for _, s := range []string{
		"", "k=v", "a\\\n b", `\u00e9=\ud83d\ude00`, "# c\n!c\nk:v\nk v", `k=\u12`, "\\", "a=b\\\r\n\\", "x\\=y:=z",
		"broker.id=0\nlisteners=PLAINTEXT://:9092\nlog.dirs=/tmp/kafka-logs\nzookeeper.connect=localhost:2181\n",
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		props, err := ParseProperties(data)
		if err != nil {
			return
		}
		again, err := ParseProperties(FormatProperties(props))
		if err != nil {
			t.Fatalf("re-parse of formatted output: %v", err)
		}
		if !reflect.DeepEqual(again, props) {
			t.Fatalf("round trip changed %q into %q", props, again)
		}
		_, _, _ = NewBroker(props)
		_, _ = TopicFromOverrides(nil, props)
	})
}
