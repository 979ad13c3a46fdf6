// Package groups is kafka-consumer-groups (Kafka 2.8's
// ConsumerGroupCommand): list, describe, reset offsets of and delete
// consumer groups, plus Samsa's rebalance history.
//
// Owns: consumer_groups.go (options and the Admin API service over Sarama's
// ClusterAdmin), consumer_groups_describe.go (--describe with --offsets,
// --members, --state, --verbose), consumer_groups_reset.go
// (--reset-offsets and its scopes), consumer_groups_zk.go (--zookeeper:
// the old consumers' /consumers tree, --list and --describe only, as Kafka
// 1.x), group_rebalances.go (the client of the brokers' /groups/rebalances
// JSON document: --describe --state --verbose prints it, and samsa doctor
// reads it through MetricsURLs and FetchRebalances).
//
// Output formats: Kafka's padded tables (columns as ConsumerGroupCommand
// sizes them), its warnings and error lines; the rebalance history is one
// padded line per rebalance, then the storm summary.
//
// Concurrency: none of its own.
package groups
