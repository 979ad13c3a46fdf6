package broker

import (
	"testing"

	metrics "github.com/rcrowley/go-metrics"
)

// TestAPIMetricsTopicRemovedUnregisters: TopicRemoved takes every
// per-topic BrokerTopicMetrics series of the topic out of the registry,
// leaves other topics and the all-topics totals alone, and a later use of
// the topic starts fresh series.
func TestAPIMetricsTopicRemovedUnregisters(t *testing.T) {
	reg := metrics.NewRegistry()
	m := newBrokerMetrics(reg)
	for _, topic := range []string{"gone", "kept"} {
		m.produced(topic, 3, 300)
		m.fetched(topic, false, 100)
		m.topic(topic).failedProduce.Mark(1)
		m.topic(topic).failedFetch.Mark(1)
	}
	for _, total := range topicMetricTotals {
		if reg.Get(TopicMetricName(total, "gone")) == nil {
			t.Fatalf("%s not registered before the deletion", TopicMetricName(total, "gone"))
		}
	}
	m.TopicRemoved("gone")
	for _, total := range topicMetricTotals {
		if reg.Get(TopicMetricName(total, "gone")) != nil {
			t.Errorf("%s still registered after TopicRemoved", TopicMetricName(total, "gone"))
		}
		if reg.Get(TopicMetricName(total, "kept")) == nil {
			t.Errorf("%s unregistered with another topic", TopicMetricName(total, "kept"))
		}
		if reg.Get(total) == nil {
			t.Errorf("total %s unregistered", total)
		}
	}
	if n := m.messagesIn.Count(); n != 6 {
		t.Errorf("all-topics MessagesInPerSec = %d, want 6", n)
	}
	m.TopicRemoved("never-hosted") // no-op
	m.produced("gone", 1, 10)
	got, ok := reg.Get(TopicMetricName(MetricMessagesInPerSec, "gone")).(metrics.Meter)
	if !ok || got.Count() != 1 {
		t.Fatalf("recreated MessagesInPerSec of gone: %v", got)
	}
}
