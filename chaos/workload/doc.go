// Package workload is the chaos harness's client side. Every client
// records each operation it performs into a history.Writer (package
// history): the invoke before it starts and the completion after.
//
// The queue workload (Queue) has, on one topic:
//
//   - producers "kgo-idem-0", "kgo-idem-1" (franz-go, idempotent, acks=all),
//     "kgo-plain-0" (franz-go, idempotence off, acks=all),
//     "sarama-idem-0" and "sarama-plain-0" (Sarama SyncProducer, acks=all,
//     idempotent and not). Each writes unique values "<proc>/<seq>" at a
//     bounded rate with a bounded number in flight; an error of any kind is
//     recorded "info" (the record may or may not be in the log), never
//     "fail", because a client that retried cannot tell.
//   - a franz-go consumer group of two members ("group-0", "group-1"),
//     auto commit off, BlockRebalanceOnPoll: poll, record every record,
//     commit synchronously, allow the rebalance. Assignments and
//     revocations are recorded, so the checker can tell a re-read after a
//     rebalance (allowed) from a skip (not). A commit is recorded invoke
//     before it is sent and ok when answered without error; any other
//     outcome is info: an append to __consumer_offsets can outlive the
//     error, and franz-go retries a commit internally, so even
//     UNKNOWN_MEMBER_ID may answer a retry whose first attempt was
//     appended.
//
// FinalRead reads every partition from offset 0 to its end offset after
// the run; the checker takes it as the ground truth of the log.
//
// The transactional workload (Txn) has, on its own topic TxnTopic (3
// partitions, RF 3, min.insync.replicas 2):
//
//   - multi-partition transactions: "txn-kgo" (franz-go) and "txn-sarama"
//     (Sarama's transactional SyncProducer) each write one record to every
//     partition per transaction, "<txn id>/<partition>", committing three
//     in four and aborting the fourth on purpose. A txn op is ok when the
//     commit was answered, fail when an abort was asked (only the
//     producer's own EndTxn(commit) commits, so an abort that errored is
//     still an abort), info when a commit errored; after any error the
//     client is replaced, and the new one's InitProducerId fences the old
//     epoch.
//   - consume-transform-produce: "ctp-0" and "ctp-1", one franz-go
//     GroupTransactSession group ("samsa-chaos-ctp") reading the queue
//     topic read_committed, writing "ctp/<txn id>/<p>/<o>" per input record
//     (Source "<p>/<o>") and committing the input offsets in the same
//     transaction.
//   - "txn-reader", a read_committed consumer of the whole topic.
//
// Its final read first commits a fence transaction (one record per
// partition), then reads read_committed from the start up to each
// partition's fence: every earlier transaction is decided by then.
//
// ByName("queue,txn") runs both side by side (the default of the harness).
package workload
