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

// svgCanvas is the chart being drawn: its body and the y of the next row.
type svgCanvas struct {
	body strings.Builder
	y    int
}

func (c *svgCanvas) w(format string, args ...any) { fmt.Fprintf(&c.body, format, args...) }

func (c *svgCanvas) text(x, y int, anchor, weight, s string) {
	c.w(`<text x="%d" y="%d" text-anchor="%s" font-weight="%s">%s</text>`+"\n", x, y, anchor, weight, esc(s))
}

// renderSVG draws the results as a self-contained SVG: throughput bars
// (Samsa and kfake per workload, with the ratio), e2e latency percentiles
// on a log scale, and broker memory.
func renderSVG(r *results) string {
	c := &svgCanvas{y: 40}
	c.text(10, 20, "start", "bold", fmt.Sprintf("Samsa (blue) vs kfake (grey), %s, median of %d run(s) — %s",
		r.Start.UTC().Format("2006-01-02 15:04 UTC"), r.Opts.repeats, r.Host))
	c.throughput(r)
	c.latency(r)
	c.memory(r)
	return fmt.Sprintf(`<svg xmlns="http://www.w3.org/2000/svg" width="%d" height="%d" viewBox="0 0 %d %d" font-family="sans-serif" font-size="11">
<rect width="100%%" height="100%%" fill="white"/>
%s</svg>
`, svgWidth, c.y, svgWidth, c.y, c.body.String())
}

// svgRow is one throughput workload: Samsa's and kfake's MiB/s.
type svgRow struct {
	label string
	s, k  float64
}

// svgThroughputRows pairs every Samsa produce, then consume, cell with
// kfake's cell of the same workload.
func svgThroughputRows(r *results) []svgRow {
	var rows []svgRow
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
			rows = append(rows, svgRow{lbl + " " + c.Client, val(c), val(k)})
		}
	}
	return rows
}

// throughput draws two bars per workload on a linear scale up to the
// largest figure, with the Samsa/kfake ratio at the right.
func (c *svgCanvas) throughput(r *results) {
	rows := svgThroughputRows(r)
	maxV := 1.0
	for _, rw := range rows {
		maxV = max(maxV, rw.s, rw.k)
	}
	c.y += 10
	c.text(10, c.y, "start", "bold", fmt.Sprintf("Throughput, MiB/s (bar scale 0–%.0f); number = Samsa/kfake", maxV))
	c.y += 10
	for _, rw := range rows {
		c.text(svgLabelW-6, c.y+svgBarH+3, "end", "normal", rw.label)
		for i, v := range []float64{rw.s, rw.k} {
			color := samsaColor
			if i == 1 {
				color = kfakeColor
			}
			bw := int(math.Round(v / maxV * svgBarMaxW))
			c.w(`<rect x="%d" y="%d" width="%d" height="%d" fill="%s"/>`+"\n", svgLabelW, c.y+i*svgBarH, bw, svgBarH-1, color)
			c.text(svgLabelW+bw+4, c.y+i*svgBarH+8, "start", "normal", fmt.Sprintf("%.1f", v))
		}
		c.text(svgWidth-10, c.y+svgBarH+3, "end", "bold", ratio(rw.s, rw.k))
		c.y += 2*svgBarH + 6
	}
}

// svgLogX is the bar width of ms on the latency chart's log scale,
// 0.1 ms .. 1000 ms.
func svgLogX(ms float64) int {
	ms = min(max(ms, 0.1), 1000)
	return int(math.Round((math.Log10(ms) + 1) / 4 * svgBarMaxW))
}

// latency draws p50, p99 and p99.9 of every e2e cell, with marks at 1, 3
// and 10 ms.
func (c *svgCanvas) latency(r *results) {
	c.y += 20
	c.text(10, c.y, "start", "bold", "End-to-end latency at 10,000 records/s, ms (log scale 0.1–1000): p50, p99, p99.9")
	c.y += 10
	for _, cl := range r.Cells {
		if cl.Kind != "e2e" || len(cl.Lat) == 0 {
			continue
		}
		l := cl.lat()
		color := samsaColor
		if cl.System == "kfake" {
			color = kfakeColor
		}
		c.text(svgLabelW-6, c.y+3*svgBarH/2+3, "end", "normal", fmt.Sprintf("%s %db RF%d acks=%s inflight=%d", cl.System, cl.Topo.Brokers, cl.Topo.RF, cl.Acks, cl.Inflight))
		for i, v := range []float64{l.P50, l.P99, l.P999} {
			bw := svgLogX(v)
			op := []string{"1", "0.7", "0.45"}[i]
			c.w(`<rect x="%d" y="%d" width="%d" height="%d" fill="%s" fill-opacity="%s"/>`+"\n", svgLabelW, c.y+i*svgBarH, bw, svgBarH-1, color, op)
			c.text(svgLabelW+bw+4, c.y+i*svgBarH+8, "start", "normal", fmt.Sprintf("%.2f", v))
		}
		c.y += 3*svgBarH + 6
	}
	for _, ms := range []float64{1, 3, 10} {
		x := svgLabelW + svgLogX(ms)
		c.w(`<line x1="%d" y1="%d" x2="%d" y2="%d" stroke="#c53030" stroke-dasharray="3,3"/>`+"\n", x, c.y-2, x, c.y+6)
		c.text(x, c.y+16, "middle", "normal", fmt.Sprintf("%g ms", ms))
	}
	c.y += 30
}

// memory draws each system's idle and loaded RSS on a 0–512 MiB scale,
// with the 256 MiB target line.
func (c *svgCanvas) memory(r *results) {
	c.text(10, c.y, "start", "bold", fmt.Sprintf("Broker RSS with %d partitions, MiB (bar scale 0–512; target line 256)", r.Opts.widePartitions))
	c.y += 10
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
			c.text(svgLabelW-6, c.y+8, "end", "normal", lbl)
			c.w(`<rect x="%d" y="%d" width="%d" height="%d" fill="%s"/>`+"\n", svgLabelW, c.y, bw, svgBarH, color)
			c.text(svgLabelW+bw+4, c.y+8, "start", "normal", fmt.Sprintf("%.0f", mb))
			c.y += svgBarH + 5
		}
	}
	x := svgLabelW + svgBarMaxW/2
	c.w(`<line x1="%d" y1="%d" x2="%d" y2="%d" stroke="#c53030" stroke-dasharray="3,3"/>`+"\n", x, c.y-4*(svgBarH+5)-4, x, c.y)
	c.y += 20
}

func esc(s string) string {
	return strings.NewReplacer("&", "&amp;", "<", "&lt;", ">", "&gt;").Replace(s)
}
