package zkconsumer

import (
	metrics "github.com/rcrowley/go-metrics"
)

// Metric names, after the old consumer's MBeans (kafka.consumer
// ZookeeperConsumerConnector and ConsumerTopicMetrics), without the
// clientId tag: each Connector reports to the registry it is given.
const (
	MetricRebalanceRateAndTime   = "kafka.consumer:type=ZookeeperConsumerConnector,name=RebalanceRateAndTime"
	MetricOwnedPartitionsCount   = "kafka.consumer:type=ZookeeperConsumerConnector,name=OwnedPartitionsCount"
	MetricZooKeeperCommitsPerSec = "kafka.consumer:type=ZookeeperConsumerConnector,name=ZooKeeperCommitsPerSec"
	MetricKafkaCommitsPerSec     = "kafka.consumer:type=ZookeeperConsumerConnector,name=KafkaCommitsPerSec"
	MetricMessagesPerSec         = "kafka.consumer:type=ConsumerTopicMetrics,name=MessagesPerSec"
)

// connectorMetrics are a Connector's meters; immutable after newMetrics.
type connectorMetrics struct {
	rebalance     metrics.Timer
	zkCommits     metrics.Meter
	kafkaCommits  metrics.Meter
	messages      metrics.Meter
	ownedGaugeReg metrics.Registry
}

func newMetrics(reg metrics.Registry) *connectorMetrics {
	if reg == nil {
		reg = metrics.NewRegistry() // never metrics.DefaultRegistry (STYLE S10.4)
	}
	return &connectorMetrics{
		rebalance:     metrics.GetOrRegisterTimer(MetricRebalanceRateAndTime, reg),
		zkCommits:     metrics.GetOrRegisterMeter(MetricZooKeeperCommitsPerSec, reg),
		kafkaCommits:  metrics.GetOrRegisterMeter(MetricKafkaCommitsPerSec, reg),
		messages:      metrics.GetOrRegisterMeter(MetricMessagesPerSec, reg),
		ownedGaugeReg: reg,
	}
}

// registerOwnedGauge reports the number of partitions c owns.
func (c *Connector) registerOwnedGauge() {
	_ = c.metrics.ownedGaugeReg.Register(MetricOwnedPartitionsCount, metrics.NewFunctionalGauge(func() int64 {
		c.mu.Lock()
		defer c.mu.Unlock()
		return int64(len(c.mu.owned))
	}))
}
