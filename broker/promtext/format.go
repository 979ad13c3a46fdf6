package promtext

import (
	"bufio"
	"io"
	"math"
	"sort"
	"strconv"

	metrics "github.com/rcrowley/go-metrics"
)

// Quantiles are the summary quantiles written for histograms and timers
// (those of Kafka's Yammer histograms).
var quantiles = []float64{0.5, 0.75, 0.95, 0.98, 0.99, 0.999}

// sample is one line of a family: a suffix of the family name, labels and
// a value.
type sample struct {
	suffix string
	labels []label
	value  float64
}

// family is one Prometheus metric family.
type family struct {
	name    string // with the kind's suffix (_total, _rate, _seconds)
	kind    string // counter, gauge, summary
	help    string
	samples []sample
}

// collector gathers families from the registry.
type collector struct {
	fams map[string]*family
}

func (c *collector) add(name, kind, help string, s sample) {
	f := c.fams[name]
	if f == nil {
		f = &family{name: name, kind: kind, help: help}
		c.fams[name] = f
	}
	if f.kind != kind {
		return // a different kind already owns this name
	}
	f.samples = append(f.samples, s)
}

func withLabel(ls []label, name, value string) []label {
	out := make([]label, 0, len(ls)+1)
	out = append(out, ls...)
	return append(out, label{name: name, value: value})
}

func (c *collector) meter(base, reg string, ls []label, count int64, r1, r5, r15, mean float64) {
	c.add(base+"_total", "counter", reg+" (count)", sample{labels: ls, value: float64(count)})
	for _, w := range []struct {
		name string
		v    float64
	}{{"15m", r15}, {"1m", r1}, {"5m", r5}, {"mean", mean}} {
		c.add(base+"_rate", "gauge", reg+" (events per second)", sample{labels: withLabel(ls, "window", w.name), value: w.v})
	}
}

func (c *collector) summary(name, reg string, ls []label, ps []float64, sum float64, count int64) {
	for i, q := range quantiles {
		c.add(name, "summary", reg, sample{labels: withLabel(ls, "quantile", strconv.FormatFloat(q, 'g', -1, 64)), value: ps[i]})
	}
	c.add(name, "summary", reg, sample{suffix: "_sum", labels: ls, value: sum})
	c.add(name, "summary", reg, sample{suffix: "_count", labels: ls, value: float64(count)})
}

func (c *collector) collect(reg string, m any) {
	base, ls, help := splitNameHelp(reg)
	reg = help
	switch x := m.(type) {
	case metrics.Counter:
		c.add(base+"_total", "counter", reg, sample{labels: ls, value: float64(x.Count())})
	case metrics.Gauge:
		c.add(base, "gauge", reg, sample{labels: ls, value: float64(x.Value())})
	case metrics.GaugeFloat64:
		c.add(base, "gauge", reg, sample{labels: ls, value: x.Value()})
	case metrics.Meter:
		s := x.Snapshot()
		c.meter(base, reg, ls, s.Count(), s.Rate1(), s.Rate5(), s.Rate15(), s.RateMean())
	case metrics.Histogram:
		s := x.Snapshot()
		c.summary(base, reg, ls, s.Percentiles(quantiles), float64(s.Sum()), s.Count())
	case metrics.Timer:
		s := x.Snapshot()
		ps := s.Percentiles(quantiles)
		for i := range ps {
			ps[i] /= 1e9
		}
		c.summary(base+"_seconds", reg, ls, ps, float64(s.Sum())/1e9, s.Count())
		c.meter(base, reg, ls, s.Count(), s.Rate1(), s.Rate5(), s.Rate15(), s.RateMean())
	case metrics.EWMA:
		c.add(base+"_rate", "gauge", reg, sample{labels: ls, value: x.Snapshot().Rate()})
	}
}

// Rename maps a registry name to the Kafka MBean name it stands for (for
// example a controller's bare "ActiveControllerCount" to
// "kafka.controller:type=KafkaController,name=ActiveControllerCount"); nil
// keeps every name.
type Rename func(registryName string) string

// Write renders every metric of reg in the Prometheus text format, names
// mapped through rename first.
func Write(w io.Writer, reg metrics.Registry, rename Rename) error {
	var names []string
	all := map[string]any{}
	reg.Each(func(name string, m any) {
		if rename != nil {
			name = rename(name)
		}
		if _, dup := all[name]; !dup {
			names = append(names, name)
		}
		all[name] = m
	})
	sort.Strings(names)
	c := &collector{fams: map[string]*family{}}
	for _, n := range names {
		c.collect(n, all[n])
	}
	fnames := make([]string, 0, len(c.fams))
	for n := range c.fams {
		fnames = append(fnames, n)
	}
	sort.Strings(fnames)
	bw := bufio.NewWriter(w)
	for _, n := range fnames {
		f := c.fams[n]
		bw.WriteString("# HELP " + f.name + " " + escapeHelp(f.help) + "\n")
		bw.WriteString("# TYPE " + f.name + " " + f.kind + "\n")
		sort.SliceStable(f.samples, func(i, j int) bool {
			return sampleKey(f.samples[i]) < sampleKey(f.samples[j])
		})
		for _, s := range f.samples {
			bw.WriteString(f.name + s.suffix + formatLabels(s.labels) + " " + formatFloat(s.value) + "\n")
		}
	}
	return bw.Flush()
}

// sampleKey orders samples: by labels other than quantile, then quantiles
// in ascending order, then _sum and _count.
func sampleKey(s sample) string {
	var other []label
	q := ""
	for _, l := range s.labels {
		if l.name == "quantile" {
			q = l.value
			continue
		}
		other = append(other, l)
	}
	rank := "0"
	if q != "" {
		f, _ := strconv.ParseFloat(q, 64)
		rank = "0" + strconv.FormatFloat(f, 'f', 6, 64)
	}
	switch s.suffix {
	case "_sum":
		rank = "1"
	case "_count":
		rank = "2"
	}
	return formatLabels(other) + "\x00" + rank
}

func escapeHelp(s string) string {
	out := make([]byte, 0, len(s))
	for i := 0; i < len(s); i++ {
		switch s[i] {
		case '\\':
			out = append(out, '\\', '\\')
		case '\n':
			out = append(out, '\\', 'n')
		default:
			out = append(out, s[i])
		}
	}
	return string(out)
}

func formatFloat(f float64) string {
	switch {
	case math.IsNaN(f):
		return "NaN"
	case math.IsInf(f, 1):
		return "+Inf"
	case math.IsInf(f, -1):
		return "-Inf"
	}
	return strconv.FormatFloat(f, 'g', -1, 64)
}
