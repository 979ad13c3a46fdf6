// Package storage is Samsa's "the log": per-partition append-only logs made
// of segment files, their offset and time indexes, recovery after a crash,
// retention, flushing, checkpoints and the Manager over the log dirs.
//
// The full format and concurrency contract is written at the end of this
// package's development; see docs/storage.md.
//
// Must never import: net, kmsg requests, zkutil, controller, replica, group,
// server, peer, metadata.
package storage
