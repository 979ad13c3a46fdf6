// Package throttle shapes the answers of throttled requests as Kafka 2.8's KafkaApis does
// (KIP-219): throttle_time_ms set on any answer that has it (Set, also on a pending acks=all
// produce once it completes), the empty answer of a throttled consumer fetch (EmptyFetch), a
// consumer fetch's max_bytes capped to what its byte-rate quota allows in one window
// (CapFetch), and the size a response takes on the wire, spliced ones included, measured
// without writing it (ResponseSize). Deciding whether and how long to throttle is
// broker/quota's; muting the connection is the caller's (server.Conn.Mute).
//
// # Must never import
//
// Anything of the broker but broker/wire and broker/server (for server.Pending); no ZooKeeper.
// It keeps no state.
package throttle
