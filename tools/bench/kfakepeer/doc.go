// Command kfakepeer runs franz-go's kfake (an in-memory fake Kafka cluster,
// no durability) as a separate process on fixed ports, so that
// bin/samsa-benchmark.sh can drive it with the same clients as Samsa and
// sample its resident memory.
//
//	kfakepeer -ports 24092,24093,24094
//
// It prints "kfakepeer ready <addr>..." on stdout once listening and runs
// until SIGTERM or SIGINT. It owns nothing of Samsa and imports nothing of
// it. Topics are created by the clients (CreateTopics); auto-creation is on
// as in Kafka's default config.
package main
