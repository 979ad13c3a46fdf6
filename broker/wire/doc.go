// Package wire reads and writes Kafka's size-prefixed frames and the request and response
// headers around kmsg-encoded bodies.
//
// # Owns
//
// Framing (ReadFrame, bounded by socket.request.max.bytes; ReadFramePooled with the bounded
// size-class FramePool for the server's Produce and Fetch frames), request headers v0/v1/v2
// (ParseRequest), response headers v0/v1 (AppendResponse, AppendResponseHeader), the client-side
// mirror used by peer (AppendRequest, ParseResponse), the KIP-511 UNSUPPORTED_VERSION
// answer for ApiVersions (UnsupportedAPIVersionsResponse), and the spliced-response path that lets
// Fetch send record bytes from files with sendfile (ResponseWriterTo, Spliced, Region), or,
// for at most MaxInlineRegionBytes of InlineRegions, copy them and send one write. Every
// request and response body codec is kmsg's; wire never hand-encodes a body. Samsa's own tagged
// fields (samsa_tags.go) are numbered here, so clients and tools need no broker import.
//
// # Must never import
//
// Any other samsa package (tier 0 leaf).
//
// # Concurrency
//
// Everything here is a pure function of its arguments, safe for concurrent use, except two
// internally synchronised free lists: FramePool (channels per size class) and the sync.Pool of
// Spliced's working buffers. wire starts no goroutines. A Spliced response is used by one
// goroutine.
//
// # Formats
//
//	frame            := size:int32 (big-endian, 0 <= size <= max) payload[size]
//	request header   v0 := api_key:int16 api_version:int16 correlation_id:int32
//	                 v1 := v0 client_id:nullable INT16 string (length -1 = null)
//	                 v2 := v1 tagged_fields (KIP-482; client_id stays INT16-length)
//	response header  v0 := correlation_id:int32
//	                 v1 := v0 tagged_fields
//
// Request header v0 is used only by ControlledShutdown v0; v2 by every flexible version. The
// response header is v1 for flexible versions except ApiVersions, whose response header is
// always v0 (KIP-511), even for its flexible v3+ bodies. The rules are in docs/protocol.md.
//
// # Untrusted input
//
// ReadFrame rejects negative and oversized frames having read only the 4-byte prefix, and grows
// its buffer with the bytes actually received (at most doubling; ReadFramePooled hands out a
// class-sized buffer up front only up to 1 MiB, and above that recycles buffers grown that
// way). ParseRequest bounds every header length by the
// remaining bytes; kmsg (v1.15+) bounds array counts by remaining bytes times the element's
// minimum wire size before allocating (the KAFKA-14063 / CVE-2022-34917 fix). FuzzWireRequest
// checks that no input panics and that decoding allocates at most a small multiple of the frame.
package wire
