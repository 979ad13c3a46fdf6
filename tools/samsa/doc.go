// Command samsa is the Samsa broker and its Kafka-style tools in one binary:
// "samsa kafka-server-start server.properties", "samsa kafka-topics ...",
// and so on; the bin/*.sh scripts call it. It only builds the application
// from package tools and configures logrus once.
//
// SAMSA_LOG_LEVEL (trace, debug, info, warn, error; default info) sets the
// log level; logs go to stderr. The Go runtime's GOGC and GOMEMLIMIT apply
// unchanged; Samsa sets no GC default of its own (docs/operations.md,
// "Memory and garbage collection", has the measurement behind that).
//
// Owns: process set-up only (logrus configuration, exit code). Must never
// import anything of Samsa but tools. Concurrency: none of its own.
package main
