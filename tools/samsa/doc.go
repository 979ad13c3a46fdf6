// Command samsa is the Samsa broker and its Kafka-style tools in one binary:
// "samsa kafka-server-start server.properties", "samsa kafka-topics ...",
// and so on; the bin/*.sh scripts call it. It only builds the application
// from package tools and configures logrus once.
//
// SAMSA_LOG_LEVEL (trace, debug, info, warn, error; default info) sets the
// log level; logs go to stderr.
//
// kafka-server-start runs with GOGC=400 and a 160 MiB soft memory limit
// (GOMEMLIMIT) unless the environment sets GOGC or GOMEMLIMIT (gc.go;
// docs/operations.md).
//
// Owns: process set-up only (logrus configuration, GC defaults, exit code). Must never
// import anything of Samsa but tools. Concurrency: none of its own.
package main
