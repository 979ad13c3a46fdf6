package server

import (
	"context"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kmsg"

	"samsa/broker/wire"
)

// muteHandler mutes the connection for d on every ApiVersions request it answers.
func muteHandler(d time.Duration) Handler {
	return HandlerFunc(func(ctx context.Context, c *Conn, req *wire.Request) (kmsg.Response, error) {
		if req.Key == 18 {
			c.Mute(d)
		}
		return req.Body.ResponseKind(), nil
	})
}

// TestServerMuteDelaysNextRequestNotResponse: the muting request's answer leaves at once; a
// request sent right behind it is read (and answered) only once the mute has ended.
func TestServerMuteDelaysNextRequestNotResponse(t *testing.T) {
	const mute = 400 * time.Millisecond
	_, addr, _ := startServer(t, muteHandler(mute), nil)
	c := dial(t, addr)
	start := time.Now()
	av := kmsg.NewPtrApiVersionsRequest()
	corr1 := c.send(av)
	md := metadataReq(1)
	corr2 := c.send(md)
	c.recv(av, corr1)
	if d := time.Since(start); d >= mute {
		t.Fatalf("muting request answered after %v, not at once", d)
	}
	c.recv(md, corr2)
	if d := time.Since(start); d < mute {
		t.Fatalf("request behind a %v mute answered after %v", mute, d)
	}
	// Unmuted again: the next round trip is immediate.
	t0 := time.Now()
	c.roundTrip(metadataReq(1))
	if d := time.Since(t0); d >= mute {
		t.Fatalf("round trip after the mute took %v", d)
	}
}

// TestServerShutdownClosesMutedConnection: a muted connection that owes nothing is idle for
// graceful shutdown, which does not wait for the mute to end.
func TestServerShutdownClosesMutedConnection(t *testing.T) {
	checkNoGoroutineLeak(t)
	s, addr := newListening(t, Options{Handler: muteHandler(time.Hour)})
	served := make(chan error, 1)
	go func() { served <- s.Serve(context.Background()) }()
	c := dial(t, addr)
	c.roundTrip(kmsg.NewPtrApiVersionsRequest())
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	start := time.Now()
	if err := s.Shutdown(ctx); err != nil {
		t.Fatalf("Shutdown = %v", err)
	}
	if d := time.Since(start); d > 5*time.Second {
		t.Fatalf("Shutdown waited %v for a muted connection", d)
	}
	c.expectClosed()
	if err := <-served; err != nil {
		t.Fatalf("Serve = %v", err)
	}
}
