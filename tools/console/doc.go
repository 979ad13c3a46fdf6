// Package console is kafka-console-producer (Kafka 2.8's ConsoleProducer
// with LineMessageReader) and kafka-console-consumer (ConsoleConsumer with
// DefaultMessageFormatter).
//
// Owns: console_producer.go (one message per stdin line, parse.key /
// key.separator, --sync), console_consumer.go (direct partition reads, or
// a Sarama consumer group with --group; the formatter's print.* properties),
// console_consumer_zk.go (--zookeeper: the old high-level consumer,
// tools/zkconsumer, with offsets under /consumers/<group>).
//
// Output formats: the producer prints nothing but errors (Kafka's
// ErrorLoggingCallback wording on stderr); the consumer prints each record
// as DefaultMessageFormatter does and "Processed a total of N messages" on
// stderr at the end.
//
// Concurrency: the consumer runs one goroutine per partition (or the group
// session) feeding a single printer; all stop before the command returns.
package console
