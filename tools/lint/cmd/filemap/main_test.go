package main

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestLintFileMap fails when docs/design.md's file map differs from the tree (STYLE S2.7: the
// map must not drift). The fix is always `go run ./tools/lint/cmd/filemap`.
func TestLintFileMap(t *testing.T) {
	root, err := findRoot()
	if err != nil {
		t.Fatal(err)
	}
	doc, err := os.ReadFile(filepath.Join(root, designDoc))
	if err != nil {
		t.Fatal(err)
	}
	gen, err := generate(root)
	if err != nil {
		t.Fatal(err)
	}
	want, err := splice(doc, gen)
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(doc, want) {
		t.Errorf("%s's file map differs from the tree (first difference: %s); run: go run ./tools/lint/cmd/filemap", designDoc, firstDiff(doc, want))
	}
}

// firstDiff names the first line where got and want differ, for the failure message.
func firstDiff(got, want []byte) string {
	g, w := strings.Split(string(got), "\n"), strings.Split(string(want), "\n")
	for i := 0; i < len(g) && i < len(w); i++ {
		if g[i] != w[i] {
			return fmt.Sprintf("line %d: have %q, want %q", i+1, g[i], w[i])
		}
	}
	return "length"
}

// TestLintFileMapSentence pins the one-liner rules: first sentence of the first paragraph,
// abbreviations kept, whitespace collapsed, long headers cut at a word.
func TestLintFileMapSentence(t *testing.T) {
	cases := []struct{ in, want string }{
		{"Produce: v0-9\n\nBehaviour: ...", "Produce: v0-9"},
		{"reader decodes the few\nheader primitives. Every read checks.", "reader decodes the few header primitives."},
		{"Splits, e.g. by key. Then more.", "Splits, e.g. by key."},
		{"Version 1.2 is the one. Next.", "Version 1.2 is the one."},
		{strings.Repeat("word ", 60), strings.TrimSpace(strings.Repeat("word ", 32)) + " …"},
	}
	for _, c := range cases {
		if got := firstSentence(c.in); got != c.want {
			t.Errorf("firstSentence(%q) = %q, want %q", c.in, got, c.want)
		}
	}
}

// TestLintFileMapSplice checks that only the marked section changes and that a document
// without the markers is refused rather than rewritten.
func TestLintFileMapSplice(t *testing.T) {
	doc := []byte("head\n" + beginMarker + "\nold\n" + endMarker + "\ntail\n")
	got, err := splice(doc, []byte("new\n"))
	if err != nil {
		t.Fatal(err)
	}
	if want := "head\n" + beginMarker + "\n\nnew\n\n" + endMarker + "\ntail\n"; string(got) != want {
		t.Errorf("splice = %q, want %q", got, want)
	}
	if _, err := splice([]byte("no markers"), []byte("x")); err == nil {
		t.Error("splice without markers succeeded")
	}
}
