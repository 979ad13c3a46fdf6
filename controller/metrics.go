package controller

import (
	"sync/atomic"
	"time"

	"github.com/rcrowley/go-metrics"
)

// Metric names, after Kafka's kafka.controller MBeans (KafkaController, ControllerStats,
// ControllerEventManager).
const (
	MetricActiveControllerCount        = "ActiveControllerCount"
	MetricOfflinePartitionsCount       = "OfflinePartitionsCount"
	MetricGlobalPartitionCount         = "GlobalPartitionCount"
	MetricGlobalTopicCount             = "GlobalTopicCount"
	MetricEventQueueSize               = "EventQueueSize"
	MetricEventQueueTimeMs             = "EventQueueTimeMs"
	MetricUncleanLeaderElectionsPerSec = "UncleanLeaderElectionsPerSec"
	MetricControllerChangeCount        = "ControllerChangeCount"
)

// controllerMetrics publishes the controller's gauges. The gauge values are atomics written
// by the event goroutine after each event and read by the registry's readers.
type controllerMetrics struct {
	active         atomic.Int64
	offline        atomic.Int64
	partitions     atomic.Int64
	topics         atomic.Int64
	queueTime      metrics.Histogram
	unclean        metrics.Meter
	controllerMove metrics.Counter
}

func newControllerMetrics(r metrics.Registry, queueSize func() int64) *controllerMetrics {
	m := &controllerMetrics{
		queueTime:      metrics.GetOrRegisterHistogram(MetricEventQueueTimeMs, r, metrics.NewExpDecaySample(1028, 0.015)),
		unclean:        metrics.GetOrRegisterMeter(MetricUncleanLeaderElectionsPerSec, r),
		controllerMove: metrics.GetOrRegisterCounter(MetricControllerChangeCount, r),
	}
	gauge := func(name string, f func() int64) {
		_ = r.Register(name, metrics.NewFunctionalGauge(f))
	}
	gauge(MetricActiveControllerCount, m.active.Load)
	gauge(MetricOfflinePartitionsCount, m.offline.Load)
	gauge(MetricGlobalPartitionCount, m.partitions.Load)
	gauge(MetricGlobalTopicCount, m.topics.Load)
	gauge(MetricEventQueueSize, queueSize)
	return m
}

// observeQueueTime records how long an event waited in the queue.
func (m *controllerMetrics) observeQueueTime(d time.Duration) {
	m.queueTime.Update(d.Milliseconds())
}

// update copies the context's counts into the gauges; cc is nil when not active.
func (m *controllerMetrics) update(cc *controllerContext) {
	if cc == nil {
		m.active.Store(0)
		m.offline.Store(0)
		m.partitions.Store(0)
		m.topics.Store(0)
		return
	}
	m.active.Store(1)
	m.offline.Store(int64(cc.offlinePartitionCount()))
	m.partitions.Store(int64(cc.partitionCount()))
	m.topics.Store(int64(len(cc.assignments)))
}
