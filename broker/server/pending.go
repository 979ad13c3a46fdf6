package server

import (
	"context"

	"github.com/twmb/franz-go/pkg/kmsg"
)

// Pending is a response a Handler has started but not finished: the request's work that must
// happen in request order (for an acks=all Produce, the appends) is done, and what is left is
// waiting (for the high watermark). Returning a Pending lets the connection read, decode and
// handle the next requests while this one waits; responses still leave in request order.
//
// The embedded kmsg.Response names the eventual response's api key (checked against the
// request like any response). Wait is called at most once, on the connection's writer
// goroutine, after every earlier response on the connection has been written; it blocks until
// the response is complete and returns it (nil: nothing is written), or returns an error,
// which closes the connection like a handler error. Wait must return promptly once ctx is done
// (the connection closing). When the connection closes before Wait is reached, Wait is never
// called: a Pending must not hold resources (purgatory registrations, goroutines, timers)
// before Wait, so an abandoned one needs no release.
type Pending interface {
	kmsg.Response
	Wait(ctx context.Context) (kmsg.Response, error)
}

// Queue bounds, per connection. A request is read only while fewer than MaxQueuedResponses
// responses are queued behind the one being written and their request frames total less than
// MaxQueuedBytes; otherwise the connection waits for the writer, as Kafka's one-at-a-time
// connection does for every request.
const (
	DefaultMaxQueuedResponses = 16
	DefaultMaxQueuedBytes     = 16 << 20
)
