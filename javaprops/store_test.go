package javaprops

import (
	"errors"
	"reflect"
	"testing"
)

// TestJavapropsEscape checks the bytes Properties.store writes (saveConvert
// with escUnicode), the form meta.properties must keep.
func TestJavapropsEscape(t *testing.T) {
	for _, c := range []struct {
		in    string
		isKey bool
		want  string
	}{
		{" a=b é", false, `\ a\=b \u00E9`},
		{"a b", true, `a\ b`},
		{"a b", false, `a b`},
		{"x:y#z!w", false, `x\:y\#z\!w`},
		{"tab\tnl\ncr\rff\f", false, `tab\tnl\ncr\rff\f`},
		{`back\slash`, false, `back\\slash`},
		{"😀", false, `\uD83D\uDE00`},
		{"\x01\x7f", false, `\u0001\u007F`},
		{"bad\xffutf8", false, "bad\xffutf8"},
	} {
		if got := Escape(c.in, c.isKey); got != c.want {
			t.Errorf("Escape(%q, %v) = %q, want %q", c.in, c.isKey, got, c.want)
		}
	}
}

// TestJavapropsLatin1 checks LoadLatin1 reads bytes as ISO-8859-1 (Kafka's
// meta.properties reader) while Load reads UTF-8.
func TestJavapropsLatin1(t *testing.T) {
	got, err := LoadLatin1([]byte("k=\xe9\nh\xe9=\\u00e9"))
	if err != nil {
		t.Fatal(err)
	}
	if want := map[string]string{"k": "é", "hé": "é"}; !reflect.DeepEqual(got, want) {
		t.Fatalf("LoadLatin1 = %q, want %q", got, want)
	}
	got, err = Load([]byte("k=\xc3\xa9"))
	if err != nil || got["k"] != "é" {
		t.Fatalf("Load = %q, %v", got, err)
	}
}

// TestJavapropsSyntaxErrorLine checks the error names the logical line's
// first natural line.
func TestJavapropsSyntaxErrorLine(t *testing.T) {
	_, err := Load([]byte("# c\na=1\nb=x\\\n  \\u12"))
	var se *SyntaxError
	if !errors.As(err, &se) || se.Line != 3 || !errors.Is(err, ErrMalformedEscape) {
		t.Fatalf("err = %v, want a SyntaxError on line 3", err)
	}
	if want := `malformed \uxxxx encoding on line 3`; err.Error() != want {
		t.Fatalf("err = %q, want %q", err, want)
	}
}

// FuzzJavaprops: neither loader panics; whatever Load returns survives a
// Format round trip; the Latin-1 loader agrees with Load on ASCII input and
// its result round-trips too (Format writes it as pure ASCII).
func FuzzJavaprops(f *testing.F) {
	for _, s := range []string{
		"", "k=v", "a\\\n b", `\u00e9=\ud83d\ude00`, "# c\n!c\nk:v\nk v", `k=\u12`, "\\", "a=b\\\r\n\\", "x\\=y:=z",
		"broker.id=0\nlisteners=PLAINTEXT://:9092\n", "#\n#Thu Jun 10 12:00:00 UTC 2021\nversion=0\ncluster.id=\xe9\n",
		"k=\\ud83d", "k=\\ude00\\ud83d", "\xff\xfe=\x80",
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		props, loadErr := Load(data)
		if loadErr == nil {
			again, err := Load(Format(props))
			if err != nil {
				t.Fatalf("re-load of formatted output: %v", err)
			}
			if !reflect.DeepEqual(again, props) {
				t.Fatalf("round trip changed %q into %q", props, again)
			}
		}
		l1, err1 := LoadLatin1(data)
		if err1 != nil {
			if !errors.Is(err1, ErrMalformedEscape) {
				t.Fatalf("LoadLatin1 error %v does not wrap ErrMalformedEscape", err1)
			}
			return
		}
		out := Format(l1)
		for _, c := range out {
			if c >= 0x80 {
				t.Fatalf("Format of Latin-1 input wrote byte %#x: %q", c, out)
			}
		}
		again, err := LoadLatin1(out)
		if err != nil || !reflect.DeepEqual(again, l1) {
			t.Fatalf("Latin-1 round trip changed %q into %q (%v)", l1, again, err)
		}
		ascii := true
		for _, c := range data {
			if c >= 0x80 {
				ascii = false
			}
		}
		if ascii && (loadErr != nil || !reflect.DeepEqual(props, l1)) {
			t.Fatalf("Load and LoadLatin1 disagree on ASCII input: %q vs %q", props, l1)
		}
	})
}
