package lint

import (
	"path/filepath"
	"sort"
	"strings"
	"testing"
)

// toolsDep is one Samsa import a package of the tools tree may make: the
// imported package, the files allowed to import it (glob patterns on the
// file name; nil means any file of the package) and why.
type toolsDep struct {
	dep   string
	files []string
	why   string
}

// toolsImports is the intended import graph of the tools tree, as
// docs/design.md §1 ("Where we differ from ../shared/DESIGN.md") states it.
// DESIGN.md lets tools import only read-only storage/record of the broker's
// internals; every broker, broker/group, peer and controller import
// is a documented exception, confined to the files that need it. A package
// of the tools tree missing here, an import not listed, a file outside its
// patterns and a listed import that no file makes all fail: the table
// stays exactly the real graph.
var toolsImports = map[string][]toolsDep{
	"tools": {
		{dep: "config", why: "Kafka's property names, defaults and the client/server properties files"},
		{dep: "zkutil", why: "every znode path and JSON codec for the --zookeeper code paths (S8.1)"},
		{dep: "kafka", why: "kafka.TopicPartition, the one partition name zkutil and the controller take"},
		{dep: "tools/zkconsumer", files: []string{"console_consumer_zk.go"}, why: "kafka-console-consumer --zookeeper is the old high-level consumer"},
		{dep: "broker/record", files: []string{"dump_log*.go"}, why: "kafka-dump-log reads segments and indexes read-only with the real codecs"},
		{dep: "broker/group", files: []string{"dump_log_offsets.go"}, why: "kafka-dump-log --offsets-decoder uses the __consumer_offsets codecs"},
		{dep: "broker/security/scram", files: []string{"configs_scram.go"}, why: "kafka-configs --zookeeper derives SCRAM credentials with the broker's own formatter and format"},
		{dep: "peer", files: []string{"reassign_admin.go", "transactions_abort.go"}, why: "the KIP-455 / leader-election Admin API calls and kafka-transactions abort's WriteTxnMarkers (which Sarama lacks) reuse the inter-broker Kafka client"},
		{dep: "broker/acl", files: []string{"acls.go", "acls_backend.go"}, why: "kafka-acls --authorizer-properties writes ZooKeeper with the authorizer's own store, and prints Kafka's ACL model"},
		{dep: "assign", why: "kafka-topics --create/--alter and kafka-reassign-partitions --generate place replicas with Kafka's algorithm, the broker's own"},
		{dep: "broker", files: []string{"server_start.go"}, why: "kafka-server-start runs broker.New"},
		{dep: "broker/wire", files: []string{"reassign_backend.go"}, why: "the Samsa log-end reassignment tag (LogEndReassignmentTag) is a wire constant"},
	},
	"tools/samsa": {{dep: "tools", why: "the binary only calls tools.Run"}},
	"tools/zkconsumer": {
		{dep: "zkutil", why: "the consumer's registry and offsets live in ZooKeeper"},
		{dep: "kafka", why: "kafka.TopicPartition names the partitions it assigns and owns"},
	},
	"tools/bench":            nil, // runs the samsa binary and clients as processes
	"tools/bench/kfakepeer":  nil,
	"tools/lint":             nil, // tests only
	"tools/lint/cmd/filemap": nil, // writes docs/design.md's file map from the tree
	"tools/chaos": {
		{dep: "chaos/cluster", why: "--cleanup removes a crashed run's processes, mounts and namespaces"},
		{dep: "chaos/nemesis", why: "--help lists the fault matrix"},
		{dep: "chaos/netns", why: "checks namespaces work before a run"},
		{dep: "chaos/runner", why: "the run itself"},
	},
}

// TestLintToolsImports enforces toolsImports on the non-test files of the
// tools tree (STYLE S1.1; the deviation is documented in docs/design.md).
func TestLintToolsImports(t *testing.T) {
	used := map[string]map[string]bool{} // pkg -> "dep files" key -> used
	seenPkg := map[string]bool{}
	for _, f := range parseRepo(t) {
		if f.test || !under(f.pkgDir, "tools") {
			continue
		}
		deps, known := toolsImports[f.pkgDir]
		if !known {
			if !seenPkg[f.pkgDir] {
				t.Errorf("package %s is not in toolsImports (tools/lint/tools_imports_test.go): list its Samsa imports there and in docs/design.md", f.pkgDir)
			}
			seenPkg[f.pkgDir] = true
			continue
		}
		base := filepath.Base(f.rel)
		for _, dep := range ownSamsaImports(f) {
			ok := false
			for _, d := range deps {
				if d.dep != dep || !matchAny(d.files, base) {
					continue
				}
				ok = true
				if used[f.pkgDir] == nil {
					used[f.pkgDir] = map[string]bool{}
				}
				used[f.pkgDir][d.dep] = true
			}
			if !ok {
				t.Errorf("%s imports samsa/%s, which toolsImports does not allow for this file; if it is intended, add it with its reason to tools/lint/tools_imports_test.go and docs/design.md", f.rel, dep)
			}
		}
	}
	var pkgs []string
	for p := range toolsImports {
		pkgs = append(pkgs, p)
	}
	sort.Strings(pkgs)
	for _, p := range pkgs {
		for _, d := range toolsImports[p] {
			if !used[p][d.dep] {
				t.Errorf("toolsImports allows %s -> %s (%s) but no file imports it: remove the entry here and in docs/design.md", p, d.dep, strings.Join(d.files, ", "))
			}
		}
	}
}

// matchAny reports whether name matches one of the glob patterns (nil
// patterns match every name).
func matchAny(patterns []string, name string) bool {
	if patterns == nil {
		return true
	}
	for _, p := range patterns {
		if ok, _ := filepath.Match(p, name); ok {
			return true
		}
	}
	return false
}
