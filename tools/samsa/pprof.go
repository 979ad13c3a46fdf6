package main

import (
	"net"
	"net/http"
	"net/http/pprof"

	"github.com/sirupsen/logrus"
)

// startPprof serves Go's profiling endpoints (/debug/pprof/...) on addr, for
// profiling a broker under load (docs/operations.md, "Profiling"). Only a
// loopback address is accepted: the endpoints expose heap contents and cost
// CPU, so they must never be reachable from the network.
func startPprof(addr string, log logrus.FieldLogger) {
	log = log.WithField("component", "pprof")
	host, _, err := net.SplitHostPort(addr)
	if err != nil {
		log.WithError(err).Warnf("ignoring SAMSA_PPROF_ADDR=%q", addr)
		return
	}
	if ip := net.ParseIP(host); host != "localhost" && (ip == nil || !ip.IsLoopback()) {
		log.Warnf("ignoring SAMSA_PPROF_ADDR=%q: only a loopback address is allowed", addr)
		return
	}
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		log.WithError(err).Warn("pprof listener not started")
		return
	}
	mux := http.NewServeMux()
	mux.HandleFunc("/debug/pprof/", pprof.Index)
	mux.HandleFunc("/debug/pprof/cmdline", pprof.Cmdline)
	mux.HandleFunc("/debug/pprof/profile", pprof.Profile)
	mux.HandleFunc("/debug/pprof/symbol", pprof.Symbol)
	mux.HandleFunc("/debug/pprof/trace", pprof.Trace)
	log.WithField("addr", ln.Addr().String()).Info("serving /debug/pprof")
	go func() {
		// The listener lives as long as the process; Serve only returns on
		// a listener error, which is logged.
		if err := http.Serve(ln, mux); err != nil {
			log.WithError(err).Warn("pprof listener stopped")
		}
	}()
}
