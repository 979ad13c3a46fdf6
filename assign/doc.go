// Package assign computes replica assignments for new topics and partitions,
// exactly as Kafka's AdminUtils.assignReplicasToBrokers (rack-unaware, and
// rack-aware per KIP-36) and AdminZkClient.createNewPartitionsAssignment's
// start index.
//
// It is the one implementation behind CreateTopics and CreatePartitions
// (broker), kafka-topics --zookeeper --create/--alter and
// kafka-reassign-partitions --generate (tools); before issue 19 it lived in
// the controller, which does not call it, so the broker and tools imported
// the whole controller for one pure function.
//
// Invariants:
//   - pure: no I/O, no logging, no package-level mutable state; the only
//     randomness is the Rand argument (nil = a global source), so tests fix
//     the draws and get Kafka's exact output;
//   - tier 0: imports nothing of Samsa (tools/lint checks this);
//   - bounded: work is O(partitions × rf × brokers²) in the worst rack-aware
//     case, and callers bound partitions and brokers (the request or the
//     cluster);
//   - the input order matters: Replicas walks brokers in the order given
//     (Kafka's ZooKeeper paths sort by id first, so do Samsa's callers);
//     rack-aware assignment walks RackAlternated(brokers) instead.
//
// Result format: partition id → replica list (first replica = preferred
// leader); the map and slices are new and owned by the caller. Partition ids
// run from max(0, startPartition) for nPartitions ids.
package assign
