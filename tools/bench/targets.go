package main

import (
	"fmt"
	"strings"
)

// renderTargets writes the targets with the measured values: met
// or missed, and by how much.
func renderTargets(b *strings.Builder, r *results) {
	w := func(format string, args ...any) { fmt.Fprintf(b, format, args...) }
	w("### Targets\n\n| target | measured | verdict |\n|---|---|---|\n")
	for _, topo := range []topology{{1, 1}, {3, 3}} {
		for _, kind := range []string{"produce", "consume"} {
			renderKfakeTarget(w, r, kind, topo)
		}
	}
	for _, size := range []int{100, 1024} {
		for _, client := range []string{"sarama", "kgo"} {
			all := r.find("produce", "samsa", client, topology{3, 3}, size, "all")
			one := r.find("produce", "samsa", client, topology{1, 1}, size, "1")
			// Issue 18's ceiling-based targets: at RF 3 each byte is copied
			// about 9 times on this one host against 3 at RF 1.
			target := 0.5
			if size == 1024 {
				target = 0.3
			}
			if val(all) == 0 || val(one) == 0 {
				w("| acks=all RF=3 ≥ %.1f× acks=1 RF=1 (%d B, %s) | failed run | no data |\n", target, size, client)
				continue
			}
			q := val(all) / val(one)
			w("| acks=all RF=3 ≥ %.1f× acks=1 RF=1 (%d B, %s) | %.1f / %.1f MiB/s = %.2f× | %s |\n",
				target, size, client, val(all), val(one), q, verdictMin(q, target))
		}
	}
	if e := r.findInflight("e2e", "samsa", "kgo", topology{3, 3}, 100, "all", 5); e != nil && len(e.Lat) > 0 {
		l := e.lat()
		w("| e2e p99 ≤ 3 ms at 10k msgs/s, acks=all RF=3 | %.2f ms | %s |\n", l.P99, verdictMax(l.P99, 3))
		w("| e2e p99.9 ≤ 10 ms at 10k msgs/s, acks=all RF=3 | %.2f ms | %s |\n", l.P999, verdictMax(l.P999, 10))
	} else {
		w("| e2e at 10k msgs/s, acks=all RF=3 | failed run | no data |\n")
	}
	for _, m := range r.Mem {
		if m.System != "samsa" {
			continue
		}
		v := float64(m.Load) / (1 << 20)
		w("| broker RSS ≤ 256 MiB under load with %d partitions | %.0f MiB peak (idle %s MiB) | %s |\n",
			m.Partitions, v, mib(m.Idle), verdictMax(v, 256))
	}
	var peak int64
	for _, c := range r.Cells {
		if c.System == "samsa" {
			peak = max(peak, c.RSS)
		}
	}
	w("| (for reference) largest Samsa broker RSS in any run above | %s MiB | — |\n", mib(peak))
}

// renderKfakeTarget writes Samsa against kfake for one kind of cell on one
// cluster shape. Issue 18 sets the target (≥ 1.0× in every figure) at
// RF 1 only: kfake replicates nothing, so at RF 3 the ratio is shown for
// reference and judged against RF 1 instead (the acks=all rows).
func renderKfakeTarget(w func(string, ...any), r *results, kind string, topo topology) {
	var met, total int
	worst, worstLabel := 0.0, ""
	var all []float64
	for _, c := range r.Cells {
		if c.Kind != kind || c.System != "samsa" || c.Topo != topo {
			continue
		}
		k := r.find(kind, "kfake", c.Client, c.Topo, c.Size, c.Acks)
		if val(c) == 0 || val(k) == 0 {
			continue
		}
		q := val(c) / val(k)
		all = append(all, q)
		total++
		if q >= 1 {
			met++
		}
		if worstLabel == "" || q < worst {
			worst, worstLabel = q, c.label()
		}
	}
	if topo.RF > 1 {
		if total > 0 {
			w("| (for reference) %s at %s against kfake | median ratio %.2f×, worst %.2f× (%s) | — |\n", kind, topo, median(all), worst, worstLabel)
		}
		return
	}
	verdict := "no data"
	if total > 0 {
		verdict = fmt.Sprintf("met in %d of %d", met, total)
		if met < total {
			verdict += fmt.Sprintf("; missed by up to %.0f %%", 100*(1-worst))
		}
	}
	w("| %s at %s ≥ 1.0× kfake (every figure) | median ratio %.2f×, worst %.2f× (%s) | %s |\n",
		kind, topo, median(all), worst, worstLabel, verdict)
}

func verdictMin(v, target float64) string {
	if v >= target {
		return "met"
	}
	return fmt.Sprintf("missed by %.0f %%", 100*(target-v)/target)
}

func verdictMax(v, target float64) string {
	if v <= target {
		return "met"
	}
	return fmt.Sprintf("missed: %.1f× the target", v/target)
}
