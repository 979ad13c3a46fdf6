// Package tools assembles the samsa command-line application: one
// urfave/cli subcommand per Kafka script, with Kafka 2.8's options and
// output formats. Each family of subcommands is its own package, with a
// doc.go naming the Kafka tool it mirrors and its output formats:
//
//	tools/serverstart    kafka-server-start
//	tools/topics         kafka-topics
//	tools/console        kafka-console-producer, kafka-console-consumer
//	tools/zkshell        zookeeper-shell
//	tools/zkmigrate      zookeeper-security-migration
//	tools/configs        kafka-configs (incl. SCRAM credentials, broker loggers)
//	tools/dumplog        kafka-dump-log
//	tools/perf           kafka-producer-perf-test, kafka-consumer-perf-test, kafka-e2e-latency
//	tools/admin          kafka-get-offsets, kafka-broker-api-versions, kafka-delete-records, kafka-log-dirs
//	tools/doctor         samsa doctor
//	tools/reassign       kafka-reassign-partitions, kafka-leader-election, kafka-preferred-replica-election
//	tools/groups         kafka-consumer-groups (and the rebalance-history client)
//	tools/txn            kafka-transactions
//	tools/verifiable     kafka-verifiable-producer, kafka-verifiable-consumer
//	tools/replicaverify  kafka-replica-verification
//	tools/acls           kafka-acls
//
// tools/internal/tool holds what they share (Env, the app builder, Kafka's
// error names, Java formats, client properties); tools/internal/tooltest
// their test helpers. tools/samsa is the binary, tools/zkconsumer the old
// high-level consumer, tools/bench and tools/chaos the benchmark and chaos
// drivers. tools/lint/tools_imports_test.go states which Samsa packages
// each of them may import, and why.
//
// Owns: app.go (Commands, NewApp, Run). Messages the user sees are worded
// as Kafka's tools word them, byte for byte where Kafka's output is parsed
// by scripts (--describe, --list, "Created topic t.").
//
// Must never import: go-zookeeper/zk (only through zkutil). Must never be
// imported by broker/..., controller, zkutil or config. urfave/cli/v2 is
// used only under tools/; Sarama only there and in tests.
//
// Concurrency: NewApp and Run may be called from several goroutines with
// separate Envs (tests do). A command's goroutines (consumer partitions,
// producer error drain, the broker) are owned by that command's Action and
// stopped before it returns. No package-level mutable state of our own;
// urfave/cli's shared help flag and help command are made safe for that in
// tools/internal/tool (TestToolRunConcurrently).
//
// Exit codes: 0 on success; 1 on a usage error (message on stderr) or a
// failed command (kafka-topics prints "Error while executing topic command :
// <msg>" on stdout, as Kafka does).
package tools
