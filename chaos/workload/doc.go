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
//     before it is sent and fail only for the codes a coordinator answers
//     before appending (generation, member, limits, authorization); any
//     other outcome is info, since the append may outlive the error.
//
// FinalRead reads every partition from offset 0 to its end offset after
// the run; the checker takes it as the ground truth of the log.
//
// Workload is the extension point: the transactional workload
// (consume-transform-produce and multi-partition transactions, checked by
// checker.CheckTxn) implements it once the transactions issue lands.
package workload
