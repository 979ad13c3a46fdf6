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
	for _, kind := range []string{"produce", "consume"} {
		var met, total int
		worst, worstLabel := 0.0, ""
		var all []float64
		for _, c := range r.Cells {
			if c.Kind != kind || c.System != "samsa" {
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
		verdict := "no data"
		if total > 0 {
			verdict = fmt.Sprintf("met in %d of %d", met, total)
			if met < total {
				verdict += fmt.Sprintf("; missed by up to %.0f %%", 100*(1-worst))
			}
		}
		w("| %s ≥ 1.0× kfake (every figure) | median ratio %.2f×, worst %.2f× (%s) | %s |\n",
			kind, median(all), worst, worstLabel, verdict)
	}
	for _, size := range []int{100, 1024} {
		for _, client := range []string{"sarama", "kgo"} {
			all := r.find("produce", "samsa", client, topology{3, 3}, size, "all")
			one := r.find("produce", "samsa", client, topology{1, 1}, size, "1")
			if val(all) == 0 || val(one) == 0 {
				w("| acks=all RF=3 ≥ 0.5× acks=1 RF=1 (%d B, %s) | failed run | no data |\n", size, client)
				continue
			}
			q := val(all) / val(one)
			w("| acks=all RF=3 ≥ 0.5× acks=1 RF=1 (%d B, %s) | %.1f / %.1f MiB/s = %.2f× | %s |\n",
				size, client, val(all), val(one), q, verdictMin(q, 0.5))
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
