// Package chaos is Samsa's reliability harness (issue 17): a 3-server
// ZooKeeper ensemble and 3 to 5 broker processes, each in its own Linux
// network namespace, a recorded client workload, a schedule of faults
// ("nemeses") and a checker over the recorded history. bin/samsa-chaos.sh
// runs it; tools/chaos is the command; docs/reliability.md holds the fault
// matrix and its measured results.
//
// Sub-packages, lowest first:
//
//   - history: the JSON-lines history format (one Op per line) and its
//     writer. Imports nothing of Samsa.
//   - checker: pure functions over a history: lost acknowledged writes,
//     duplicates, per-producer order, inconsistent offsets, phantom reads,
//     poll skips, consumers starting past committed offsets, unavailability
//     windows per fault, and the transactional anomalies (aborted read,
//     torn transaction, lost commit, exactly-once duplicates) over the txn
//     workload's ops. Imports only history.
//   - netns: the network: a switch namespace with a bridge, one namespace
//     per node joined by a veth pair, the root namespace joined by one more
//     veth (the clients' address), and the fault primitives (blackhole
//     routes for partitions, a bridge port down for isolation, iptables
//     statistic drops for one-way loss, tbf for delay). Addresses live in
//     10.77.0.0/24 only inside those namespaces and on the one root-side
//     veth the harness creates; nothing is routed anywhere else.
//   - cluster: the processes: ZooKeeper servers (Debian's jar,
//     QuorumPeerMain, a zoo.cfg with server.N lines) and samsa brokers
//     (`samsa kafka-server-start`), each run under `ip netns exec`, with
//     their log dirs on a small tmpfs each (the full-disk nemesis fills it),
//     or ext4 on a loop device for the slow-disk nemesis. Processes are
//     childproc.Procs, the type broker/brokertest uses too.
//   - workload: the queue workload (franz-go and Sarama producers,
//     idempotent and not, acks=all; a franz-go consumer group that commits)
//     and the transactional workload (multi-partition transactions with
//     franz-go and Sarama, franz-go consume-transform-produce), run side by
//     side.
//   - nemesis: the faults. Every fault has Start and Heal; the runner defers
//     Heal and bounds each fault by a deadline.
//   - runner: one seeded run: build the topology, run the workload, apply a
//     seeded schedule of faults, wait for recovery after each, do a final
//     read, check, and print the summary line.
//
// Invariants the harness keeps:
//
//   - Everything it creates carries the prefix "samsa-chaos" (namespace
//     names, the root veth, tmpfs mount points under the work dir), so
//     `--cleanup` can remove the leftovers of a crashed run and nothing
//     else.
//   - Every fault heals: Heal runs on the normal path, on error, on
//     SIGINT/SIGTERM and after the fault's deadline.
//   - A timed-out or otherwise ambiguous produce is recorded as "info"
//     (indeterminate) and never counted as lost.
package chaos
