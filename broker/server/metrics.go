package server

import (
	"time"

	metrics "github.com/rcrowley/go-metrics"
	"github.com/twmb/franz-go/pkg/kmsg"
)

// Metric names, after Kafka's MBeans so dashboards can map them one to one. Per-API metrics end
// in ",request=<ApiName>" (for example "kafka.network:type=RequestMetrics,name=RequestsPerSec,
// request=Produce").
const (
	// MetricRequestsPerSec is a Meter per API key (Kafka RequestMetrics RequestsPerSec).
	MetricRequestsPerSec = "kafka.network:type=RequestMetrics,name=RequestsPerSec"
	// MetricTotalTimeMs is a Histogram per API key of milliseconds from the frame being read to
	// the response being written (Kafka RequestMetrics TotalTimeMs).
	MetricTotalTimeMs = "kafka.network:type=RequestMetrics,name=TotalTimeMs"
	// MetricConnectionCount is a Gauge of open client connections.
	MetricConnectionCount = "kafka.server:type=socket-server-metrics,name=connection-count"
	// MetricListenerConnectionCount, followed by the listener name, is a Gauge of one
	// listener's open connections (Kafka's connection-count with its listener tag).
	MetricListenerConnectionCount = "kafka.server:type=socket-server-metrics,name=connection-count,listener="
	// MetricPanics is a Counter of handler panics recovered per connection (S5.10); tests fail
	// when it is above zero.
	MetricPanics = "broker.panics"
)

// apiMetrics holds one API key's metrics; immutable after newRequestMetrics.
type apiMetrics struct {
	requests  metrics.Meter
	totalTime metrics.Histogram
}

// requestMetrics indexes apiMetrics by api key; immutable after newRequestMetrics.
type requestMetrics struct {
	byKey []*apiMetrics
}

// maxAPIKey bounds the keys we register metrics for; kmsg knows fewer than this.
const maxAPIKey = 128

func newRequestMetrics(reg metrics.Registry) *requestMetrics {
	m := &requestMetrics{byKey: make([]*apiMetrics, maxAPIKey)}
	for k := int16(0); k < maxAPIKey; k++ {
		if kmsg.RequestForKey(k) == nil {
			continue
		}
		tag := ",request=" + kmsg.NameForKey(k)
		m.byKey[k] = &apiMetrics{
			requests: metrics.GetOrRegisterMeter(MetricRequestsPerSec+tag, reg),
			totalTime: metrics.GetOrRegisterHistogram(MetricTotalTimeMs+tag, reg,
				metrics.NewExpDecaySample(1028, 0.015)),
		}
	}
	return m
}

func (m *requestMetrics) observe(key int16, elapsed time.Duration) {
	if key < 0 || int(key) >= len(m.byKey) || m.byKey[key] == nil {
		return
	}
	a := m.byKey[key]
	a.requests.Mark(1)
	a.totalTime.Update(elapsed.Milliseconds())
}
