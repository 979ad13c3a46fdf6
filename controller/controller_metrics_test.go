package controller

import (
	"context"
	"fmt"
	"testing"

	"github.com/rcrowley/go-metrics"

	"samsa/internal/testwait"
)

// TestControllerMetrics: the gauges read from the injected registry follow the controller
// (Kafka's kafka.controller MBeans).
func TestControllerMetrics(t *testing.T) {
	t.Parallel()
	cl, n1 := newActiveCluster(t, nil)
	gauge := func(name string) int64 { return n1.reg.Get(name).(metrics.Gauge).Value() }
	zc := cl.zk()
	createTopic(t, zc, "m1", map[int32][]int32{0: {1}, 1: {1}, 2: {7}})
	testwait.For(t, waitTimeout, func() error {
		got := [4]int64{gauge(MetricActiveControllerCount), gauge(MetricGlobalTopicCount), gauge(MetricGlobalPartitionCount), gauge(MetricOfflinePartitionsCount)}
		if got != [4]int64{1, 1, 3, 1} {
			return fmt.Errorf("active, topics, partitions, offline = %v", got)
		}
		return nil
	})
	// EventQueueSize counts events waiting behind a busy event goroutine.
	release := make(chan struct{})
	held := make(chan struct{})
	go func() { _ = n1.c.sync(context.Background(), func() { close(held); <-release }) }()
	<-held
	for range 3 {
		n1.c.enqueue(isrChangeNotificationEvent{})
	}
	if v := gauge(MetricEventQueueSize); v != 3 {
		t.Fatalf("EventQueueSize %d, want 3", v)
	}
	close(release)
	testwait.For(t, waitTimeout, func() error {
		if v := gauge(MetricEventQueueSize); v != 0 {
			return fmt.Errorf("EventQueueSize %d", v)
		}
		return nil
	})
	if n := n1.reg.Get(MetricEventQueueTimeMs).(metrics.Histogram).Count(); n == 0 {
		t.Fatal("EventQueueTimeMs recorded nothing")
	}
	if n := n1.reg.Get(MetricControllerChangeCount).(metrics.Counter).Count(); n != 1 {
		t.Fatalf("ControllerChangeCount %d", n)
	}
}
