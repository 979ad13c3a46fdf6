package broker

import (
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"testing"
)

// TestAPITableMatchesFiles checks STYLE S2.2/S2.3: every NN_<api>.go file
// opens with "<Name>: v<min>-<max>" matching its row in apis.go, and every
// row has a file.
func TestAPITableMatchesFiles(t *testing.T) {
	table := newAPITable()
	files, err := filepath.Glob("[0-9][0-9]_*.go")
	if err != nil {
		t.Fatal(err)
	}
	header := regexp.MustCompile(`(?m)^// [A-Za-z]+: v(\d+)-(\d+)$`)
	seen := map[int16]bool{}
	for _, f := range files {
		if regexp.MustCompile(`_test\.go$`).MatchString(f) {
			continue
		}
		key, err := strconv.Atoi(f[:2])
		if err != nil {
			t.Fatalf("%s: %v", f, err)
		}
		data, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		m := header.FindSubmatch(data)
		if m == nil {
			t.Errorf("%s: no \"Name: vN-M\" header", f)
			continue
		}
		lo, _ := strconv.Atoi(string(m[1]))
		hi, _ := strconv.Atoi(string(m[2]))
		row, ok := table[int16(key)]
		if !ok {
			t.Errorf("%s: api key %d missing from apis.go", f, key)
			continue
		}
		if int(row.min) != lo || int(row.max) != hi {
			t.Errorf("%s: header says v%d-%d, apis.go v%d-%d", f, lo, hi, row.min, row.max)
		}
		seen[int16(key)] = true
	}
	for k := range table {
		if !seen[k] {
			t.Errorf("api key %d has no NN_<api>.go file", k)
		}
	}
}
