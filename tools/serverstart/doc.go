// Package serverstart is kafka-server-start (Kafka's kafka.Kafka main): it
// loads server.properties with --override, applies log.format/log.level
// (and SAMSA_LOG_FILE) to the process logger, runs broker.New and shuts the
// broker down in order on SIGTERM/SIGINT or the end of tool.Env.Context.
//
// Owns: server_start.go. Output: the broker's log only (stderr or
// SAMSA_LOG_FILE); usage errors as Kafka's ("USAGE: ... server.properties
// [--override property=value]*").
//
// Concurrency: the broker's goroutines are owned by the broker; the
// command waits for Shutdown to finish before it returns.
package serverstart
