package lint

import (
	"go/ast"
	"go/parser"
	"go/token"
	"io/fs"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
)

const module = "samsa"

// goFile is one parsed Go file of the repository.
type goFile struct {
	rel     string // path relative to the repository root
	pkgDir  string // directory relative to the root ("." for the root)
	test    bool
	imports []string
	ast     *ast.File
}

func repoRoot(t *testing.T) string {
	t.Helper()
	dir, err := os.Getwd()
	if err != nil {
		t.Fatal(err)
	}
	for i := 0; i < 10; i++ {
		if _, err := os.Stat(filepath.Join(dir, "go.mod")); err == nil {
			return dir
		}
		dir = filepath.Dir(dir)
	}
	t.Fatal("lint: go.mod not found above the test directory")
	return ""
}

func parseRepo(t *testing.T) []goFile {
	t.Helper()
	root := repoRoot(t)
	var files []goFile
	fset := token.NewFileSet()
	err := filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		name := d.Name()
		if d.IsDir() {
			if path != root && (strings.HasPrefix(name, ".") || name == "testdata" || name == "vendor") {
				return filepath.SkipDir
			}
			return nil
		}
		if !strings.HasSuffix(name, ".go") {
			return nil
		}
		f, err := parser.ParseFile(fset, path, nil, parser.ParseComments)
		if err != nil {
			t.Errorf("lint: parse %s: %v", path, err)
			return nil
		}
		rel, _ := filepath.Rel(root, path)
		gf := goFile{rel: rel, pkgDir: filepath.Dir(rel), test: strings.HasSuffix(name, "_test.go"), ast: f}
		for _, imp := range f.Imports {
			p, _ := strconv.Unquote(imp.Path.Value)
			gf.imports = append(gf.imports, p)
		}
		files = append(files, gf)
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return files
}

// under reports whether dir is pkg or below it.
func under(dir, pkg string) bool {
	return dir == pkg || strings.HasPrefix(dir, pkg+"/")
}

// ownSamsaImports returns the imports of f that are Samsa packages, as directories.
func ownSamsaImports(f goFile) []string {
	var out []string
	for _, imp := range f.imports {
		if imp == module {
			out = append(out, ".")
		} else if strings.HasPrefix(imp, module+"/") {
			out = append(out, strings.TrimPrefix(imp, module+"/"))
		}
	}
	return out
}

// TestLintExternalOwners enforces STYLE S1.2: each external dependency has one owning package.
func TestLintExternalOwners(t *testing.T) {
	owners := map[string]func(f goFile) bool{
		"github.com/go-zookeeper/zk": func(f goFile) bool { return under(f.pkgDir, "zkutil") },
		"github.com/IBM/sarama": func(f goFile) bool {
			return f.test || under(f.pkgDir, "tools") || under(f.pkgDir, "broker/brokertest") || f.pkgDir == "chaos/workload"
		},
		"github.com/urfave/cli/v2": func(f goFile) bool { return under(f.pkgDir, "tools") },
		// The keystore readers belong to tlsconf (and its test helper).
		"github.com/pavlo-v-chernykh/keystore-go/v4": func(f goFile) bool { return under(f.pkgDir, "broker/security/tlsconf") },
		"software.sslmate.com/src/go-pkcs12":         func(f goFile) bool { return under(f.pkgDir, "broker/security/tlsconf") },
	}
	for _, f := range parseRepo(t) {
		for _, imp := range f.imports {
			if ok, known := owners[imp]; known && !ok(f) {
				t.Errorf("%s imports %s, which only its owning package may import (STYLE S1.2)", f.rel, imp)
			}
		}
	}
}

// TestLintTiers enforces the "must never import" lines of STYLE §5.
func TestLintTiers(t *testing.T) {
	rules := tierRules()
	for _, f := range parseRepo(t) {
		if f.test {
			continue
		}
		deps := ownSamsaImports(f)
		for _, r := range rules {
			if f.pkgDir == r.pkg {
				r.check(t, f.rel, deps)
			}
		}
		checkTopTiers(t, f.pkgDir, f.rel, deps)
	}
}

// tierRule is the import rule of one package (S1.1).
type tierRule struct {
	pkg     string
	allowed func(dep string) bool // nil: no Samsa import at all
	deny    []string
}

// tierRules are the packages whose Samsa imports are restricted.
func tierRules() []tierRule {
	return []tierRule{
		// Shared leaves (issue 19): value types and pure codecs every tier
		// may use; they import nothing of Samsa themselves.
		{pkg: "kafka"},
		{pkg: "javaprops"},
		{pkg: "assign"},
		{pkg: "config", allowed: func(dep string) bool { return dep == "javaprops" }},
		{pkg: "zkutil", allowed: func(dep string) bool { return under(dep, "zkutil") || dep == "kafka" }},
		// The test ZooKeeper: the client, and test certificates for its TLS port.
		{pkg: "zkutil/zktest", allowed: func(dep string) bool { return dep == "zkutil" || dep == "broker/security/tlsconf/tlstest" }},
		{pkg: "broker/record"},
		{pkg: "broker/wire"},
		{pkg: "broker/purgatory", allowed: func(dep string) bool { return dep == "kafka" }},
		{pkg: "broker/quota"},
		{pkg: "broker/quota/zkstore", allowed: func(dep string) bool { return dep == "zkutil" || dep == "broker/quota" }},
		{pkg: "broker/quota/throttle", allowed: func(dep string) bool { return dep == "broker/wire" || dep == "broker/server" }},
		{pkg: "broker/fetchsession", allowed: func(dep string) bool { return dep == "kafka" }},
		{pkg: "broker/configchange", allowed: func(dep string) bool { return dep == "zkutil" }},
		{pkg: "broker/security"},
		{pkg: "broker/security/scram"},
		{pkg: "broker/security/pwencoder"},
		{pkg: "broker/security/sasl", allowed: func(dep string) bool { return dep == "broker/security/scram" }},
		{pkg: "broker/security/tlsconf", allowed: func(dep string) bool { return dep == "broker/principal" }},
		{pkg: "broker/security/tlsconf/tlstest"},
		// The ZooKeeper client's security, shared by the broker and the tools.
		{pkg: "broker/security/zkclient", allowed: func(dep string) bool {
			return dep == "broker/security/tlsconf" || dep == "broker/security/sasl" || dep == "zkutil"
		}},
		{pkg: "broker/acl", allowed: func(dep string) bool {
			return dep == "zkutil" || dep == "broker/principal" || under(dep, "broker/acl")
		}},
		{pkg: "broker/replay", allowed: func(dep string) bool { return dep == "broker/record" }},
		{pkg: "broker/storage", allowed: func(dep string) bool {
			return dep == "broker/record" || under(dep, "broker/storage") || dep == "kafka" || dep == "javaprops"
		}},
		{pkg: "broker/server", deny: []string{".", "broker/storage", "broker/replica", "broker/group", "controller", "zkutil", "broker/metadata"}},
		{pkg: "peer", deny: []string{"broker/storage", "broker/replica", "broker/group", "controller", "zkutil", "broker/server"}},
		{pkg: "broker/metadata", deny: []string{"zkutil", "broker/storage", "broker/server", "broker/replica"}},
		{pkg: "broker/replica", deny: []string{".", "broker/server", "broker/group", "controller", "peer", "zkutil", "broker/replica/remote"}},
		// The replica manager's adapters to the cluster: leaders over peer,
		// the ISR store over zkutil (issue 19 moved them out of broker/).
		{pkg: "broker/replica/remote", allowed: func(dep string) bool {
			return dep == "broker/replica" || dep == "broker/fetchsession" || dep == "broker/storage" || dep == "peer" || dep == "zkutil" ||
				dep == "kafka"
		}},
		// The chaos harness (issue 17): history and checker are pure; the
		// process side may use zkutil but no broker internals.
		{pkg: "chaos/history"},
		// One restartable child process, shared by brokertest and chaos/cluster.
		{pkg: "childproc"},
		{pkg: "chaos/checker", allowed: func(dep string) bool { return dep == "chaos/history" }},
		{pkg: "chaos/netns"},
		{pkg: "chaos/cluster", allowed: func(dep string) bool { return dep == "chaos/netns" || dep == "zkutil" || dep == "childproc" }},
		{pkg: "chaos/workload", allowed: func(dep string) bool { return dep == "chaos/history" }},
		{pkg: "chaos/nemesis", allowed: func(dep string) bool { return dep == "chaos/cluster" || dep == "chaos/workload" }},
		{pkg: "chaos/runner", allowed: func(dep string) bool { return under(dep, "chaos") }},
		{pkg: "controller", deny: []string{".", "broker/server", "broker/storage", "broker/replica", "broker/group", "broker/metadata"}},
		// The one test wait helper is a leaf every package's tests can import.
		{pkg: "internal/testwait"},
		{pkg: "broker/txn", deny: []string{".", "broker/server", "broker/storage", "broker/replica", "broker/group", "peer", "controller", "zkutil"}},
	}
}

// check reports each of file rel's Samsa imports deps that r forbids.
func (r tierRule) check(t *testing.T, rel string, deps []string) {
	for _, dep := range deps {
		if r.allowed == nil && len(r.deny) == 0 {
			t.Errorf("%s imports samsa/%s; %s must import no Samsa package", rel, dep, r.pkg)
			continue
		}
		if r.allowed != nil && !r.allowed(dep) {
			t.Errorf("%s imports samsa/%s, not allowed for %s", rel, dep, r.pkg)
		}
		for _, d := range r.deny {
			if dep == d {
				t.Errorf("%s imports samsa/%s, which %s must never import", rel, dep, r.pkg)
			}
		}
	}
}

// checkTopTiers checks the rules of every package: nothing below tools
// imports tools; nothing but tools and brokertest imports broker (root).
func checkTopTiers(t *testing.T, pkgDir, rel string, deps []string) {
	for _, dep := range deps {
		if under(dep, "tools") && !under(pkgDir, "tools") {
			t.Errorf("%s imports samsa/%s: tools is the top tier", rel, dep)
		}
		if under(dep, "chaos") && !under(pkgDir, "chaos") && !under(pkgDir, "tools") {
			t.Errorf("%s imports samsa/%s: only tools and the harness itself use the chaos harness", rel, dep)
		}
		if dep == "internal/testwait" && pkgDir != "broker/brokertest" {
			t.Errorf("%s imports samsa/internal/testwait: only tests and the broker/brokertest harness may", rel)
		}
		if dep == "broker" && !under(pkgDir, "tools") && pkgDir != "broker/brokertest" {
			t.Errorf("%s imports samsa/broker: only tools and broker/brokertest may", rel)
		}
	}
}

// TestLintZnodeLiterals enforces STYLE S8.1: no znode path literal outside zkutil.
func TestLintZnodeLiterals(t *testing.T) {
	prefixes := []string{"/brokers", "/controller", "/admin", "/config/", "/consumers", "/isr_change_notification", "/cluster/id", "/kafka-acl"}
	for _, f := range parseRepo(t) {
		if f.test || under(f.pkgDir, "zkutil") || under(f.pkgDir, "tools/lint") {
			continue
		}
		ast.Inspect(f.ast, func(n ast.Node) bool {
			lit, ok := n.(*ast.BasicLit)
			if !ok || lit.Kind != token.STRING {
				return true
			}
			s, err := strconv.Unquote(lit.Value)
			if err != nil {
				return true
			}
			for _, p := range prefixes {
				if strings.HasPrefix(s, p) {
					t.Errorf("%s: znode path literal %q outside zkutil (STYLE S8.1)", f.rel, s)
				}
			}
			return true
		})
	}
}

// TestLintRawAtomics enforces STYLE S6.9: atomic wrapper types, never sync/atomic functions.
func TestLintRawAtomics(t *testing.T) {
	for _, f := range parseRepo(t) {
		name := ""
		for _, imp := range f.ast.Imports {
			if p, _ := strconv.Unquote(imp.Path.Value); p == "sync/atomic" {
				name = "atomic"
				if imp.Name != nil {
					name = imp.Name.Name
				}
			}
		}
		if name == "" {
			continue
		}
		ast.Inspect(f.ast, func(n ast.Node) bool {
			call, ok := n.(*ast.CallExpr)
			if !ok {
				return true
			}
			sel, ok := call.Fun.(*ast.SelectorExpr)
			if !ok {
				return true
			}
			if id, ok := sel.X.(*ast.Ident); ok && id.Name == name {
				t.Errorf("%s: raw atomic.%s; use the atomic wrapper types (STYLE S6.9)", f.rel, sel.Sel.Name)
			}
			return true
		})
	}
}

// TestLintDocGo enforces STYLE S2.5: every package with non-test code has a doc.go.
func TestLintDocGo(t *testing.T) {
	root := repoRoot(t)
	seen := map[string]bool{}
	for _, f := range parseRepo(t) {
		if f.test || seen[f.pkgDir] {
			continue
		}
		seen[f.pkgDir] = true
		if _, err := os.Stat(filepath.Join(root, f.pkgDir, "doc.go")); err != nil {
			t.Errorf("package %s has no doc.go (STYLE S2.5)", f.pkgDir)
		}
	}
}
