// Package replay reads a coordinator's internal-topic partition from its start to its end, one
// record batch at a time: the load step both the group coordinator (__consumer_offsets, Kafka's
// GroupMetadataManager.doLoadGroupsAndOffsets) and the transaction coordinator
// (__transaction_state, TransactionStateManager.loadTransactionsForTxnTopicPartition) run when
// they become leader of a partition. What a record means stays with each coordinator; this
// package owns only the loop: where it stops, how it makes progress, and when it gives up.
//
// The end is the log end offset reported by the first read, not the high watermark: records
// appended after loading started are applied by the coordinator itself, and the loop cannot
// chase a moving end forever. Every read must make progress (a read below the end that returns
// no batch, or only batches below the position, is an error), so a load always ends.
//
// It imports only broker/record, never storage, replica, group or txn: the coordinators pass
// their own read function. It starts no goroutines; Partition runs on the caller's goroutine
// and stops when ctx ends.
package replay
