package broker

import (
	metrics "github.com/rcrowley/go-metrics"
)

// Metric names, after Kafka's MBeans (kafka.server BrokerTopicMetrics,
// ReplicaManager, DelayedOperationPurgatory).
const (
	MetricMessagesInPerSec          = "kafka.server:type=BrokerTopicMetrics,name=MessagesInPerSec"
	MetricBytesInPerSec             = "kafka.server:type=BrokerTopicMetrics,name=BytesInPerSec"
	MetricBytesOutPerSec            = "kafka.server:type=BrokerTopicMetrics,name=BytesOutPerSec"
	MetricFailedProduceRequests     = "kafka.server:type=BrokerTopicMetrics,name=FailedProduceRequestsPerSec"
	MetricFailedFetchRequests       = "kafka.server:type=BrokerTopicMetrics,name=FailedFetchRequestsPerSec"
	MetricPartitionCount            = "kafka.server:type=ReplicaManager,name=PartitionCount"
	MetricLeaderCount               = "kafka.server:type=ReplicaManager,name=LeaderCount"
	MetricUnderReplicatedPartitions = "kafka.server:type=ReplicaManager,name=UnderReplicatedPartitions"
	MetricProducePurgatorySize      = "kafka.server:type=DelayedOperationPurgatory,name=PurgatorySize,delayedOperation=Produce"
	MetricFetchPurgatorySize        = "kafka.server:type=DelayedOperationPurgatory,name=PurgatorySize,delayedOperation=Fetch"
)

// brokerMetrics are the broker's own meters; immutable after newBrokerMetrics.
type brokerMetrics struct {
	messagesIn, bytesIn, bytesOut metrics.Meter
	failedProduce, failedFetch    metrics.Meter
}

func newBrokerMetrics(reg metrics.Registry) *brokerMetrics {
	return &brokerMetrics{
		messagesIn:    metrics.GetOrRegisterMeter(MetricMessagesInPerSec, reg),
		bytesIn:       metrics.GetOrRegisterMeter(MetricBytesInPerSec, reg),
		bytesOut:      metrics.GetOrRegisterMeter(MetricBytesOutPerSec, reg),
		failedProduce: metrics.GetOrRegisterMeter(MetricFailedProduceRequests, reg),
		failedFetch:   metrics.GetOrRegisterMeter(MetricFailedFetchRequests, reg),
	}
}

// registerGauges adds the gauges computed from the replica manager.
func (b *Broker) registerGauges() {
	reg := b.opts.Registry
	gauge := func(name string, f func() int64) {
		_ = reg.Register(name, metrics.NewFunctionalGauge(f))
	}
	gauge(MetricPartitionCount, func() int64 { return int64(len(b.replicas.Partitions())) })
	gauge(MetricLeaderCount, func() int64 {
		n := int64(0)
		for _, p := range b.replicas.Partitions() {
			if p.State().IsLeader {
				n++
			}
		}
		return n
	})
	gauge(MetricUnderReplicatedPartitions, func() int64 {
		n := int64(0)
		for _, p := range b.replicas.Partitions() {
			if s := p.State(); s.IsLeader && len(s.ISR) < len(s.Replicas) {
				n++
			}
		}
		return n
	})
	gauge(MetricProducePurgatorySize, b.replicas.Produce.Size)
	gauge(MetricFetchPurgatorySize, b.replicas.Fetch.Size)
}
