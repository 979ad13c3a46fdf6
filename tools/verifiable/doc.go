// Package verifiable is kafka-verifiable-producer and
// kafka-verifiable-consumer (Kafka 2.8's VerifiableProducer and
// VerifiableConsumer), the tools Kafka's system tests drive.
//
// Owns: verifiable_common.go (an argparse4j-style option parser and the
// Jackson-style JSON line writer), verifiable_producer.go (Kafka's murmur2
// partitioner, the throttle, send/ack events), verifiable_consumer.go and
// verifiable_consumer_group.go (the group member, its poll loop and commit
// events).
//
// Output format: one JSON event per line, fields in Kafka's order
// ({"timestamp":...,"name":"producer_send_success",...},
// "partitions_assigned", "records_consumed", "offsets_committed",
// "shutdown_complete"), strings escaped as Jackson does, doubles as Java's
// Double.toString.
//
// Concurrency: the producer's completions and the consumer's group session
// run on Sarama goroutines writing events through one locked writer; all
// stop before the command returns.
package verifiable
