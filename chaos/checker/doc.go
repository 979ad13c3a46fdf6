// Package checker checks a chaos history (package history). It is pure
// code: no I/O, no clock; the same history always gives the same Result.
//
// Queue invariants (Check):
//
//   - lost: a send acknowledged "ok" whose value is not in the final read
//     of the whole log. The final read is the ground truth: it is taken after
//     every fault healed, from offset 0 to each partition's end. Sends that
//     completed "info" (timed out, ambiguous) or "fail" are never lost.
//   - duplicates: a value found at more than one offset of the final read.
//     Must be 0 for idempotent producers; counted separately for the others,
//     whose client retries may legally write twice.
//   - order: for an idempotent producer, within one partition, offsets of its
//     values in the final read increase with the producer's Seq (the order it
//     handed them to the client). Non-idempotent producers are reported
//     apart: with retries and several requests in flight they may reorder.
//   - inconsistent offsets: one partition offset seen with two values, or an
//     acknowledged offset that does not hold the acknowledged value in the
//     final read.
//   - phantom reads: a value polled or in the final read that no producer
//     ever sent; aborted reads: a value whose send definitely failed.
//   - poll skips: a consumer, between two polls of one partition in one
//     assignment, jumps over offsets that exist in the final read;
//     nonmonotonic polls: it goes backwards within one assignment.
//   - committed skips: a consumer newly assigned a partition whose first
//     poll starts past the group's committed offset for it while the log
//     holds records in between (it would skip committed data). The
//     committed offset is the highest commit acknowledged ok, or any commit
//     above it that may be applied: still in flight at the poll, or
//     completed info (groupCommits); the first poll is judged against the
//     highest such candidate not above it, so starting at an indeterminate
//     commit passes and starting past every candidate is a skip.
//   - undelivered: after the producers stopped the workload waits (bounded)
//     until the group has polled up to every partition's end and records
//     "drained"; then an acknowledged value no member ever polled was
//     skipped by the group however its offsets moved. Without a drained ok
//     the count is only reported (unseen).
//   - unavailability: for each fault, the longest gap between successful
//     sends (and polls) from the fault's start to its recovery, the time
//     from the heal to the first successful send, and the longest time one
//     transactional producer went without a commit, from the fault's start
//     to its first commit after the recovery.
//
// Transactional invariants (CheckTxn) over TxnHistory: aborted reads (a
// read_committed read of an aborted transaction's write), torn transactions
// (the final read holds some but not all writes of one transaction) and
// lost commits (a committed transaction none of whose writes is in the final
// read).
package checker
