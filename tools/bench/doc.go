// Command samsa-bench runs the side-by-side benchmark of
// bin/samsa-benchmark.sh: this machine's limits (probe), then the same
// producer, consumer and end-to-end latency workloads against Samsa and
// against kfake (franz-go's in-memory fake cluster, tools/bench/kfakepeer),
// with Sarama (Samsa's perf tools) and franz-go's kgo as clients, sampling
// the brokers' resident memory. It writes its section of docs/benchmarks.md
// and docs/benchmarks.svg.
//
//	samsa-bench probe -dir DIR            only the limits
//	samsa-bench rtt -bootstrap H:P -topic T    sequential acks=all round trips
//	samsa-bench e2e -bootstrap H:P -topic T    e2e latency at a fixed rate
//	samsa-bench run -samsa BIN -kfakepeer BIN -zk HOST:PORT -work DIR [-quick]
//	samsa-bench scale-idle -zk HOST:PORT      idle CPU, RSS, files at 10,000 partitions; 10,000 idle connections
//	samsa-bench scale-series -zk HOST:PORT    acks=all RF 3 throughput at 6 … 12,000 partitions
//
// ZooKeeper is started by the script; brokers and kfakepeer are started
// and stopped here (SIGTERM, by pid).
//
// # What it owns
//
// tools/bench only: the limits probe (probe.go), cluster processes and RSS
// sampling (cluster.go), the franz-go load loops (kgoload.go), the Sarama
// perf-tool runs and their output parsing (sarama.go), the report and the
// chart (report.go, targets.go, svg.go), and the scale measurements of
// issue 18 (scale.go; /proc readings in procstat.go), which print their
// figures for docs/benchmarks.md's hand-written "Cost per partition". It never imports Samsa's broker
// packages: Samsa and kfake are both driven only over the Kafka protocol
// and as child processes, so the comparison is fair.
//
// # Concurrency
//
// One run at a time; each cluster's RSS sampler is one goroutine; the e2e
// measurement runs a consumer goroutine next to the paced producer. Both
// systems' clusters of a shape are up together, idle but for the run in
// progress: producer and consumer runs alternate between them (cells.go),
// so a ratio between systems compares runs seconds apart, not minutes.
package main
