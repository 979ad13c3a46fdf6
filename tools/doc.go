// Package tools is the samsa command-line application: one urfave/cli
// subcommand per Kafka script, with Kafka 2.8's options and output formats.
//
// Owns: topics.go (kafka-topics, with a ZooKeeper backend in topics_zk.go
// and an Admin API backend in topics_admin.go, both printing through
// topics_describe.go), console_producer.go, console_consumer.go,
// server_start.go (kafka-server-start, with log.format/log.level),
// configs*.go (kafka-configs for topics, brokers, users and clients, through
// ZooKeeper or the Admin API), doctor*.go (samsa doctor: host and cluster
// checks), producer_perf.go and consumer_perf.go (the perf tests),
// verifiable_*.go (kafka-verifiable-producer/-consumer, JSON events as
// Kafka's), replica_verification*.go (kafka-replica-verification),
// zookeeper_shell.go, dump_log*.go (kafka-dump-log), client_config.go (Java
// client properties → Sarama). Messages the user sees are worded as Kafka's tools
// word them (toolError), byte for byte where Kafka's output is parsed by
// scripts (--describe, --list, "Created topic t.").
//
// Must never import: go-zookeeper/zk (only through zkutil). Must never be
// imported by broker/..., controller, zkutil or config. urfave/cli/v2 is
// used only here; Sarama only here and in tests.
//
// Concurrency: NewApp and Run may be called from several goroutines with
// separate Envs (tests do). A command's goroutines (consumer partitions,
// producer error drain, the broker) are owned by that command's Action and
// stopped before it returns. No package-level mutable state of our own;
// urfave/cli's shared help flag and help command are made safe for that in
// help_flag.go and NewApp (TestToolRunConcurrently).
//
// Exit codes: 0 on success; 1 on a usage error (message on stderr) or a
// failed command (kafka-topics prints "Error while executing topic command :
// <msg>" on stdout, as Kafka does).
package tools
