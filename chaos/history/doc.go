// Package history is the chaos harness's history format: one JSON object
// per line, each an Op. The workload and the nemeses append to one Writer;
// the checker reads the ops back with Read.
//
// An operation is recorded twice: an "invoke" when the client starts it and
// a completion ("ok", "fail" or "info") when it ends. "fail" means the
// operation certainly did not happen; "info" means the outcome is unknown
// (a timeout, a connection cut mid-request): the checker treats an info
// send as possibly written, never as lost and never as an aborted read.
//
// Functions (F):
//
//	send        producer: Value to some partition; ok carries Partition and Offset
//	poll        group consumer: one record read (ok only): Partition, Offset, Value
//	commit      group consumer: committed offset (the next offset to read) of Partition;
//	            invoke before the OffsetCommit is sent, ok when answered
//	            without error, info otherwise (it may still be applied)
//	assign      group consumer: Partition assigned to Process (ok only)
//	revoke      group consumer: Partition taken from Process (ok only)
//	final-read  final reader: one record of the complete log (ok only)
//	final-end   final reader: Partition's log end offset reached (Offset) (ok only)
//	fault       nemesis: invoke = fault started, ok = healed, info = heal failed;
//	            Value names the fault
//	recovered   nemesis: the cluster is whole again after the fault (ok only)
//	drained     group: after the producers stopped, the members had polled up to
//	            every partition's end (ok) or not within the bound (info)
//	txn         transactional producer: Value names one transaction (unique per
//	            run); invoke = begun, ok = committed, fail = aborted for
//	            certain, info = EndTxn's outcome unknown (either is valid)
//	txn-send    one record written inside transaction TxnID: Value, Partition;
//	            Source is the input record "<p>/<o>" a consume-transform-produce
//	            transaction wrote it for (empty otherwise)
//	txn-read    read_committed consumer: one record of the transactional topic
//	txn-final-read  the read_committed final read of the transactional topic
//	txn-final-end   that read reached Partition's fence (the last transaction)
//
// Values are unique per run: "<process>/<seq>", Seq being the producer's own
// counter (the order it handed records to its client).
package history
