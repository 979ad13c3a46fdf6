package lint

import (
	"sort"
	"testing"
)

// toolsDep is one Samsa import a package of the tools tree may make: the
// imported package and why.
type toolsDep struct {
	dep string
	why string
}

// toolsImports is the intended import graph of the tools tree, one line per
// package (docs/design.md §1, "Where we differ from ../shared/DESIGN.md").
// DESIGN.md lets tools import only read-only storage/record of the broker's
// internals; every broker, broker/wire, broker/group, broker/acl and
// controller import is a documented exception, confined to the one command family that
// needs it (the families are small packages, so a package is as narrow as
// the per-file patterns this table held before tools/ was split). Command
// families import tools/internal/tool and, where named, one another; none
// imports samsa/tools (the assembly). A package of the tools tree missing
// here, an import not listed and a listed import no file makes all fail:
// the table stays exactly the real graph.
var toolsImports = map[string][]toolsDep{
	"tools": {
		{dep: "tools/internal/tool", why: "Env and the shared NewApp/Run the assembly wraps"},
		{dep: "tools/acls", why: "assembles kafka-acls"},
		{dep: "tools/admin", why: "assembles kafka-get-offsets, -broker-api-versions, -delete-records, -log-dirs"},
		{dep: "tools/configs", why: "assembles kafka-configs"},
		{dep: "tools/console", why: "assembles kafka-console-producer/-consumer"},
		{dep: "tools/doctor", why: "assembles samsa doctor"},
		{dep: "tools/dumplog", why: "assembles kafka-dump-log"},
		{dep: "tools/groups", why: "assembles kafka-consumer-groups"},
		{dep: "tools/perf", why: "assembles the perf tests and kafka-e2e-latency"},
		{dep: "tools/reassign", why: "assembles kafka-reassign-partitions and the leader elections"},
		{dep: "tools/replicaverify", why: "assembles kafka-replica-verification"},
		{dep: "tools/serverstart", why: "assembles kafka-server-start"},
		{dep: "tools/topics", why: "assembles kafka-topics"},
		{dep: "tools/txn", why: "assembles kafka-transactions"},
		{dep: "tools/verifiable", why: "assembles kafka-verifiable-producer/-consumer"},
		{dep: "tools/zkshell", why: "assembles zookeeper-shell"},
		{dep: "tools/zkmigrate", why: "assembles zookeeper-security-migration"},
	},
	"tools/internal/tool": {
		{dep: "config", why: "Java client properties files for the Sarama configuration"},
		{dep: "zkutil", why: "the old consumer's offsets directory, spelled by zkutil (S8.1), and the --zookeeper tools' sessions"},
		{dep: "broker/security/zkclient", why: "the --zookeeper tools reach ZooKeeper with the broker's own TLS (zookeeper.ssl.*) and JAAS Client identity"},
	},
	"tools/internal/tooltest": {
		{dep: "tools/internal/tool", why: "runs a test's commands through tool.Run"},
		{dep: "broker/brokertest", why: "the one-broker group fixture and its wait helper"},
		{dep: "zkutil", why: "the ZooKeeper fixture registers brokers"},
		{dep: "zkutil/zktest", why: "the ZooKeeper fixture's server"},
	},
	"tools/acls": {
		{dep: "tools/internal/tool", why: "shared CLI plumbing"},
		{dep: "zkutil", why: "--authorizer-properties reaches ZooKeeper through zkutil"},
		{dep: "broker/acl", why: "kafka-acls --authorizer-properties writes ZooKeeper with the authorizer's own store, and prints Kafka's ACL model"},
	},
	"tools/admin": {
		{dep: "tools/internal/tool", why: "shared CLI plumbing"},
		{dep: "kafka", why: "kafka.TopicPartition keys the per-partition results"},
	},
	"tools/configs": {
		{dep: "tools/internal/tool", why: "shared CLI plumbing"},
		{dep: "config", why: "Kafka's topic and broker property names and defaults"},
		{dep: "zkutil", why: "every znode path and JSON codec for --zookeeper (S8.1)"},
		{dep: "broker/security/scram", why: "kafka-configs --zookeeper derives SCRAM credentials with the broker's own formatter and format"},
		{dep: "broker/security/pwencoder", why: "kafka-configs --zookeeper encrypts broker password configs in the format the broker decodes (Kafka's PasswordEncoder)"},
	},
	"tools/console": {
		{dep: "tools/internal/tool", why: "shared CLI plumbing"},
		{dep: "zkutil", why: "the --zookeeper consumer's connection"},
		{dep: "tools/zkconsumer", why: "kafka-console-consumer --zookeeper is the old high-level consumer"},
	},
	"tools/doctor": {
		{dep: "tools/internal/tool", why: "shared CLI plumbing"},
		{dep: "config", why: "reads server.properties for the host checks"},
		{dep: "zkutil", why: "the cluster checks read the registry through zkutil"},
		{dep: "kafka", why: "kafka.TopicPartition, the partition name zkutil takes"},
		{dep: "tools/groups", why: "the group checks read the brokers' /groups/rebalances documents with kafka-consumer-groups' client"},
	},
	"tools/dumplog": {
		{dep: "tools/internal/tool", why: "shared CLI plumbing"},
		{dep: "broker/record", why: "kafka-dump-log reads segments and indexes read-only with the real codecs"},
		{dep: "broker/group", why: "kafka-dump-log --offsets-decoder uses the __consumer_offsets codecs"},
	},
	"tools/groups": {
		{dep: "tools/internal/tool", why: "shared CLI plumbing"},
		{dep: "zkutil", why: "the --zookeeper (old consumer) groups live in ZooKeeper"},
		{dep: "kafka", why: "kafka.TopicPartition names the partitions of a reset plan"},
	},
	"tools/perf": {
		{dep: "tools/internal/tool", why: "shared CLI plumbing"},
		{dep: "config", why: "producer.config / consumer.config properties files"},
	},
	"tools/reassign": {
		{dep: "tools/internal/tool", why: "shared CLI plumbing"},
		{dep: "zkutil", why: "the --zookeeper reassignment and election znodes"},
		{dep: "tools/topics", why: "the --zookeeper paths share kafka-topics' ZooKeeper service (connection, live brokers, assignment errors)"},
		{dep: "assign", why: "replica placement with Kafka's algorithm, the broker's own (assign.Replicas, StartIndex)"},
		{dep: "kafka", why: "kafka.TopicPartition, the partition name zkutil takes"},
		{dep: "broker/wire", why: "the Samsa log-end reassignment tag (LogEndReassignmentTag) is a wire constant"},
	},
	"tools/replicaverify": {
		{dep: "tools/internal/tool", why: "shared CLI plumbing"},
		{dep: "kafka", why: "kafka.TopicPartition keys the per-partition results"},
	},
	"tools/serverstart": {
		{dep: "tools/internal/tool", why: "shared CLI plumbing"},
		{dep: "config", why: "server.properties and --override"},
		{dep: "broker", why: "kafka-server-start runs broker.New"},
	},
	"tools/topics": {
		{dep: "tools/internal/tool", why: "shared CLI plumbing"},
		{dep: "config", why: "Kafka's topic property names and defaults"},
		{dep: "zkutil", why: "every znode path and JSON codec for --zookeeper (S8.1)"},
		{dep: "assign", why: "replica placement with Kafka's algorithm, the broker's own (assign.Replicas, StartIndex)"},
		{dep: "kafka", why: "kafka.TopicPartition, the partition name zkutil takes"},
	},
	"tools/txn": {
		{dep: "tools/internal/tool", why: "shared CLI plumbing"},
		{dep: "kafka", why: "kafka.TopicPartition for the partitions find-hanging scans"},
	},
	"tools/verifiable": {
		{dep: "tools/internal/tool", why: "shared CLI plumbing"},
		{dep: "config", why: "--producer.config / --consumer.config properties files"},
		{dep: "kafka", why: "kafka.TopicPartition keys the consumer's claimed partitions and offsets"},
	},
	"tools/zkshell": {
		{dep: "tools/internal/tool", why: "shared CLI plumbing"},
		{dep: "zkutil", why: "zookeeper-shell talks to ZooKeeper only through zkutil"},
	},
	"tools/zkmigrate": {
		{dep: "tools/internal/tool", why: "shared CLI plumbing and the --zookeeper tools' session"},
		{dep: "zkutil", why: "Kafka's secure root paths, their default ACLs and setACL, spelled only in zkutil (S8.1)"},
		{dep: "broker/security/zkclient", why: "the identity checks read the broker's own JAAS Client section and zookeeper.ssl.* keys"},
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
// tools tree (STYLE S1.1; the deviation is documented in docs/design.md),
// and keeps tools/internal/tooltest out of every binary: only _test.go
// files may import it.
func TestLintToolsImports(t *testing.T) {
	used := map[string]map[string]bool{} // pkg -> dep -> used
	seenPkg := map[string]bool{}
	for _, f := range parseRepo(t) {
		if !f.test && f.pkgDir != "tools/internal/tooltest" {
			for _, dep := range ownSamsaImports(f) {
				if dep == "tools/internal/tooltest" {
					t.Errorf("%s imports samsa/tools/internal/tooltest: only _test.go files may", f.rel)
				}
			}
		}
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
		for _, dep := range ownSamsaImports(f) {
			ok := false
			for _, d := range deps {
				if d.dep == dep {
					ok = true
					if used[f.pkgDir] == nil {
						used[f.pkgDir] = map[string]bool{}
					}
					used[f.pkgDir][d.dep] = true
				}
			}
			if !ok {
				t.Errorf("%s imports samsa/%s, which toolsImports does not allow for package %s; if it is intended, add it with its reason to tools/lint/tools_imports_test.go and docs/design.md", f.rel, dep, f.pkgDir)
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
				t.Errorf("toolsImports allows %s -> %s but no file imports it: remove the entry here and in docs/design.md", p, d.dep)
			}
		}
	}
}
