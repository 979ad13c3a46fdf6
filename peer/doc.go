// Package peer is Samsa's inter-broker client: the controller's channel manager sends
// LeaderAndIsr, UpdateMetadata and StopReplica through it, and replica fetchers send Fetch.
//
// # Owns
//
// Dialling a broker, ApiVersions negotiation on every (re)connect (v3 first, then the version
// named by a KIP-511 UNSUPPORTED_VERSION answer), choosing the highest common version per
// request (or checking a caller's pinned version), correlation ids, per-call deadlines from
// ctx, lazy reconnection with exponential backoff (50 ms to 1 s, ±20% jitter, as Kafka's
// reconnect.backoff.ms / reconnect.backoff.max.ms), and a Pool of clients keyed by broker id.
// Request returns a freshly decoded response; RequestInto (reuse.go) is for a hot loop such as
// a replica fetcher: it reads into the caller's frame buffer and decodes into the caller's kmsg
// response, both reused from call to call (byte fields alias the frame; see its contract).
// Each connection is read through a 16 KiB bufio.Reader, so a small response costs one read
// system call.
//
// # Must never import
//
// broker/storage, broker/replica, broker/group, controller, zkutil, broker/server. Of the
// project it imports broker/wire only (and kmsg/kbin/kerr from franz-go).
//
// # Concurrency
//
// A Client sends one request at a time and is safe for concurrent use (calls queue on its
// mutex); use one Client per destination and goroutine, as S6.5 prescribes. Client starts no
// goroutines of its own (context.AfterFunc callbacks only set deadlines). A call's ctx watch is
// kept for the next call with the same ctx (interrupt.go) and released by Close, so close a
// Client you stop using. Close interrupts an in-flight call. Pool is safe for concurrent use and closes its clients on Close.
//
// # Failures
//
// Any I/O, framing or decoding failure, and the end of a call's ctx, drops the connection, so
// no later response can be mismatched; the call returns the error and the next call reconnects.
// Requests are never retried here: Kafka's RequestSendThread and fetchers decide what to
// resend.
package peer
