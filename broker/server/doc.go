// Package server runs Samsa's client-facing listeners: accept loops, one goroutine per
// connection, and the hand-off of each decoded request to a Handler.
//
// # Owns
//
// Named TCP listeners (Listen), the accept loop with 5 ms → 1 s backoff on temporary errors,
// the per-connection loop (read frame → parse → Handler.Serve → write response, in order),
// connections.max.idle.ms, max.connections.per.ip, socket.send/receive.buffer.bytes, graceful
// and forced shutdown, the per-connection recover() of last
// resort (Panics, metric "broker.panics"), and the request metrics (RequestsPerSec,
// TotalTimeMs per API).
//
// # Must never import
//
// broker (root), broker/storage, broker/replica, broker/group, controller, zkutil,
// broker/metadata. It imports broker/wire only.
//
// # Concurrency
//
// Server methods are safe for concurrent use. Serve starts one accept goroutine per listener
// and one goroutine per connection, all owned by the Server's WaitGroup. Each connection
// handles one request at a time on its own goroutine, so responses leave in request order
// (Kafka's guarantee) and a blocking handler parks only its own connection. Nothing is global:
// no request queue, no handler pool.
//
// Stopping: Shutdown(ctx) closes the listeners, closes idle connections at once, lets busy
// connections write their current response and then closes them, and at ctx's deadline closes
// everything and cancels handler contexts. Cancelling Serve's ctx does the forced part at once.
// Both wait for every goroutine; handlers must return when their ctx is done.
//
// Locks: Server.mu (listeners, connection set, per-IP counts) is taken before Conn.mu (idle
// and closed flags), never the other way round; no I/O other than Close happens under either.
//
// # Errors and the connection
//
// The connection closes (after one log line with peer, api, api_version, corr, client_id) on:
// a frame size that is negative or above MaxRequestSize, a torn frame, an undecodable header or
// body, an unknown api key, a version kmsg cannot decode (except ApiVersions, which the Handler
// answers per KIP-511), a handler error, a handler panic, a response of the wrong api key, and
// a failed write. Everything else is the Handler's to answer with an error code. See
// docs/protocol.md.
package server
