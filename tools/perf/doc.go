// Package perf is the performance tools: kafka-producer-perf-test (Kafka
// 2.8's ProducerPerformance), kafka-consumer-perf-test
// (ConsumerPerformance) and kafka-e2e-latency (kafka.tools.EndToEndLatency).
//
// Owns: producer_perf.go (argparse4j-style options, the send loop, payloads
// byte-identical to Kafka's from java.util.Random(0)), perf_stats.go
// (Kafka's Stats: window lines and the final percentiles), perf_metrics.go
// (--print-metrics), consumer_perf.go, e2e_latency.go.
//
// Output formats: Kafka's, as its scripts parse them: "N records sent, X
// records/sec (Y MB/sec), A ms avg latency, M ms max latency." windows and
// the final line with the 50th/95th/99th/99.9th percentiles; the consumer's
// CSV header and rows; the e2e tool's per-1000 latency lines, "Avg latency:
// X ms" and the percentiles line.
//
// Concurrency: the producer's completion callbacks and the consumer's
// group session run on Sarama goroutines that update the stats under a
// mutex; all stop before the command returns.
package perf
