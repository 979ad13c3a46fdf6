// Package replica is the broker's ReplicaManager: the partitions this
// broker hosts, whether it leads or follows each, the ISR and the high
// watermark, appends with acks semantics and min.insync.replicas, reads for
// consumers and followers, and (fetcher.go) the follower fetchers that copy
// the leaders' logs.
//
// Domain types only: LeaderAndIsr and StopReplica arrive as the plain
// structs of types.go; the broker's API handlers translate kmsg requests
// into them (STYLE S1.3). Logs come from broker/storage; waiting requests
// park in broker/purgatory.
//
// Must never import: broker (root), server, group, controller, sarama.
//
// Concurrency: Manager's methods are safe for concurrent use. Manager.mu
// guards only the partition map (never held during I/O). Each Partition has
// its own mu (Kafka's leaderIsrUpdateLock): leadership changes and ISR/HW
// updates take it for writing; appends and reads take it for reading, and
// the storage.Log serialises appends itself. Lock order:
// Manager.mu -> Partition.mu -> storage.Log's lock. The follower fetchers are
// the only goroutines this package starts: one per source broker, owned by
// the Manager and stopped by Manager.Close.
package replica
