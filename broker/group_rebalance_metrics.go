package broker

import (
	"strings"

	metrics "github.com/rcrowley/go-metrics"

	"samsa/broker/group"
)

// MetricGroupRebalances is the counter of rebalances started, per group
// and reason (group.ReasonKind), in Kafka's MBean style; the Prometheus
// endpoint turns group and reason into labels:
//
//	kafka_coordinator_group_groupcoordinator_rebalancecount_total{group="g",reason="member_joined"}
//
// Kafka 2.8 has only the broker-wide group-completed-rebalance-count
// sensor; the per-group, per-reason series is Samsa's.
const MetricGroupRebalances = "kafka.coordinator.group:type=GroupCoordinator,name=RebalanceCount"

// GroupRebalanceMetricName is the registry name of group's counter for
// reason. A group id may hold the MBean separators ',' '=' ':' (Kafka
// quotes such values in its ObjectNames); they are percent-encoded so the
// name still parses into the same two labels.
func GroupRebalanceMetricName(groupID string, reason group.ReasonKind) string {
	return MetricGroupRebalances + ",group=" + mbeanValueEscaper.Replace(groupID) + ",reason=" + string(reason)
}

var mbeanValueEscaper = strings.NewReplacer("%", "%25", ",", "%2C", "=", "%3D", ":", "%3A")

// dropRebalanceCounters unregisters a group's counters once it left this
// coordinator (deleted, expired, or moved), so groups that come and go
// (console consumers' random ids) do not pile up series. The new
// coordinator of a moved group starts its counters at 0, as any counter
// after a restart.
func (b *Broker) dropRebalanceCounters(groupID string) {
	for _, k := range group.ReasonKinds {
		b.opts.Registry.Unregister(GroupRebalanceMetricName(groupID, k))
	}
}

// countRebalance is the coordinator's OnRebalance hook (it runs on the
// group's goroutine; the registry lookup does not block on it).
func (b *Broker) countRebalance(groupID string, r group.Rebalance) {
	metrics.GetOrRegisterCounter(GroupRebalanceMetricName(groupID, r.Kind), b.opts.Registry).Inc(1)
}
