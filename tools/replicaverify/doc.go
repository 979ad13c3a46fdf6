// Package replicaverify is kafka-replica-verification (Kafka 2.8's
// kafka.tools.ReplicaVerificationTool): it fetches every replica of the
// chosen topics as a debugging consumer (replica id -2) and compares the
// batches replica by replica up to each high watermark.
//
// Owns: replica_verification.go (options, the plan of partitions per
// broker), replica_verification_fetch.go (one fetcher per broker and the
// rounds), replica_verification_buffer.go (the comparison and the reports).
//
// Output formats: Kafka's report lines ("<date>: max lag is N for partition
// t-p at offset O among K partitions", the checksum and offset mismatch
// lines); a mismatch of offsets ends the tool with exit code 1, as Kafka's.
//
// Concurrency: one fetch goroutine per broker per round; the comparison
// runs after all answered, on the command's goroutine.
package replicaverify
