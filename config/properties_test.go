package config

import (
	"reflect"
	"strings"
	"testing"

	"samsa/javaprops"
)

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

// FuzzConfigProperties checks that javaprops.Load never panics and that
// whatever it returns survives a Format round trip (javaprops has its own
// fuzz target for the syntax; this one also feeds the result to NewBroker).
func FuzzConfigProperties(f *testing.F) {
	for _, s := range []string{
		"", "k=v", "a\\\n b", `\u00e9=\ud83d\ude00`, "# c\n!c\nk:v\nk v", `k=\u12`, "\\", "a=b\\\r\n\\", "x\\=y:=z",
		"broker.id=0\nlisteners=PLAINTEXT://:9092\nlog.dirs=/tmp/kafka-logs\nzookeeper.connect=localhost:2181\n",
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		props, err := javaprops.Load(data)
		if err != nil {
			return
		}
		again, err := javaprops.Load(javaprops.Format(props))
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
