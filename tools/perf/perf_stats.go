package perf

// Kafka 2.8 ProducerPerformance's Stats and ThroughputThrottler, kept to the
// letter: integer-millisecond latencies, a sample of at most ~500,000
// latencies for the percentiles, MB = MiB of payload, the window line
// printed from the completion that crosses the 5 s mark.

import (
	"fmt"
	"io"
	"math"
	"sort"
	"strconv"
	"strings"
	"sync"
)

// perfReportingInterval is ProducerPerformance's reportingInterval (ms).
const perfReportingInterval = 5000

// producerStats is ProducerPerformance.Stats. Completions arrive from the
// producer's goroutine and the summary from the sender, so every method
// locks mu.
type producerStats struct {
	mu          sync.Mutex
	out         io.Writer // guarded by mu
	start       int64     // ms
	windowStart int64     // guarded by mu
	latencies   []int32   // guarded by mu
	sampling    int64
	index       int   // guarded by mu
	count       int64 // guarded by mu
	bytes       int64 // guarded by mu
	maxLatency  int32 // guarded by mu
	totalLat    int64 // guarded by mu
	wCount      int64 // guarded by mu
	wMaxLatency int32 // guarded by mu
	wTotalLat   int64 // guarded by mu
	wBytes      int64 // guarded by mu
	interval    int64
	nowMs       func() int64
}

func newProducerStats(numRecords int64, interval int64, out io.Writer, nowMs func() int64) *producerStats {
	sampling := numRecords / min(numRecords, 500000)
	now := nowMs()
	return &producerStats{
		out: out, start: now, windowStart: now,
		sampling:  sampling,
		latencies: make([]int32, numRecords/sampling+1),
		interval:  interval, nowMs: nowMs,
	}
}

// record is Stats.record, called on each completion at time nowMs.
func (s *producerStats) record(iter int64, latency int32, bytes int, nowMs int64) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.count++
	s.bytes += int64(bytes)
	s.totalLat += int64(latency)
	s.maxLatency = max(s.maxLatency, latency)
	s.wCount++
	s.wBytes += int64(bytes)
	s.wTotalLat += int64(latency)
	s.wMaxLatency = max(s.wMaxLatency, latency)
	if iter%s.sampling == 0 && s.index < len(s.latencies) {
		s.latencies[s.index] = latency
		s.index++
	}
	if nowMs-s.windowStart >= s.interval {
		s.printWindowLocked()
		s.windowStart = s.nowMs()
		s.wCount, s.wMaxLatency, s.wTotalLat, s.wBytes = 0, 0, 0, 0
	}
}

func (s *producerStats) printWindowLocked() {
	elapsed := float64(s.nowMs() - s.windowStart)
	fmt.Fprintf(s.out, "%d records sent, %s records/sec (%s MB/sec), %s ms avg latency, %s ms max latency.\n",
		s.wCount, javaFixed(1000.0*float64(s.wCount)/elapsed, 1), javaFixed(1000.0*float64(s.wBytes)/elapsed/(1024.0*1024.0), 2),
		javaFixed(float64(s.wTotalLat)/float64(s.wCount), 1), javaFixed(float64(s.wMaxLatency), 1))
}

// printTotal is Stats.printTotal.
func (s *producerStats) printTotal() {
	s.mu.Lock()
	defer s.mu.Unlock()
	elapsed := float64(s.nowMs() - s.start)
	size := min(s.index, len(s.latencies))
	sorted := s.latencies[:size]
	sort.Slice(sorted, func(i, j int) bool { return sorted[i] < sorted[j] })
	pct := func(p float64) int32 { return s.latencies[int(p*float64(size))] }
	fmt.Fprintf(s.out, "%d records sent, %s records/sec (%s MB/sec), %s ms avg latency, %s ms max latency, %d ms 50th, %d ms 95th, %d ms 99th, %d ms 99.9th.\n",
		s.count, javaFixed(1000.0*float64(s.count)/elapsed, 6), javaFixed(1000.0*float64(s.bytes)/elapsed/(1024.0*1024.0), 2),
		javaFixed(float64(s.totalLat)/float64(s.count), 2), javaFixed(float64(s.maxLatency), 2),
		pct(0.5), pct(0.95), pct(0.99), pct(0.999))
}

// javaFixed formats f as Java's String.format("%.Nf") does, including
// Infinity and NaN for divisions by a zero elapsed time.
func javaFixed(f float64, decimals int) string {
	switch {
	case math.IsNaN(f):
		return "NaN"
	case math.IsInf(f, 1):
		return "Infinity"
	case math.IsInf(f, -1):
		return "-Infinity"
	}
	// Java rounds the shortest decimal representation half up (Go's %f
	// rounds the exact binary value half to even): round the digits.
	neg := f < 0
	digits := strconv.FormatFloat(math.Abs(f), 'f', -1, 64)
	intPart, frac, _ := strings.Cut(digits, ".")
	if len(frac) <= decimals {
		frac += strings.Repeat("0", decimals-len(frac))
	} else {
		roundUp := frac[decimals] >= '5'
		frac = frac[:decimals]
		if roundUp {
			b := []byte(intPart + frac)
			k := len(b) - 1
			for ; k >= 0 && b[k] == '9'; k-- {
				b[k] = '0'
			}
			if k < 0 {
				b = append([]byte{'1'}, b...)
			} else {
				b[k]++
			}
			intPart, frac = string(b[:len(b)-decimals]), string(b[len(b)-decimals:])
		}
	}
	out := intPart
	if decimals > 0 {
		out += "." + frac
	}
	if neg && strings.Trim(out, "0.") != "" {
		out = "-" + out
	}
	return out
}
