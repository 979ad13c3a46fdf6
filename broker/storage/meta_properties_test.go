package storage

import (
	"bytes"
	"errors"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"time"

	"samsa/javaprops"
)

var metaGoldenTime = time.Date(2021, time.June, 10, 12, 0, 0, 0, time.UTC)

// TestStorageMetaPropertiesGolden checks the encoding against the layout of
// reference §7.1 byte for byte.
func TestStorageMetaPropertiesGolden(t *testing.T) {
	want, err := os.ReadFile(filepath.Join("testdata", "meta-properties", "meta.properties.golden"))
	if err != nil {
		t.Fatal(err)
	}
	m := MetaProperties{Version: 0, BrokerID: 1, ClusterID: "Kc7R0hZsQpWm0j1dVhXb3g"}
	if got := EncodeMetaProperties(m, metaGoldenTime); !bytes.Equal(got, want) {
		t.Fatalf("encoded:\n%s\nwant:\n%s", got, want)
	}
	back, err := ParseMetaProperties(want, "golden")
	if err != nil || back != m {
		t.Fatalf("parsed %+v, %v; want %+v", back, err, m)
	}
}

// TestStorageMetaPropertiesJavaSyntax reads files in the other shapes
// Properties.load accepts: CRLF, '!' comments, ':' and whitespace
// separators, indentation, continuation lines and \u escapes.
func TestStorageMetaPropertiesJavaSyntax(t *testing.T) {
	data, err := os.ReadFile(filepath.Join("testdata", "meta-properties", "java-written.properties"))
	if err != nil {
		t.Fatal(err)
	}
	want := MetaProperties{Version: 0, BrokerID: 1, ClusterID: "Kc7R0hZsQpWm0j1dVhXb3g"}
	if got, err := ParseMetaProperties(data, "java"); err != nil || got != want {
		t.Fatalf("got %+v, %v; want %+v", got, err, want)
	}
	for _, tc := range []struct {
		name, in string
		want     MetaProperties
	}{
		{"no version, no cluster", "broker.id=7\n", MetaProperties{BrokerID: 7}},
		{"no broker id", "version=0\ncluster.id=x\n", MetaProperties{BrokerID: -1, ClusterID: "x"}},
		{"continuation", "broker.id=1\\\n    2\ncluster.id=a\\\r\n b\n", MetaProperties{BrokerID: 12, ClusterID: "ab"}},
		{"comment does not continue", "#c\\\nbroker.id=3\n", MetaProperties{BrokerID: 3}},
		{"unicode escape", "broker.id=4\ncluster.id=\\u00e9\\uD83D\\uDE00x\n", MetaProperties{BrokerID: 4, ClusterID: "é😀x"}},
		{"escaped key chars", "clu\\ster.id=v\nbroker.id=5\n", MetaProperties{BrokerID: 5, ClusterID: "v"}},
		{"later key wins", "broker.id=1\nbroker.id=2\n", MetaProperties{BrokerID: 2}},
		{"latin-1 byte", "broker.id=1\ncluster.id=\xe9\n", MetaProperties{BrokerID: 1, ClusterID: "é"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, err := ParseMetaProperties([]byte(tc.in), "t")
			if err != nil || got != tc.want {
				t.Fatalf("got %+v, %v; want %+v", got, err, tc.want)
			}
		})
	}
}

// TestStorageMetaPropertiesEscaping checks that values with characters Java
// escapes survive a write and a read, and are escaped as Java's store does.
func TestStorageMetaPropertiesEscaping(t *testing.T) {
	for _, id := range []string{" lead", "a=b:c#d!e", `back\slash`, "tab\tnl\ncr\rff\f", "é😀", "trailing "} {
		m := MetaProperties{BrokerID: 0, ClusterID: id}
		enc := EncodeMetaProperties(m, metaGoldenTime)
		for _, line := range strings.Split(strings.TrimSuffix(string(enc), "\n"), "\n") {
			for _, c := range []byte(line) {
				if c < 0x20 || c > 0x7e {
					t.Fatalf("unescaped byte %#x in %q", c, enc)
				}
			}
		}
		back, err := ParseMetaProperties(enc, "t")
		if err != nil || back != m {
			t.Fatalf("cluster.id %q: got %+v, %v from %q", id, back, err, enc)
		}
	}
	if got := javaprops.Escape(" a=b é", false); got != `\ a\=b \u00E9` {
		t.Fatalf("escape = %q", got)
	}
}

// TestStorageMetaPropertiesMalformed checks refusals: a KRaft (version 1)
// file, non-numeric values, bad escapes and oversized files.
func TestStorageMetaPropertiesMalformed(t *testing.T) {
	for _, in := range []string{
		"version=1\nnode.id=1\n",
		"version=x\n",
		"broker.id=abc\n",
		"broker.id=-3\n",
		"cluster.id=\\u12\n",
		"cluster.id=\\uZZZZ\n",
		strings.Repeat("#", maxPropertiesBytes+1),
	} {
		if _, err := ParseMetaProperties([]byte(in), "/d/meta.properties"); !errors.Is(err, ErrMalformedMetaProperties) ||
			!strings.Contains(err.Error(), "/d/meta.properties") {
			t.Errorf("%.40q: err = %v", in, err)
		}
	}
}

// TestStorageMetaPropertiesFile writes and reads meta.properties in a real
// directory, including a missing file and a leftover .tmp from a crash.
func TestStorageMetaPropertiesFile(t *testing.T) {
	dir := t.TempDir()
	if _, found, err := ReadMetaProperties(OSFS{}, dir); found || err != nil {
		t.Fatalf("missing file: found=%v err=%v", found, err)
	}
	tmp := filepath.Join(dir, MetaPropertiesFile+".tmp")
	if err := os.WriteFile(tmp, []byte("junk"), 0o644); err != nil {
		t.Fatal(err)
	}
	m := MetaProperties{BrokerID: 3, ClusterID: "abc"}
	if err := WriteMetaProperties(OSFS{}, dir, m, metaGoldenTime); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(tmp, []byte("junk"), 0o644); err != nil {
		t.Fatal(err)
	}
	got, found, err := ReadMetaProperties(OSFS{}, dir)
	if err != nil || !found || got != m {
		t.Fatalf("got %+v found=%v err=%v", got, found, err)
	}
	if _, err := os.Stat(tmp); !errors.Is(err, os.ErrNotExist) {
		t.Fatalf("leftover tmp not removed: %v", err)
	}
	if err := os.WriteFile(filepath.Join(dir, MetaPropertiesFile), []byte("version=1\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if _, found, err := ReadMetaProperties(OSFS{}, dir); !found || !errors.Is(err, ErrMalformedMetaProperties) {
		t.Fatalf("bad file: found=%v err=%v", found, err)
	}
}

// TestStorageMetaPropertiesMismatch checks the three startup refusals Kafka
// makes: broker.id mismatch, cluster.id mismatch, and log dirs that disagree.
func TestStorageMetaPropertiesMismatch(t *testing.T) {
	m := MetaProperties{BrokerID: 1, ClusterID: "c1"}
	if err := m.CheckBrokerID(1); err != nil {
		t.Fatal(err)
	}
	if err := m.CheckBrokerID(-1); err != nil {
		t.Fatalf("unconfigured broker.id: %v", err)
	}
	if err := m.CheckBrokerID(2); !errors.Is(err, ErrInconsistentBrokerID) || !strings.Contains(err.Error(), "configured broker.id 2 doesn't match stored broker.id 1") {
		t.Fatalf("err = %v", err)
	}
	if err := (MetaProperties{BrokerID: -1}).CheckBrokerID(2); err != nil {
		t.Fatalf("no stored id: %v", err)
	}
	if err := m.CheckClusterID("c1"); err != nil {
		t.Fatal(err)
	}
	if err := m.CheckClusterID("c2"); !errors.Is(err, ErrInconsistentClusterID) {
		t.Fatalf("err = %v", err)
	}
	if err := (MetaProperties{BrokerID: 1}).CheckClusterID("c2"); err != nil {
		t.Fatalf("pre-2.4 file: %v", err)
	}

	got, err := MergeMetaProperties(map[string]MetaProperties{"/a": m, "/b": m})
	if err != nil || got != m {
		t.Fatalf("merge equal: %+v, %v", got, err)
	}
	if got, err := MergeMetaProperties(nil); err != nil || !reflect.DeepEqual(got, MetaProperties{BrokerID: -1}) {
		t.Fatalf("merge none: %+v, %v", got, err)
	}
	_, err = MergeMetaProperties(map[string]MetaProperties{"/a": m, "/b": {BrokerID: 2, ClusterID: "c1"}})
	if !errors.Is(err, ErrInconsistentBrokerMetadata) || !strings.Contains(err.Error(), "/b -> {version=0, broker.id=2") {
		t.Fatalf("merge differing: %v", err)
	}
}

// FuzzStorageMetaProperties: the parser never panics, and whatever it
// accepts encodes and parses back to the same value.
func FuzzStorageMetaProperties(f *testing.F) {
	f.Add([]byte("#\n#Thu Jun 10 12:00:00 UTC 2021\nversion=0\nbroker.id=1\ncluster.id=Kc7R0hZsQpWm0j1dVhXb3g\n"))
	f.Add([]byte("broker.id=1\\\n 2\ncluster.id=\\u00e9\\uD83D\\uDE00\n"))
	f.Add([]byte("a\\"))
	f.Fuzz(func(t *testing.T, in []byte) {
		m, err := ParseMetaProperties(in, "fuzz")
		if err != nil {
			return
		}
		back, err := ParseMetaProperties(EncodeMetaProperties(m, metaGoldenTime), "fuzz")
		if err != nil {
			t.Fatalf("cannot parse own encoding of %+v: %v", m, err)
		}
		if back != m {
			t.Fatalf("round trip changed %+v to %+v", m, back)
		}
	})
}
