package broker

import (
	"sync"
	"sync/atomic"

	metrics "github.com/rcrowley/go-metrics"
	"github.com/twmb/franz-go/pkg/kerr"

	"samsa/broker/group"
	"samsa/broker/txn"
	"samsa/kafka"
)

// Metric names, after Kafka's MBeans (kafka.server BrokerTopicMetrics,
// ReplicaManager, DelayedOperationPurgatory; kafka.coordinator.group
// GroupMetadataManager). The BrokerTopicMetrics names are the all-topics
// totals; TopicMetricName gives a topic's own series.
const (
	MetricMessagesInPerSec          = "kafka.server:type=BrokerTopicMetrics,name=MessagesInPerSec"
	MetricBytesInPerSec             = "kafka.server:type=BrokerTopicMetrics,name=BytesInPerSec"
	MetricBytesOutPerSec            = "kafka.server:type=BrokerTopicMetrics,name=BytesOutPerSec"
	MetricReplicationBytesOut       = "kafka.server:type=BrokerTopicMetrics,name=ReplicationBytesOutPerSec"
	MetricFailedProduceRequests     = "kafka.server:type=BrokerTopicMetrics,name=FailedProduceRequestsPerSec"
	MetricFailedFetchRequests       = "kafka.server:type=BrokerTopicMetrics,name=FailedFetchRequestsPerSec"
	MetricPartitionCount            = "kafka.server:type=ReplicaManager,name=PartitionCount"
	MetricLeaderCount               = "kafka.server:type=ReplicaManager,name=LeaderCount"
	MetricUnderReplicatedPartitions = "kafka.server:type=ReplicaManager,name=UnderReplicatedPartitions"
	MetricUnderMinIsrPartitions     = "kafka.server:type=ReplicaManager,name=UnderMinIsrPartitionCount"
	MetricOfflineReplicaCount       = "kafka.server:type=ReplicaManager,name=OfflineReplicaCount"
	MetricIsrShrinksPerSec          = "kafka.server:type=ReplicaManager,name=IsrShrinksPerSec"
	MetricIsrExpandsPerSec          = "kafka.server:type=ReplicaManager,name=IsrExpandsPerSec"
	MetricProducePurgatorySize      = "kafka.server:type=DelayedOperationPurgatory,name=PurgatorySize,delayedOperation=Produce"
	MetricFetchPurgatorySize        = "kafka.server:type=DelayedOperationPurgatory,name=PurgatorySize,delayedOperation=Fetch"
	MetricNumGroups                 = "kafka.coordinator.group:type=GroupMetadataManager,name=NumGroups"
	// Transaction coordinator (broker/txn): Kafka's transaction-coordinator-metrics
	// partition load times (over the broker's life, not a 30 s window), then
	// Samsa's own counts of the ids it coordinates.
	MetricTxnPartitionLoadTimeMax = "kafka.server:type=transaction-coordinator-metrics,name=partition-load-time-max"
	MetricTxnPartitionLoadTimeAvg = "kafka.server:type=transaction-coordinator-metrics,name=partition-load-time-avg"
	MetricTxnTransactionalIDs     = "samsa.coordinator.transaction:type=TransactionStateManager,name=NumTransactionalIds"
	MetricTxnOngoing              = "samsa.coordinator.transaction:type=TransactionStateManager,name=NumOngoing"
	MetricTxnCompleting           = "samsa.coordinator.transaction:type=TransactionMarkerChannelManager,name=NumCompleting"
	// Kafka 2.8's TransactionMarkerChannelManager gauges.
	MetricTxnUnknownDestinationQueueSize = "kafka.coordinator.transaction:type=TransactionMarkerChannelManager,name=UnknownDestinationQueueSize"
	MetricTxnLogAppendRetryQueueSize     = "kafka.coordinator.transaction:type=TransactionMarkerChannelManager,name=LogAppendRetryQueueSize"
	MetricTxnPendingWaits                = "samsa.coordinator.transaction:type=TransactionCoordinator,name=PendingWaits"
	MetricNumOffsets                     = "kafka.coordinator.group:type=GroupMetadataManager,name=NumOffsets"
	MetricNumGroupsEmpty                 = "kafka.coordinator.group:type=GroupMetadataManager,name=NumGroupsEmpty"
	MetricNumGroupsPreparing             = "kafka.coordinator.group:type=GroupMetadataManager,name=NumGroupsPreparingRebalance"
	MetricNumGroupsCompleting            = "kafka.coordinator.group:type=GroupMetadataManager,name=NumGroupsCompletingRebalance"
	MetricNumGroupsStable                = "kafka.coordinator.group:type=GroupMetadataManager,name=NumGroupsStable"
)

// TopicMetricName is the per-topic name of a BrokerTopicMetrics total, as
// Kafka names the topic's MBean ("...,name=MessagesInPerSec,topic=t");
// the Prometheus endpoint turns the topic into a label.
func TopicMetricName(total, topic string) string { return total + ",topic=" + topic }

// topicMeters are one topic's BrokerTopicMetrics; immutable once made.
type topicMeters struct {
	messagesIn, bytesIn, bytesOut metrics.Meter
	failedProduce, failedFetch    metrics.Meter
}

// brokerMetrics are the broker's own meters. The all-topics meters are
// immutable after newBrokerMetrics. Per-topic meters are made on first use
// and cached in a copy-on-write map, so the produce and fetch paths look
// a topic up with one atomic load and one map read, without allocating.
type brokerMetrics struct {
	reg                           metrics.Registry
	messagesIn, bytesIn, bytesOut metrics.Meter
	replicationBytesOut           metrics.Meter
	failedProduce, failedFetch    metrics.Meter
	isrShrinks, isrExpands        metrics.Meter

	topicsMu sync.Mutex                              // serialises writers of topics
	topics   atomic.Pointer[map[string]*topicMeters] // never mutated once stored
}

func newBrokerMetrics(reg metrics.Registry) *brokerMetrics {
	m := &brokerMetrics{
		reg:                 reg,
		messagesIn:          metrics.GetOrRegisterMeter(MetricMessagesInPerSec, reg),
		bytesIn:             metrics.GetOrRegisterMeter(MetricBytesInPerSec, reg),
		bytesOut:            metrics.GetOrRegisterMeter(MetricBytesOutPerSec, reg),
		replicationBytesOut: metrics.GetOrRegisterMeter(MetricReplicationBytesOut, reg),
		failedProduce:       metrics.GetOrRegisterMeter(MetricFailedProduceRequests, reg),
		failedFetch:         metrics.GetOrRegisterMeter(MetricFailedFetchRequests, reg),
		isrShrinks:          metrics.GetOrRegisterMeter(MetricIsrShrinksPerSec, reg),
		isrExpands:          metrics.GetOrRegisterMeter(MetricIsrExpandsPerSec, reg),
	}
	m.topics.Store(&map[string]*topicMeters{})
	return m
}

// topic returns topic's meters, registering them on first use. Callers
// pass only topics this broker hosts, so the registry does not grow with
// the names clients send.
func (m *brokerMetrics) topic(topic string) *topicMeters {
	if tm := (*m.topics.Load())[topic]; tm != nil {
		return tm
	}
	m.topicsMu.Lock()
	defer m.topicsMu.Unlock()
	old := *m.topics.Load()
	if tm := old[topic]; tm != nil {
		return tm
	}
	meter := func(total string) metrics.Meter {
		return metrics.GetOrRegisterMeter(TopicMetricName(total, topic), m.reg)
	}
	tm := &topicMeters{
		messagesIn:    meter(MetricMessagesInPerSec),
		bytesIn:       meter(MetricBytesInPerSec),
		bytesOut:      meter(MetricBytesOutPerSec),
		failedProduce: meter(MetricFailedProduceRequests),
		failedFetch:   meter(MetricFailedFetchRequests),
	}
	next := make(map[string]*topicMeters, len(old)+1)
	for k, v := range old {
		next[k] = v
	}
	next[topic] = tm
	m.topics.Store(&next)
	return tm
}

// topicMetricTotals are the BrokerTopicMetrics that have a per-topic
// series (topicMeters).
var topicMetricTotals = [...]string{MetricMessagesInPerSec, MetricBytesInPerSec, MetricBytesOutPerSec,
	MetricFailedProduceRequests, MetricFailedFetchRequests}

// TopicRemoved implements replica.TopicListener: the broker deleted its last
// partition of topic, so the topic's series leave the registry (and the
// Prometheus endpoint), as Kafka's BrokerTopicStats.removeMetrics does. A
// produce or fetch already past its partition lookup may register them
// again; they then stay until the next deletion or restart, as in Kafka.
func (m *brokerMetrics) TopicRemoved(topic string) {
	m.topicsMu.Lock()
	defer m.topicsMu.Unlock()
	old := *m.topics.Load()
	if _, ok := old[topic]; ok {
		next := make(map[string]*topicMeters, len(old))
		for k, v := range old {
			if k != topic {
				next[k] = v
			}
		}
		m.topics.Store(&next)
	}
	// Unregistering a name that is not registered is a no-op.
	for _, total := range topicMetricTotals {
		m.reg.Unregister(TopicMetricName(total, topic))
	}
}

// produced marks a successful append of n records in size bytes.
func (m *brokerMetrics) produced(topic string, n, size int64) {
	tm := m.topic(topic)
	m.messagesIn.Mark(n)
	tm.messagesIn.Mark(n)
	m.bytesIn.Mark(size)
	tm.bytesIn.Mark(size)
}

// countsAsFailedProduce reports whether an append that failed with code
// marks FailedProduceRequestsPerSec. Kafka 2.8's
// ReplicaManager.appendToLocalLog leaves out the failures it expects
// (UnknownTopicOrPartition, NotLeaderOrFollower, RecordTooLarge,
// RecordBatchTooLarge, CorruptRecord, KafkaStorage: "it is supposed to
// indicate un-expected failures of a broker in handling a produce
// request") and marks every other one, record validation and producer
// state errors included.
func countsAsFailedProduce(code int16) bool {
	switch code {
	case kerr.UnknownTopicOrPartition.Code, kerr.NotLeaderForPartition.Code, kerr.MessageTooLarge.Code,
		kerr.RecordListTooLarge.Code, kerr.CorruptMessage.Code, kerr.KafkaStorageError.Code:
		return false
	}
	return true
}

// failed marks a failed produce or fetch of tp; the topic's own meter
// only when this broker hosts tp (UNKNOWN_TOPIC_OR_PARTITION for a made-up
// name must not register meters).
func (b *Broker) failed(tp kafka.TopicPartition, produce bool) {
	hosted := b.replicas.Partition(tp) != nil
	if produce {
		b.mtr.failedProduce.Mark(1)
		if hosted {
			b.mtr.topic(tp.Topic).failedProduce.Mark(1)
		}
		return
	}
	b.mtr.failedFetch.Mark(1)
	if hosted {
		b.mtr.topic(tp.Topic).failedFetch.Mark(1)
	}
}

// fetched marks size bytes sent to a consumer (follower fetches count as
// ReplicationBytesOutPerSec only, as in Kafka since KIP-153).
func (m *brokerMetrics) fetched(topic string, follower bool, size int64) {
	if follower {
		m.replicationBytesOut.Mark(size)
		return
	}
	m.bytesOut.Mark(size)
	m.topic(topic).bytesOut.Mark(size)
}

// IsrShrunk implements replica.IsrListener.
func (m *brokerMetrics) IsrShrunk(kafka.TopicPartition) { m.isrShrinks.Mark(1) }

// IsrExpanded implements replica.IsrListener.
func (m *brokerMetrics) IsrExpanded(kafka.TopicPartition) { m.isrExpands.Mark(1) }

// registerGauges adds the gauges computed from the replica manager and the
// group coordinator, hooks the ISR meters to the replica manager, and has
// it report deleted topics so their per-topic meters are unregistered.
func (b *Broker) registerGauges() {
	reg := b.opts.Registry
	b.replicas.SetIsrListener(b.mtr)
	b.replicas.SetTopicListener(b.mtr)
	gauge := func(name string, f func() int64) {
		_ = reg.Register(name, metrics.NewFunctionalGauge(f))
	}
	// Kafka counts offline partitions (a failed log dir's) in PartitionCount too.
	gauge(MetricPartitionCount, func() int64 {
		return int64(len(b.replicas.Partitions()) + len(b.replicas.OfflinePartitions()))
	})
	gauge(MetricOfflineReplicaCount, func() int64 { return int64(len(b.replicas.OfflinePartitions())) })
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
	gauge(MetricUnderMinIsrPartitions, func() int64 { return int64(b.replicas.UnderMinIsrCount()) })
	gauge(MetricProducePurgatorySize, b.replicas.Produce.Size)
	gauge(MetricFetchPurgatorySize, b.replicas.Fetch.Size)
	// The coordinator starts right after this; until then every count is 0.
	groupGauge := func(name string, f func(group.Counts) int) {
		gauge(name, func() int64 {
			if b.groups == nil {
				return 0
			}
			return int64(f(b.groups.Counts()))
		})
	}
	groupGauge(MetricNumGroups, func(c group.Counts) int { return c.Groups })
	groupGauge(MetricNumOffsets, func(c group.Counts) int { return c.Offsets })
	groupGauge(MetricNumGroupsEmpty, func(c group.Counts) int { return c.Empty })
	groupGauge(MetricNumGroupsPreparing, func(c group.Counts) int { return c.PreparingRebalance })
	groupGauge(MetricNumGroupsCompleting, func(c group.Counts) int { return c.CompletingRebalance })
	groupGauge(MetricNumGroupsStable, func(c group.Counts) int { return c.Stable })
	txnGauge := func(name string, f func(txn.Stats) int64) {
		gauge(name, func() int64 {
			if b.txns == nil {
				return 0
			}
			return f(b.txns.Stats())
		})
	}
	txnGauge(MetricTxnPartitionLoadTimeMax, func(s txn.Stats) int64 { return s.PartitionLoadTimeMaxMs })
	txnGauge(MetricTxnPartitionLoadTimeAvg, func(s txn.Stats) int64 { return s.PartitionLoadTimeAvgMs })
	txnGauge(MetricTxnTransactionalIDs, func(s txn.Stats) int64 { return int64(s.TransactionalIDs) })
	txnGauge(MetricTxnOngoing, func(s txn.Stats) int64 { return int64(s.Ongoing) })
	txnGauge(MetricTxnCompleting, func(s txn.Stats) int64 { return int64(s.Completing) })
	txnGauge(MetricTxnUnknownDestinationQueueSize, func(s txn.Stats) int64 { return int64(s.UnknownDestinationQueueSize) })
	txnGauge(MetricTxnLogAppendRetryQueueSize, func(s txn.Stats) int64 { return int64(s.LogAppendRetryQueueSize) })
	txnGauge(MetricTxnPendingWaits, func(s txn.Stats) int64 { return s.PendingWaits })
}
