package server

import (
	"context"

	"github.com/twmb/franz-go/pkg/kmsg"

	"samsa/broker/wire"
)

// Handler answers decoded requests. The server calls Serve on the connection's own goroutine,
// one request at a time, so responses on a connection leave in request order (Kafka's
// per-connection ordering guarantee) without a reorder buffer.
//
// Serve may block (purgatory waits for acks=all produce or a fetch's MaxWaitTime); it must
// return promptly once ctx is done, which happens when the connection is force-closed or the
// server stops.
//
// The returned response is encoded at req.Version with wire.AppendResponse and written before
// the next request is read. Special cases:
//   - nil response and nil error: nothing is written (Produce with acks=0) and the connection
//     reads the next request;
//   - a response that implements wire.ResponseWriterTo (for example a *wire.Spliced Fetch
//     response) writes its own frame directly to the connection, so file regions can go out
//     with sendfile;
//   - a non-nil error closes the connection after one log line; use it only where Kafka also
//     closes (an unsupported version, an inter-broker request where none is allowed), and
//     answer everything else with an error code in the response.
//
// ApiVersions above the decodable range reaches Serve with wire.ErrUnsupportedVersion's header
// and an empty *kmsg.ApiVersionsRequest at the requested version; answer it with
// wire.UnsupportedAPIVersionsResponse (KIP-511). Any other request that wire cannot decode
// never reaches the handler: the connection closes.
type Handler interface {
	Serve(ctx context.Context, c *Conn, req *wire.Request) (kmsg.Response, error)
}

// HandlerFunc adapts a function to Handler.
type HandlerFunc func(ctx context.Context, c *Conn, req *wire.Request) (kmsg.Response, error)

// Serve calls f.
func (f HandlerFunc) Serve(ctx context.Context, c *Conn, req *wire.Request) (kmsg.Response, error) {
	return f(ctx, c, req)
}
