#!/usr/bin/env bash
# samsa-package-graph.sh [DIR]: prints Samsa's package graph as `go list` sees it, one line per
# package of the module in DIR (default: this checkout), then totals:
#
#   <package>  <non-test files>+<test files>  -> <Samsa packages it imports (non-test code)>
#
# Only the module's own packages are shown as dependencies; external ones are summarised per
# package in the kmsg column (the franz-go codec whose reach STYLE S1.2 limits). It runs go
# list once and builds nothing, so it takes a second or two. `make graph` runs it.
set -euo pipefail
dir=${1:-"$(cd "$(dirname "$0")/.." && pwd)"}
cd "$dir"
mod=$(go list -m)
go list -f '{{.ImportPath}}|{{len .GoFiles}}|{{len .IgnoredGoFiles}}|{{len .TestGoFiles}}|{{len .XTestGoFiles}}|{{join .Imports " "}}' ./... |
awk -F'|' -v mod="$mod" '
function short(p) { return p == mod ? "." : substr(p, length(mod) + 2) }
{
	pkg = short($1); files = $2 + $3; tests = $4 + $5
	deps = ""; kmsg = ""
	n = split($6, imps, " ")
	for (i = 1; i <= n; i++) {
		if (imps[i] == mod || index(imps[i], mod "/") == 1) deps = deps (deps == "" ? "" : " ") short(imps[i])
		if (imps[i] == "github.com/twmb/franz-go/pkg/kmsg") kmsg = " [kmsg]"
	}
	printf "%-32s %3d+%-3d -> %s%s\n", pkg, files, tests, (deps == "" ? "(nothing of ours)" : deps), kmsg
	npkg++; nfiles += files; ntests += tests; nedges += (deps == "" ? 0 : split(deps, d, " "))
}
END { printf "%d packages, %d non-test + %d test Go files, %d import edges between them\n", npkg, nfiles, ntests, nedges }'
