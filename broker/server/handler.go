package server

import (
	"context"

	"github.com/twmb/franz-go/pkg/kmsg"

	"samsa/broker/wire"
)

// Handler answers decoded requests. The server calls Serve on the connection's reader
// goroutine, one request at a time and in request order, so what a handler does (appends,
// offset commits) happens in the order the client sent the requests; responses on a connection
// leave in request order (Kafka's per-connection ordering guarantee).
//
// Serve may block (a fetch's MaxWaitTime, a JoinGroup); it must return promptly once ctx is
// done, which happens when the connection is force-closed or the server stops. A handler that
// has done the ordered part of its work and only has to wait (acks=all Produce waiting for the
// high watermark) should return a Pending instead of blocking, so the connection can read the
// next requests meanwhile. Only Produce requests are handled while responses are pending; the
// server calls Serve for any other request once every earlier response has been written.
//
// The returned response is encoded at req.Version with wire.AppendResponse and written after
// every earlier response on the connection. Special cases:
//   - nil response and nil error: nothing is written (Produce with acks=0) and the connection
//     reads the next request;
//   - a Pending: its Wait runs on the connection's writer goroutine once the earlier responses
//     are written, and its result is written (see Pending);
//   - a response that implements wire.ResponseWriterTo (for example a *wire.Spliced Fetch
//     response) writes its own frame directly to the connection, so file regions can go out
//     with sendfile;
//   - a non-nil error closes the connection after one log line; use it only where Kafka also
//     closes (an unsupported version, an inter-broker request where none is allowed), and
//     answer everything else with an error code in the response.
//
// The server reuses the frame of a Produce or Fetch request (req.Frame, which Body's byte
// fields such as Produce records alias) once its response has been written or dropped, so
// handlers of those two APIs must copy any request bytes they keep longer (appending to a log
// file does). Frames of other APIs are never reused.
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
