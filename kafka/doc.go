// Package kafka holds the identity value types that every tier of Samsa
// shares, named after Kafka's org.apache.kafka.common types they mirror.
//
// Today that is TopicPartition, Kafka's TopicPartition (and the older
// TopicAndPartition): a topic name and a partition index. Before this
// package existed the same two-field struct was declared in nine packages
// (storage, replica, group, txn, fetchsession, zkutil, controller,
// tools/zkconsumer and a tool) and values were copied field by field at
// every boundary; now storage, replica, the controller, zkutil and the
// tools pass one type through.
//
// Invariants:
//   - tier 0: the package imports nothing of Samsa, so any package may use
//     it (tools/lint checks this).
//   - values only: no behaviour beyond formatting and ordering. Anything
//     that validates names (legal topic characters, lengths) stays with the
//     owner of the rule (config for topic names, storage for directories).
//   - String is Kafka's TopicPartition.toString, "<topic>-<partition>"; it
//     is also the partition's directory name on disk, so it must not
//     change. Code that needs the Scala TopicAndPartition form
//     ("[topic,partition]", tools/zkconsumer's round-robin hash) formats it
//     itself.
//   - a struct that embeds TopicPartition gets its String, so fmt would
//     print such a value as "t-0" alone; every embedder declares its own
//     String returning FieldsString (all fields, %+v style), checked by
//     tools/lint TestLintTopicPartitionEmbedders.
//   - ComparePartitions orders by topic (byte order) then partition, the
//     order Kafka's tools and checkpoints print.
//
// The package is named kafka rather than tp because tp is the name every
// loop over partitions gives its variable.
package kafka
