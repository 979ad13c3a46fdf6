// Package doctor is samsa doctor (bin/samsa-doctor.sh; no Kafka
// counterpart): host, cluster and consumer-group checks that print what is
// wrong and how to fix it.
//
// Owns: doctor.go (options, the report and its format), doctor_host.go
// (sysctls, file-descriptor limit, noatime and free space of each log dir),
// doctor_cluster.go (offline and under-replicated partitions, the
// __consumer_offsets replication, through --zookeeper and/or
// --bootstrap-server), doctor_groups.go (rebalance storms from the brokers'
// /groups/rebalances documents, read with tools/groups' client).
//
// Output format: one section per check family, one "[ OK ]"/"[WARN]"/"[FAIL]"
// line per finding, each problem followed by an indented "fix:" line, then
// "N problem(s) found."
// Exit code 1 when at least one problem was found.
//
// Concurrency: none of its own.
package doctor
