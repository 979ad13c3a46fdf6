package main

import (
	"runtime/debug"

	"github.com/sirupsen/logrus"
)

// Garbage-collector defaults for the broker process (kafka-server-start), used when the
// operator sets neither GOGC nor GOMEMLIMIT. A broker's live heap is small (tens of MiB) and
// its garbage is short-lived request data, so Go's default GOGC=100 collects several times a
// second under load for little gain. GOGC=400 lets the heap grow to five times the live heap
// between collections; the soft memory limit makes the collector work harder before the
// process nears the 256 MiB target of docs/benchmarks.md.
const (
	serverGCPercent   = 400
	serverMemoryLimit = 160 << 20
)

// tuneServerGC applies the broker GC defaults when args run kafka-server-start and getenv
// finds neither GOGC nor GOMEMLIMIT; it reports whether it did.
func tuneServerGC(args []string, getenv func(string) string, log logrus.FieldLogger) bool {
	if len(args) < 2 || args[1] != "kafka-server-start" {
		return false
	}
	if getenv("GOGC") != "" || getenv("GOMEMLIMIT") != "" {
		return false
	}
	debug.SetGCPercent(serverGCPercent)
	debug.SetMemoryLimit(serverMemoryLimit)
	log.WithField("component", "samsa").Infof("garbage collector: GOGC=%d, GOMEMLIMIT=%dMiB (broker defaults; set GOGC or GOMEMLIMIT to override)",
		serverGCPercent, serverMemoryLimit>>20)
	return true
}
