package main

import (
	"fmt"
	"os"
	"runtime"
	"slices"
	"strings"
	"time"
)

// results is everything one run measured.
type results struct {
	Start, End            time.Time
	Opts                  options
	Host                  string
	LoadBefore, LoadAfter string
	Limits                Limits
	Cells                 []*cell
	Mem                   []*memCell
}

// cell is one figure: a workload on one system with one client, measured
// Opts.repeats times.
type cell struct {
	Kind   string // produce, consume, e2e
	System string // samsa, kfake
	Client string // sarama, kgo
	Topo   topology
	Size   int    // record value bytes
	Acks   string // "1" or "all" (produce, e2e)
	N      int    // records per run (produce, consume)
	// Inflight is the producer's produce requests in flight per broker
	// (e2e, rtt); 0 means the default of kgoProducerOpts (5).
	Inflight int
	Runs     []throughput
	Lat      []latency
	RSS      int64 // largest broker's peak resident memory during the runs
	Errs     []string
}

// memCell is the memory test of one system: one broker, one wide topic.
type memCell struct {
	System           string
	Partitions       int
	CreateSecs       float64
	Empty, Idle      int64 // before the topic, and idle with it
	Load             int64 // peak under the producer and consumer
	Produce, Consume throughput
	Errs             []string
}

func (c *cell) label() string {
	s := fmt.Sprintf("%s %s %dB", c.Kind, c.Topo, c.Size)
	switch {
	case strings.HasPrefix(c.Kind, "txn-"):
		s += " " + c.Acks // the mode (txn.go)
	case c.Acks != "":
		s += " acks=" + c.Acks
	}
	if c.Inflight > 0 && c.Kind == "e2e" {
		s += fmt.Sprintf(" inflight=%d", c.Inflight)
	}
	return s + " " + c.Client
}

// ok reports whether at least one run succeeded.
func (c *cell) ok() bool { return len(c.Runs) > 0 || len(c.Lat) > 0 }

// tput returns the median throughput of the runs.
func (c *cell) tput() throughput {
	var r, m []float64
	for _, t := range c.Runs {
		r, m = append(r, t.Records), append(m, t.MiB)
	}
	return throughput{Records: median(r), MiB: median(m)}
}

// lat returns the median of each percentile over the runs.
func (c *cell) lat() latency {
	var a, b, d []float64
	for _, l := range c.Lat {
		a, b, d = append(a, l.P50), append(b, l.P99), append(d, l.P999)
	}
	return latency{P50: median(a), P99: median(b), P999: median(d)}
}

func (c *cell) summary() string {
	if !c.ok() {
		return "FAILED: " + strings.Join(c.Errs, "; ")
	}
	if c.Kind == "e2e" || c.Kind == "rtt" {
		l := c.lat()
		return fmt.Sprintf("p50 %.2f ms, p99 %.2f ms, p99.9 %.2f ms (%d runs), RSS %d MiB", l.P50, l.P99, l.P999, len(c.Lat), c.RSS>>20)
	}
	t := c.tput()
	return fmt.Sprintf("%.0f rec/s, %.1f MiB/s (%d runs), RSS %d MiB", t.Records, t.MiB, len(c.Runs), c.RSS>>20)
}

// find returns the cell with these coordinates (the first one when
// several differ only in Inflight), or nil.
func (r *results) find(kind, sys, client string, topo topology, size int, acks string) *cell {
	return r.findInflight(kind, sys, client, topo, size, acks, -1)
}

// findInflight is find with an Inflight value (-1: any).
func (r *results) findInflight(kind, sys, client string, topo topology, size int, acks string, inflight int) *cell {
	for _, c := range r.Cells {
		if c.Kind == kind && c.System == sys && c.Client == client && c.Topo == topo && c.Size == size && c.Acks == acks &&
			(inflight < 0 || c.Inflight == inflight) {
			return c
		}
	}
	return nil
}

func median(v []float64) float64 {
	if len(v) == 0 {
		return 0
	}
	s := slices.Clone(v)
	slices.Sort(s)
	if len(s)%2 == 1 {
		return s[len(s)/2]
	}
	return (s[len(s)/2-1] + s[len(s)/2]) / 2
}

func loadAvg() string {
	b, err := os.ReadFile("/proc/loadavg")
	if err != nil {
		return "?"
	}
	f := strings.Fields(string(b))
	if len(f) < 3 {
		return "?"
	}
	return strings.Join(f[:3], " ")
}

func hostInfo() string {
	model := "unknown CPU"
	if b, err := os.ReadFile("/proc/cpuinfo"); err == nil {
		for _, line := range strings.Split(string(b), "\n") {
			if v, ok := strings.CutPrefix(line, "model name"); ok {
				model = strings.TrimSpace(strings.TrimPrefix(strings.TrimSpace(v), ":"))
				break
			}
		}
	}
	kernel := "?"
	if b, err := os.ReadFile("/proc/sys/kernel/osrelease"); err == nil {
		kernel = strings.TrimSpace(string(b))
	}
	return fmt.Sprintf("%d CPUs (%s), Linux %s, %s", runtime.NumCPU(), model, kernel, runtime.Version())
}
