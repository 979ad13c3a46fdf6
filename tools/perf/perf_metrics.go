package perf

// --print-metrics of the perf tools: Sarama's go-metrics registry printed in
// the layout of Kafka's ToolsUtils.printMetrics ("group:name:{tags} : value",
// sorted, padded to the longest name, floats with three decimals).
//
// Sarama's metric names map onto Kafka's groups: "<m>-for-broker-<id>" →
// <kind>-node-metrics with node-id=node-<id>, "<m>-for-topic-<t>" →
// <kind>-topic-metrics with topic=<t>, anything else → <kind>-metrics.
// Meters print <m>-rate (mean rate over the run; Sarama's meter names end in
// "-rate" already) and <m>-total, histograms <m>-avg and <m>-max, counters
// and gauges <m>.

import (
	"fmt"
	"io"
	"sort"
	"strings"

	metrics "github.com/rcrowley/go-metrics"
)

type metricLine struct {
	name  string
	value any // float64 prints %.3f, anything else %v
}

// printKafkaMetrics prints reg as Kafka's tools print client metrics. kind is
// "producer" or "consumer".
func printKafkaMetrics(w io.Writer, reg metrics.Registry, kind, clientID string) {
	writeKafkaMetrics(w, collectKafkaMetrics(reg, kind, clientID))
}

// collectKafkaMetrics snapshots reg (Sarama unregisters its metrics when the
// client closes, so tools snapshot before closing and print after).
func collectKafkaMetrics(reg metrics.Registry, kind, clientID string) []metricLine {
	var lines []metricLine
	reg.Each(func(name string, m any) {
		group, tags := kind+"-metrics", "{client-id="+clientID+"}"
		if base, id, ok := strings.Cut(name, "-for-broker-"); ok {
			group, tags, name = kind+"-node-metrics", "{client-id="+clientID+", node-id=node-"+id+"}", base
		} else if base, topic, ok := strings.Cut(name, "-for-topic-"); ok {
			group, tags, name = kind+"-topic-metrics", "{client-id="+clientID+", topic="+topic+"}", base
		}
		add := func(n string, v any) { lines = append(lines, metricLine{group + ":" + n + ":" + tags, v}) }
		switch m := m.(type) {
		case metrics.Meter:
			s := m.Snapshot()
			base := strings.TrimSuffix(name, "-rate")
			add(base+"-rate", s.RateMean())
			add(base+"-total", float64(s.Count()))
		case metrics.Histogram:
			s := m.Snapshot()
			add(name+"-avg", s.Mean())
			add(name+"-max", float64(s.Max()))
		case metrics.Counter:
			add(name, float64(m.Count()))
		case metrics.Gauge:
			add(name, m.Value())
		case metrics.GaugeFloat64:
			add(name, m.Value())
		}
	})
	sort.Slice(lines, func(i, j int) bool { return lines[i].name < lines[j].name })
	return lines
}

// writeKafkaMetrics prints snapshotted metrics in ToolsUtils.printMetrics'
// layout.
func writeKafkaMetrics(w io.Writer, lines []metricLine) {
	width := 0
	for _, l := range lines {
		width = max(width, len(l.name))
	}
	fmt.Fprintf(w, "\n%-*s   %s\n", width, "Metric Name", "Value")
	for _, l := range lines {
		if f, ok := l.value.(float64); ok {
			fmt.Fprintf(w, "%-*s : %s\n", width, l.name, javaFixed(f, 3))
		} else {
			fmt.Fprintf(w, "%-*s : %v\n", width, l.name, l.value)
		}
	}
}
