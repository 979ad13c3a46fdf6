// Command filemap writes docs/design.md's file map (section 3) from the tree: one heading per
// package with the first sentence of its doc.go, one line per non-test Go file with the first
// sentence of its top comment, and the package's test files on one line.
//
// Run it from the repository root after adding, moving or renaming files:
//
//	go run ./tools/lint/cmd/filemap          # rewrite docs/design.md in place
//	go run ./tools/lint/cmd/filemap -check   # exit 1 when docs/design.md is stale
//
// `go generate ./...` runs it too (the directive is in main.go), so `make generate-check` fails
// when the map is stale, and TestLintFileMap fails in a plain `go test ./tools/lint/...`. It
// parses comments only (go/parser's PackageClauseOnly is not enough, as most one-liners sit
// after the package clause), reads no build information and takes well under a second.
//
// A file's "top comment" is the first comment group in it that is not a build directive, a
// "Code generated" line or a copyright line: the header above or below the package clause, or,
// for a file without one, the doc comment of its first declaration. A file with no comment at
// all gets "(no comment)", so a missing header shows in review.
//
// It imports nothing of ours and is never imported.
package main
