// Package txn is the transaction coordinator (Kafka 2.8's
// kafka.coordinator.transaction): the state of every transactional id
// whose __transaction_state partition this broker leads, the state
// machine of its transactions, and the marker loop that finishes them.
//
// # What it owns
//
//   - The __transaction_state record codecs (codec.go), byte for byte
//     Kafka's TransactionLog key v0 and value v0, encoded by kmsg.
//   - The state machine (state.go) and the pure decisions of
//     InitProducerId, AddPartitionsToTxn, EndTxn and the KIP-890 part 1
//     verification (decide.go).
//   - Loading a partition on election and dropping it on resignation
//     (load.go), the timeout abort and id expiry scans (timers.go), and
//     the Prepare* → markers → Complete* loop (markers.go).
//
// Must never import: broker (root), broker/server, broker/replica,
// broker/storage, controller, zkutil, kmsg request/response types (it
// uses only kmsg's TxnMetadataKey/Value codecs). The broker adapts it:
// Log over broker/replica, MarkerWriter over peer.
//
// # Record format (topic __transaction_state, compacted)
//
// Key (v0), big-endian:
//
//	int16  version = 0
//	int16  len | transactional_id (UTF-8)
//
// Value (v0; the only version Kafka 2.8 reads and every broker writes
// until 4.0); a null value is a tombstone (expired id):
//
//	int16  version = 0
//	int64  producer_id
//	int16  producer_epoch
//	int32  transaction_timeout_ms
//	int8   transaction_status       0 Empty 1 Ongoing 2 PrepareCommit
//	                                3 PrepareAbort 4 CompleteCommit 5 CompleteAbort
//	int32  topic count (-1 = null: state Empty)
//	  int16 len | topic
//	  int32 count, int32 partition ...
//	int64  transaction_last_update_timestamp_ms
//	int64  transaction_start_timestamp_ms (-1: none)
//
// Each record is one uncompressed batch v2 appended with acks=all
// (Complete* is applied before its replication: Invariants).
// The partition of an id is abs(javaStringHash(id)) %
// transaction.state.log.num.partitions (the group coordinator's helper).
//
// # Invariants
//
//   - A state change is computed from the applied state, marked
//     pending, written, and applied only if the partition is still led at
//     the same coordinator epoch; while pending, other requests for the id
//     wait (pending_wait.go) and then get CONCURRENT_TRANSACTIONS.
//   - Every transition is applied once its record is replicated (acks=all,
//     below the high watermark), except CompleteCommit/CompleteAbort,
//     applied once appended to the local log, so the id's next
//     transaction starts without waiting for that replication. This is
//     safe because the Complete* decides nothing (PrepareX, replicated
//     before EndTxn answered, fixed the outcome; every marker landed
//     before Complete* is written) and because of log order: every later
//     record of the id (the next AddPartitions' Ongoing, InitProducerId's
//     Empty, a tombstone) is appended after it in the same partition and
//     is applied, and answered, only once replicated, which implies the
//     Complete* before it is replicated. A coordinator deposed in between
//     answers that later request NOT_COORDINATOR (its replication wait
//     ends with the leadership), and the next one loads either Complete*
//     or PrepareX (then resends the markers, which leaders accept again,
//     and writes Complete*): never an Ongoing nobody acknowledged, so no
//     partition can be in a transaction the new coordinator does not
//     know. Readers that must not see a state that could be undone get
//     the replicated one: Verify (KIP-890) answers NONE only for an
//     applied Ongoing (replicated), and DescribeTransactions /
//     ListTransactions report the PrepareX that an unreplicated Complete*
//     replaced (metadata.unreplicated) until settleComplete sees it
//     replicated or a later record of the id replicates.
//   - Concurrent AddPartitions of one producer epoch are chained on the
//     latest decided Ongoing record once it is in the local log (chain.go,
//     the same argument); records are applied in log order only
//     (chainState.appliedNext), each holding the partitions of the one it
//     was decided from.
//   - The coordinator epoch is the leader epoch of the id's partition;
//     every marker carries it, so a leader can refuse a deposed
//     coordinator's markers.
//   - PrepareEpochFence and Dead are never logged. A fence (InitProducerId
//     over an open transaction, or the timeout scan) writes PrepareAbort
//     with epoch+1.
//   - A transaction in PrepareCommit/PrepareAbort always has a marker loop
//     while its partition is led here: EndTxn starts it, and load starts
//     one for every such entry left by the previous coordinator, and a
//     loop ending after its Complete* starts the next transaction's if
//     that one reached Prepare* while the loop was still marked running.
//     Complete* is written only after every partition's leader
//     acknowledged its marker (or the partition no longer exists).
//   - lastProducerId/lastProducerEpoch are not persisted (-1 after a
//     reload), as in Kafka.
//
// # Concurrency
//
// All exported methods are safe for concurrent use. One mutex (mu) guards
// the partitions and every metadata; nothing blocks while holding it (the
// log append, producer id allocation and marker sends happen outside).
// Goroutines: the two timers, one loader per partition being loaded and
// one marker loop per transaction in Prepare* (which then waits for its
// Complete* to replicate, settleComplete); Resign stops a partition's
// loops, Shutdown stops all and waits.
//
// Lock order: Coordinator.mu is a leaf; callbacks (Log, MarkerWriter,
// NewProducerID) are never called with it held.
package txn
