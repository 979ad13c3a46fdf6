// Package configchange is the broker's one /config/changes listener
// (Kafka 2.8's ZkNodeChangeNotificationListener under DynamicConfigManager):
// one goroutine watches the children of /config/changes and hands every
// notification to the handlers registered for its entity type.
//
// # Format
//
// A change to /config/<type>/<name> is announced by a persistent-sequential
// child config_change_<10-digit seq> whose data is
// {"version":2,"entity_path":"<type>/<name>"} (zkutil/codec_config.go; v1
// is also read). <type> is topics, clients, users, brokers or ips, or
// Samsa's samsa_log_end_replicas; <name> may itself hold slashes
// (users/<u>/clients/<c>). The notification carries no config: a handler
// re-reads the entity it names.
//
// # Semantics
//
// As Kafka's listener: at start every existing notification is processed
// (the last seen sequence starts at -1), then, on each change of the
// children, the notifications above the last one seen, in sequence order.
// Each goes to every handler registered for its type, in registration
// order. A notification that disappeared before it was read is skipped,
// as is one whose entity path has no "<type>/<name>" form.
//
// A handler may have Load, which reads its whole state: it runs when the
// listener starts and again on every wake until it succeeds; until then
// the handler's Apply calls are skipped (the load covers them), and an
// Apply that fails makes the next wake load again. Handlers without Load
// are called for every notification and their errors are only logged.
//
// Samsa does not purge notifications older than 15 minutes, as Kafka's
// listener does (kafka-configs and the controller never need them).
//
// # Must never import
//
// Any Samsa package but zkutil.
//
// # Concurrency
//
// Run is one goroutine; handlers run on it, one at a time, never
// concurrently with each other, and must not block for long. The watch
// callback only signals a buffered channel (STYLE S6.6).
package configchange
