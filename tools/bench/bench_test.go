package main

import (
	"encoding/xml"
	"flag"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

func TestToolBenchParseProducerTotal(t *testing.T) {
	out := "50000 records sent, 9999.0 records/sec (0.95 MB/sec), 1.0 ms avg latency, 5.0 ms max latency.\n" +
		"100000 records sent, 751992.780869 records/sec (71.72 MB/sec), 7.00 ms avg latency, 230.00 ms max latency, " +
		"4 ms 50th, 29 ms 95th, 53 ms 99th, 68 ms 99.9th.\n"
	got, err := parseProducerTotal(out, 100000)
	if err != nil || got.Records != 751992.780869 || got.MiB != 71.72 {
		t.Fatalf("parseProducerTotal = %+v, %v", got, err)
	}
	if _, err := parseProducerTotal(out, 200000); err == nil {
		t.Fatal("a short run was accepted")
	}
	if _, err := parseProducerTotal("no summary", 1); err == nil {
		t.Fatal("output without a total line was accepted")
	}
}

func TestToolBenchParseConsumerLine(t *testing.T) {
	out := "2026-11-29 10:00:00:000, 2026-11-29 10:00:01:000, 95.3674, 95.3674, 1000000, 1000000.0000, 0, 1000, 95.3674, 1000000.0000\n"
	got, err := parseConsumerLine(out, 1000000)
	if err != nil || got.MiB != 95.3674 || got.Records != 1000000 {
		t.Fatalf("parseConsumerLine = %+v, %v", got, err)
	}
	if _, err := parseConsumerLine(out, 1000001); err == nil {
		t.Fatal("a short read was accepted")
	}
	if _, err := parseConsumerLine("WARNING: Exiting before consuming the expected number of messages", 1); err == nil {
		t.Fatal("a warning line was accepted")
	}
}

func TestToolBenchMedian(t *testing.T) {
	for _, c := range []struct {
		in   []float64
		want float64
	}{{nil, 0}, {[]float64{3}, 3}, {[]float64{5, 1, 3}, 3}, {[]float64{4, 1, 3, 2}, 2.5}} {
		if got := median(c.in); got != c.want {
			t.Errorf("median(%v) = %v, want %v", c.in, got, c.want)
		}
	}
}

// sampleResults is a small complete result set.
func sampleResults() *results {
	r := &results{Start: time.Unix(1_800_000_000, 0), End: time.Unix(1_800_000_300, 0), Host: "test",
		Opts:   options{repeats: 1, records100: 10, records1k: 5, e2eSecs: 1, widePartitions: 1000},
		Limits: Limits{LoopbackTCP: 2000, WriteNoSync: 900, WriteNewPage: 400, WriteSync16K: 60, Syncs16K: 4000}}
	for _, sys := range []string{"samsa", "kfake"} {
		for _, topo := range []topology{{1, 1}, {3, 3}} {
			r.Cells = append(r.Cells,
				&cell{Kind: "produce", System: sys, Client: "kgo", Topo: topo, Size: 100, Acks: "1", Runs: []throughput{{1000, 10}}},
				&cell{Kind: "produce", System: sys, Client: "kgo", Topo: topo, Size: 100, Acks: "all", Runs: []throughput{{500, 5}}},
				&cell{Kind: "consume", System: sys, Client: "sarama", Topo: topo, Size: 100, Errs: []string{"boom"}},
				&cell{Kind: "e2e", System: sys, Client: "kgo", Topo: topo, Size: 100, Acks: "all", Inflight: 5,
					Lat: []latency{{P50: 0.5, P99: 2, P999: 9}}})
		}
		r.Mem = append(r.Mem, &memCell{System: sys, Partitions: 1000, Idle: 30 << 20, Load: 50 << 20})
	}
	return r
}

func TestToolBenchReportReplacesOnlyItsSection(t *testing.T) {
	path := filepath.Join(t.TempDir(), "benchmarks.md")
	head := "# Benchmarks\n\n## Storage\n\nhand-written\n"
	if err := os.WriteFile(path, []byte(head), 0o644); err != nil {
		t.Fatal(err)
	}
	r := sampleResults()
	if err := writeReport(path, r); err != nil {
		t.Fatal(err)
	}
	tail := "\n### Notes by hand\n"
	b, _ := os.ReadFile(path)
	if err := os.WriteFile(path, append(b, tail...), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := writeReport(path, r); err != nil {
		t.Fatal(err)
	}
	b, _ = os.ReadFile(path)
	s := string(b)
	if !strings.HasPrefix(s, head) || !strings.HasSuffix(s, tail) || strings.Count(s, beginMarker) != 1 {
		t.Fatalf("report did not keep the hand-written parts:\n%s", s)
	}
	for _, want := range []string{"| 1 broker(s), RF=1 | 100 B | 1 | kgo | 1000 | 10.0 | 1000 | 10.0 | 1.00× |",
		"samsa consume 1 broker(s), RF=1 100B sarama: boom", "| broker RSS ≤ 256 MiB under load with 1000 partitions | 50 MiB peak"} {
		if !strings.Contains(s, want) {
			t.Errorf("report lacks %q", want)
		}
	}
}

func TestToolBenchSVGIsWellFormed(t *testing.T) {
	svg := renderSVG(sampleResults())
	d := xml.NewDecoder(strings.NewReader(svg))
	for {
		_, err := d.Token()
		if err != nil {
			if err != io.EOF {
				t.Fatalf("SVG does not parse: %v", err)
			}
			break
		}
	}
	if !strings.Contains(svg, "<svg") || strings.Count(svg, "<rect") < 10 {
		t.Fatalf("SVG has too little in it:\n%s", svg)
	}
}

func TestToolBenchParseStatCPU(t *testing.T) {
	// A command name with spaces and parentheses: fields count from the last ')'.
	stat := "4242 (sam sa) (x)) S 1 4242 4242 0 -1 4194560 900 0 0 0 150 50 0 0 20 0 12 0 100 1000 200\n"
	got, err := parseStatCPU(stat)
	if err != nil || got != 2.0 {
		t.Fatalf("parseStatCPU = %v, %v; want 2.0 s (150+50 ticks)", got, err)
	}
	if _, err := parseStatCPU("4242 (samsa) S 1 2"); err == nil {
		t.Fatal("a short stat line was accepted")
	}
	if _, err := parseStatCPU("no parenthesis"); err == nil {
		t.Fatal("a stat line without a command name was accepted")
	}
}

var updateGolden = flag.Bool("update", false, "rewrite testdata/report.golden.md and testdata/chart.golden.svg")

// goldenResults is sampleResults with every section filled: round trips,
// transactions, 1 KiB cells, a failed memory load and quick mode.
func goldenResults() *results {
	r := sampleResults()
	r.Opts.quick, r.Opts.work, r.Opts.zk, r.Opts.systems = true, "/tmp/w", "localhost:2181", []string{"samsa", "kfake"}
	r.LoadBefore, r.LoadAfter = "1.00 0.50 0.25", "2.00 1.50 1.25"
	for _, sys := range []string{"samsa", "kfake"} {
		for _, topo := range []topology{{1, 1}, {3, 3}} {
			r.Cells = append(r.Cells,
				&cell{Kind: "produce", System: sys, Client: "sarama", Topo: topo, Size: 1024, Acks: "all", Runs: []throughput{{200, 20}, {300, 30}}, RSS: 64 << 20},
				&cell{Kind: "consume", System: sys, Client: "kgo", Topo: topo, Size: 1024, Runs: []throughput{{900, 90}}, RSS: 32 << 20},
				&cell{Kind: "rtt", System: sys, Client: "kgo", Topo: topo, Size: 100, Acks: "all", Inflight: 1,
					Lat: []latency{{P50: 0.3, P99: 1.1, P999: 4}, {P50: 0.4, P99: 1.3, P999: 5}}},
				&cell{Kind: "txn-produce", System: sys, Client: "kgo", Topo: topo, Size: 100, Acks: modeIdempotent, Runs: []throughput{{800, 8}}},
				&cell{Kind: "txn-produce", System: sys, Client: "kgo", Topo: topo, Size: 100, Acks: modeTransactional, Runs: []throughput{{600, 6}}},
				&cell{Kind: "txn-consume", System: sys, Client: "kgo", Topo: topo, Size: 100, Acks: modeUncommitted, Runs: []throughput{{700, 7}}},
				&cell{Kind: "txn-consume", System: sys, Client: "kgo", Topo: topo, Size: 100, Acks: modeCommitted, Errs: []string{"a|b"}})
		}
		if sys == "samsa" {
			r.Cells = append(r.Cells, &cell{Kind: "e2e", System: sys, Client: "kgo", Topo: topology{3, 3}, Size: 100, Acks: "all", Inflight: 1,
				Lat: []latency{{P50: 2000, P99: 0.01, P999: 12}}})
		}
	}
	r.Mem[1].Errs = []string{"timeout"}
	r.Mem[0].Empty, r.Mem[0].CreateSecs, r.Mem[0].Produce, r.Mem[0].Consume = 10<<20, 1.25, throughput{5000, 0.5}, throughput{6000, 0.6}
	return r
}

// TestToolBenchGolden pins the generated markdown section and chart to
// exact bytes, so that refactoring the renderers cannot change them
// unnoticed (go test ./tools/bench/ -run Golden -update rewrites them).
func TestToolBenchGolden(t *testing.T) {
	r := goldenResults()
	for _, g := range []struct{ file, got string }{
		{"testdata/report.golden.md", renderReport(r)},
		{"testdata/chart.golden.svg", renderSVG(r)},
	} {
		if *updateGolden {
			if err := os.WriteFile(g.file, []byte(g.got), 0o644); err != nil {
				t.Fatal(err)
			}
			continue
		}
		want, err := os.ReadFile(g.file)
		if err != nil {
			t.Fatal(err)
		}
		if g.got != string(want) {
			t.Errorf("%s differs from the rendered output (rerun with -update only if the change is meant):\n%s", g.file, g.got)
		}
	}
}
