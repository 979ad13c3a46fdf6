package promtext

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	"time"

	metrics "github.com/rcrowley/go-metrics"
)

// ContentType is the Content-Type of the text exposition format.
const ContentType = "text/plain; version=0.0.4; charset=utf-8"

// Handler returns an http.Handler that answers GET and HEAD on /metrics
// with reg in the Prometheus text format, and 404 elsewhere.
func Handler(reg metrics.Registry, rename Rename) http.Handler {
	mux := http.NewServeMux()
	mux.HandleFunc("/metrics", func(w http.ResponseWriter, r *http.Request) {
		if r.Method != http.MethodGet && r.Method != http.MethodHead {
			w.Header().Set("Allow", "GET, HEAD")
			http.Error(w, "method not allowed", http.StatusMethodNotAllowed)
			return
		}
		w.Header().Set("Content-Type", ContentType)
		if r.Method == http.MethodHead {
			return
		}
		_ = Write(w, reg, rename) // a write error means the scraper went away
	})
	return mux
}

// Server is a running metrics endpoint.
type Server struct {
	ln  net.Listener
	srv *http.Server
	err chan error
}

// Listen binds addr ("host:port"; port 0 picks a free one) and serves reg
// (names mapped through rename) at /metrics until Close.
func Listen(addr string, reg metrics.Registry, rename Rename) (*Server, error) {
	return ListenHandler(addr, Handler(reg, rename))
}

// ListenHandler is Listen with the caller's handler (for example a mux
// with Handler at /metrics and more paths beside it).
func ListenHandler(addr string, h http.Handler) (*Server, error) {
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return nil, fmt.Errorf("promtext: listen on %s: %w", addr, err)
	}
	s := &Server{ln: ln, err: make(chan error, 1), srv: &http.Server{
		Handler:           h,
		ReadHeaderTimeout: 10 * time.Second,
		WriteTimeout:      30 * time.Second,
		IdleTimeout:       2 * time.Minute,
		MaxHeaderBytes:    16 << 10,
	}}
	go func() {
		err := s.srv.Serve(ln)
		if errors.Is(err, http.ErrServerClosed) {
			err = nil
		}
		s.err <- err
	}()
	return s, nil
}

// Addr returns the bound address.
func (s *Server) Addr() net.Addr { return s.ln.Addr() }

// Close stops the server, waiting until ctx ends for scrapes in flight,
// and returns once the serving goroutine has exited.
func (s *Server) Close(ctx context.Context) error {
	err := s.srv.Shutdown(ctx)
	if err != nil {
		_ = s.srv.Close()
	}
	if serveErr, ok := <-s.err; ok {
		close(s.err)
		if err == nil {
			err = serveErr
		}
	}
	return err
}
