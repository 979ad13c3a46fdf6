// Package dumplog is kafka-dump-log (Kafka 2.8's kafka.tools.DumpLogSegments):
// it prints segment (.log), offset index (.index), time index (.timeindex),
// transaction index (.txnindex) and producer snapshot (.snapshot) files.
//
// Owns: dump_log.go (options, the segment reader and batch/record lines),
// dump_log_index.go (.index/.timeindex and their checks against the log),
// dump_log_txnindex.go, dump_log_snapshot.go, dump_log_offsets.go
// (--offsets-decoder: __consumer_offsets keys and values with
// broker/group's codecs), progress.go (the stderr progress line on large
// files). Files are read read-only with broker/record's codecs; nothing is
// ever written.
//
// Output formats: Kafka 2.8's lines ("Dumping <file>", "Starting offset: N",
// "baseOffset: ... | offset: ...", "offset: N position: P",
// "timestamp: T offset: N"), then the mismatch reports, as
// DumpLogSegments prints them; the golden files in testdata pin them.
//
// Concurrency: none.
package dumplog
