package main

import (
	"fmt"
	"math"
	"strings"
)

// Chart layout (pixels).
const (
	svgWidth   = 900
	svgLabelW  = 250
	svgBarMaxW = 520
	svgBarH    = 9
	samsaColor = "#2b6cb0"
	kfakeColor = "#a0aec0"
)

// renderSVG draws the results as a self-contained SVG: throughput bars
// (Samsa and kfake per workload, with the ratio), e2e latency percentiles
// on a log scale, and broker memory.
func renderSVG(r *results) string {
	var body strings.Builder
	y := 40
	w := func(format string, args ...any) { fmt.Fprintf(&body, format, args...) }
	text := func(x, y int, anchor, weight, s string) {
		w(`<text x="%d" y="%d" text-anchor="%s" font-weight="%s">%s</text>`+"\n", x, y, anchor, weight, esc(s))
	}
	text(10, 20, "start", "bold", fmt.Sprintf("Samsa (blue) vs kfake (grey), %s, median of %d run(s) — %s",
		r.Start.UTC().Format("2006-01-02 15:04 UTC"), r.Opts.repeats, r.Host))

	// Throughput.
	type row struct {
		label string
		s, k  float64
	}
	var rows []row
	for _, kind := range []string{"produce", "consume"} {
		for _, c := range r.Cells {
			if c.Kind != kind || c.System != "samsa" {
				continue
			}
			k := r.find(kind, "kfake", c.Client, c.Topo, c.Size, c.Acks)
			lbl := fmt.Sprintf("%s %db RF%d %dB", kind, c.Topo.Brokers, c.Topo.RF, c.Size)
			if c.Acks != "" {
				lbl += " acks=" + c.Acks
			}
			rows = append(rows, row{lbl + " " + c.Client, val(c), val(k)})
		}
	}
	maxV := 1.0
	for _, rw := range rows {
		maxV = max(maxV, rw.s, rw.k)
	}
	y += 10
	text(10, y, "start", "bold", fmt.Sprintf("Throughput, MiB/s (bar scale 0–%.0f); number = Samsa/kfake", maxV))
	y += 10
	for _, rw := range rows {
		text(svgLabelW-6, y+svgBarH+3, "end", "normal", rw.label)
		for i, v := range []float64{rw.s, rw.k} {
			color := samsaColor
			if i == 1 {
				color = kfakeColor
			}
			bw := int(math.Round(v / maxV * svgBarMaxW))
			w(`<rect x="%d" y="%d" width="%d" height="%d" fill="%s"/>`+"\n", svgLabelW, y+i*svgBarH, bw, svgBarH-1, color)
			text(svgLabelW+bw+4, y+i*svgBarH+8, "start", "normal", fmt.Sprintf("%.1f", v))
		}
		text(svgWidth-10, y+svgBarH+3, "end", "bold", ratio(rw.s, rw.k))
		y += 2*svgBarH + 6
	}

	// Latency, log scale 0.1 ms .. 1000 ms.
	y += 20
	text(10, y, "start", "bold", "End-to-end latency at 10,000 records/s, ms (log scale 0.1–1000): p50, p99, p99.9")
	y += 10
	logX := func(ms float64) int {
		ms = min(max(ms, 0.1), 1000)
		return int(math.Round((math.Log10(ms) + 1) / 4 * svgBarMaxW))
	}
	for _, c := range r.Cells {
		if c.Kind != "e2e" || len(c.Lat) == 0 {
			continue
		}
		l := c.lat()
		color := samsaColor
		if c.System == "kfake" {
			color = kfakeColor
		}
		text(svgLabelW-6, y+3*svgBarH/2+3, "end", "normal", fmt.Sprintf("%s %db RF%d acks=%s inflight=%d", c.System, c.Topo.Brokers, c.Topo.RF, c.Acks, c.Inflight))
		for i, v := range []float64{l.P50, l.P99, l.P999} {
			bw := logX(v)
			op := []string{"1", "0.7", "0.45"}[i]
			w(`<rect x="%d" y="%d" width="%d" height="%d" fill="%s" fill-opacity="%s"/>`+"\n", svgLabelW, y+i*svgBarH, bw, svgBarH-1, color, op)
			text(svgLabelW+bw+4, y+i*svgBarH+8, "start", "normal", fmt.Sprintf("%.2f", v))
		}
		y += 3*svgBarH + 6
	}
	for _, ms := range []float64{1, 3, 10} {
		x := svgLabelW + logX(ms)
		w(`<line x1="%d" y1="%d" x2="%d" y2="%d" stroke="#c53030" stroke-dasharray="3,3"/>`+"\n", x, y-2, x, y+6)
		text(x, y+16, "middle", "normal", fmt.Sprintf("%g ms", ms))
	}
	y += 30

	// Memory.
	text(10, y, "start", "bold", fmt.Sprintf("Broker RSS with %d partitions, MiB (bar scale 0–512; target line 256)", r.Opts.widePartitions))
	y += 10
	for _, m := range r.Mem {
		color := samsaColor
		if m.System == "kfake" {
			color = kfakeColor
		}
		for i, v := range []int64{m.Idle, m.Load} {
			lbl := m.System + " idle"
			if i == 1 {
				lbl = m.System + " under load"
			}
			mb := float64(v) / (1 << 20)
			bw := int(math.Round(min(mb, 512) / 512 * svgBarMaxW))
			text(svgLabelW-6, y+8, "end", "normal", lbl)
			w(`<rect x="%d" y="%d" width="%d" height="%d" fill="%s"/>`+"\n", svgLabelW, y, bw, svgBarH, color)
			text(svgLabelW+bw+4, y+8, "start", "normal", fmt.Sprintf("%.0f", mb))
			y += svgBarH + 5
		}
	}
	x := svgLabelW + svgBarMaxW/2
	w(`<line x1="%d" y1="%d" x2="%d" y2="%d" stroke="#c53030" stroke-dasharray="3,3"/>`+"\n", x, y-4*(svgBarH+5)-4, x, y)
	y += 20
	return fmt.Sprintf(`<svg xmlns="http://www.w3.org/2000/svg" width="%d" height="%d" viewBox="0 0 %d %d" font-family="sans-serif" font-size="11">
<rect width="100%%" height="100%%" fill="white"/>
%s</svg>
`, svgWidth, y, svgWidth, y, body.String())
}

func esc(s string) string {
	return strings.NewReplacer("&", "&amp;", "<", "&lt;", ">", "&gt;").Replace(s)
}
