// Package txn is kafka-transactions (Kafka 3.0's TransactionsCommand,
// KIP-664) against Samsa: list, describe, describe-producers, abort and
// find-hanging.
//
// Owns: transactions.go (options, the client, list/describe/
// describe-producers and the table printer), transactions_abort.go (abort:
// WriteTxnMarkers to the partition leader, which Sarama lacks),
// transactions_hanging.go (find-hanging).
//
// Output format: Kafka's table, a header row then one row per item, every
// cell left-aligned, padded to its column's widest value and followed by a
// TAB; errors as Kafka's exception lines.
//
// Concurrency: none of its own.
package txn
