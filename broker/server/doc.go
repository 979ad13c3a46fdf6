// Package server runs Samsa's client-facing listeners: accept loops, one goroutine per
// connection, and the hand-off of each decoded request to a Handler.
//
// # Owns
//
// Named TCP listeners (Listen), the accept loop with 5 ms → 1 s backoff on temporary errors,
// the per-connection loops (reader: read frame → parse → Handler.Serve, in order; writer:
// finish and write responses, in order), the per-connection response queue (Pending,
// MaxQueuedResponses, MaxQueuedBytes), the request frame pool (Produce and Fetch frames),
// connections.max.idle.ms, max.connections.per.ip (and its overrides), max.connections and
// max.connection.creation.rate (broker-wide and per listener, the inter-broker listener exempt
// from the broker-wide ones; limits.go; all replaceable at run time with SetLimits and
// SetListenerLimits; the per-address connection_creation_rate quotas, SetIPConnectionRates,
// ip_rate.go), transport security per listener (Security, ListenSecure:
// TLS handshake on the connection goroutine and the certificate principal, security.go; the SASL
// exchange before any request, with sasl.server.max.receive.size as the frame limit until
// authenticated, SaslHandshake v0 raw tokens, the failed-authentication delay and KIP-368
// re-authentication, sasl.go), socket.send/receive.buffer.bytes, graceful
// and forced shutdown, the per-connection recover() of last
// resort (Panics, metric "broker.panics"), the request metrics (RequestsPerSec,
// TotalTimeMs per API), the request plane gauges under Kafka's SocketServer, RequestChannel and
// KafkaRequestHandlerPool names, with Kafka's ControlPlane prefix for the listener marked
// Security.ControlPlane (plane_metrics.go), and connection muting (Conn.Mute: Kafka's channel mute on a client
// quota violation, KIP-219).
//
// # Must never import
//
// broker (root), broker/storage, broker/replica, broker/group, controller, zkutil,
// broker/metadata. It imports broker/wire, broker/principal and broker/security/sasl only.
//
// # Concurrency
//
// Server methods are safe for concurrent use. Serve starts one accept goroutine per listener
// and one reader goroutine per connection, all owned by the Server's WaitGroup; a connection's
// writer goroutine starts with its first queued response and is joined by its reader. Nothing
// is global: no request queue, no handler pool.
//
// A connection reads, parses and handles one request at a time, in order, on its reader
// goroutine, so every request's side effects (for Produce: the appends) happen in request
// order. A handler may return a Pending (acks=all Produce waiting for the high watermark):
// the response is queued for the writer goroutine, which waits for it and writes it, while the
// reader goes on with the next requests. Only Produce requests are handled while responses
// are queued: any other request first waits until the connection owes nothing, so it sees the
// effects of every earlier request complete (an acknowledged write, a moved high watermark)
// exactly as on Kafka's one-request-at-a-time connection. A response that follows a queued one
// is queued behind it; a response with nothing queued before it is written by the reader at
// once (the common path costs no goroutine hand-off). So responses always leave in request order
// (Kafka's guarantee), and a connection owes at most MaxQueuedResponses responses (default 16)
// or MaxQueuedBytes of request frames (default 16 MiB) before it stops reading; with
// MaxQueuedResponses 1 it behaves as Kafka's one-request-at-a-time connection. A handler that
// blocks in Serve (long-poll Fetch, JoinGroup) still parks its reader, as before.
//
// Conn.Mute(d) (a Handler throttling its client) stops the reader goroutine from reading the
// next request for d: the muting request's answer and any queued ones are still written; the
// reader waits on a timer before its next read. A connection that is muted and owes nothing
// counts as idle for graceful shutdown. Without a mute the check is one atomic load.
//
// A Pending holds nothing until its Wait runs, so a connection that closes with responses
// queued drops them without calling Wait; the one Wait in progress sees its ctx cancelled.
//
// Frames: Produce and Fetch request frames come from a bounded pool (wire.FramePool) and go
// back to it once their response is written or dropped; handlers must not keep their byte
// fields beyond that (see Handler). Other frames are left to the GC, since handlers (group
// membership metadata) may keep their bytes.
//
// Stopping: Shutdown(ctx) closes the listeners, closes idle connections (waiting for a request
// and owing no response) at once, lets busy connections stop reading, write every queued
// response and then closes them, and at ctx's deadline closes everything and cancels handler
// contexts (a Pending's Wait gets the cancelled ctx). Cancelling Serve's ctx does the forced
// part at once. Both wait for every goroutine; handlers and Waits must return when their ctx
// is done.
//
// Accept loops wait on Server.slots (a sync.Cond on Server.mu) while a connection limit is
// reached; removeConn, stopAccepting, SetLimits and SetListenerLimits broadcast it. The limits
// live under Server.mu (Server.mu.limits, listener.maxConns) and are read afresh at each wake-up;
// the creation-rate buckets have their own mutex.
//
// The plane gauges' counters are atomics added to by connection goroutines (handler and
// decode/write nanoseconds, queued requests and responses, expired sessions); a reading turns
// the busy nanoseconds into an idle fraction under the gauge's own mutex.
//
// Locks: Server.mu (listeners, connection set, per-IP counts, limits) is taken before Conn.mu
// (reading and closed flags, queue counts) and before a listener's rateLimiter.mu, never the
// other way round; no I/O other than Close happens under either (the connections closed above
// max.connections are logged after Server.mu is released).
//
// # Errors and the connection
//
// The connection closes (after one log line with peer, api, api_version, corr, client_id) on:
// a frame size that is negative or above MaxRequestSize, a torn frame, an undecodable header or
// body, an unknown api key, a version kmsg cannot decode (except ApiVersions, which the Handler
// answers per KIP-511), a handler error, a handler panic, a response of the wrong api key, and
// a failed write; a Pending's Wait error or panic likewise. After a read or write failure or a
// panic, queued responses are dropped; after the other errors the responses queued before the
// failing request are still written first. Everything else is the Handler's to answer with an error code. See
// docs/protocol.md.
package server
