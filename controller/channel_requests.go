package controller

import (
	"iter"
	"slices"

	"github.com/twmb/franz-go/pkg/kmsg"
)

// requestVersions caps the version of each control request; the sender lowers it further to
// what the broker negotiated (VersionLimiter).
type requestVersions struct {
	leaderAndIsr, updateMetadata, stopReplica int16
}

// buildLeaderAndIsr builds LeaderAndIsr (key 4) at version v: v0–1 list partitions with their
// topic, v2+ group them by topic and carry the broker epoch (KIP-380), v5 adds topic ids.
// Every field of every version is filled, so a RequestClient that re-picks the version
// (peer.Client.Request) still sends a complete request; only v is set.
func buildLeaderAndIsr(v int16, h requestHeader, parts []laiPartition, leaders []liveLeader) *kmsg.LeaderAndISRRequest {
	req := kmsg.NewPtrLeaderAndISRRequest()
	req.Version = v
	req.ControllerID = h.controllerID
	req.ControllerEpoch = h.controllerEpoch
	req.BrokerEpoch = h.brokerEpoch
	// Both layouts are filled (kmsg encodes the one of the version), so the request stays valid
	// if a client picks another version than v; the slices are shared, not copied.
	for run := range topicRuns(parts) {
		ts := kmsg.NewLeaderAndISRRequestTopicState()
		ts.Topic = run[0].tp.Topic
		ts.TopicID = run[0].topicID
		for _, p := range run {
			ps := kmsg.NewLeaderAndISRRequestTopicPartition()
			ps.Topic = p.tp.Topic
			ps.Partition = p.tp.Partition
			ps.ControllerEpoch = p.state.ControllerEpoch
			ps.Leader = p.state.Leader
			ps.LeaderEpoch = p.state.LeaderEpoch
			ps.ISR = slices.Clone(p.state.Isr)
			ps.ZKVersion = p.state.ZkVersion
			ps.Replicas = slices.Clone(p.replicas)
			ps.AddingReplicas = append([]int32{}, p.adding...)
			ps.RemovingReplicas = append([]int32{}, p.removing...)
			ps.IsNew = p.isNew
			req.PartitionStates = append(req.PartitionStates, ps)
			ts.PartitionStates = append(ts.PartitionStates, ps)
		}
		req.TopicStates = append(req.TopicStates, ts)
	}
	for _, l := range leaders {
		ll := kmsg.NewLeaderAndISRRequestLiveLeader()
		ll.BrokerID = l.id
		ll.Host = l.host
		ll.Port = l.port
		req.LiveLeaders = append(req.LiveLeaders, ll)
	}
	return req
}

// buildUpdateMetadata builds UpdateMetadata (key 6) at version v: v1+ carry every endpoint,
// v2+ the rack, v3+ listener names, v4+ offline replicas, v5+ the broker epoch and grouping
// by topic, v7 topic ids. Like buildLeaderAndIsr it fills every version's fields.
func buildUpdateMetadata(v int16, h requestHeader, parts []umPartition, brokers []LiveBroker) *kmsg.UpdateMetadataRequest {
	req := kmsg.NewPtrUpdateMetadataRequest()
	req.Version = v
	req.ControllerID = h.controllerID
	req.ControllerEpoch = h.controllerEpoch
	req.BrokerEpoch = h.brokerEpoch
	req.LiveBrokers = []kmsg.UpdateMetadataRequestLiveBroker{}
	req.TopicStates = []kmsg.UpdateMetadataRequestTopicState{}
	for run := range topicRuns(parts) { // both layouts, as in LeaderAndIsr
		ts := kmsg.NewUpdateMetadataRequestTopicState()
		ts.Topic = run[0].tp.Topic
		ts.TopicID = run[0].topicID
		for _, p := range run {
			ps := kmsg.NewUpdateMetadataRequestTopicPartition()
			ps.Topic = p.tp.Topic
			ps.Partition = p.tp.Partition
			ps.ControllerEpoch = p.state.ControllerEpoch
			ps.Leader = p.state.Leader
			ps.LeaderEpoch = p.state.LeaderEpoch
			ps.ISR = slices.Clone(p.state.Isr)
			ps.ZKVersion = p.state.ZkVersion
			ps.Replicas = slices.Clone(p.replicas)
			ps.OfflineReplicas = slices.Clone(p.offline)
			if ps.OfflineReplicas == nil {
				ps.OfflineReplicas = []int32{}
			}
			req.PartitionStates = append(req.PartitionStates, ps)
			ts.PartitionStates = append(ts.PartitionStates, ps)
		}
		req.TopicStates = append(req.TopicStates, ts)
	}
	for _, b := range brokers {
		lb := kmsg.NewUpdateMetadataRequestLiveBroker()
		lb.ID = b.ID
		if b.Rack != "" {
			rack := b.Rack
			lb.Rack = &rack
		}
		for _, ep := range b.Endpoints {
			e := kmsg.NewUpdateMetadataRequestLiveBrokerEndpoint()
			e.Host = ep.Host
			e.Port = ep.Port
			e.ListenerName = ep.Listener
			e.SecurityProtocol = securityProtocolID(ep.SecurityProtocol)
			lb.Endpoints = append(lb.Endpoints, e)
			// v0 knows one PLAINTEXT host:port per broker.
			if lb.Host == "" && ep.SecurityProtocol == "PLAINTEXT" {
				lb.Host, lb.Port = ep.Host, ep.Port
			}
		}
		req.LiveBrokers = append(req.LiveBrokers, lb)
	}
	return req
}

// buildStopReplica builds StopReplica (key 5) at version v for partitions that share the
// delete flag: v0 lists (topic, partition) pairs, v1–2 group partitions by topic with a
// request-wide delete flag, v3 carries per-partition leader epoch and delete flag.
func buildStopReplica(v int16, h requestHeader, deletePartitions bool, parts []stopPartition) *kmsg.StopReplicaRequest {
	req := kmsg.NewPtrStopReplicaRequest()
	req.Version = v
	req.ControllerID = h.controllerID
	req.ControllerEpoch = h.controllerEpoch
	req.BrokerEpoch = h.brokerEpoch
	req.DeletePartitions = deletePartitions
	if v == 0 {
		for _, p := range parts {
			t := kmsg.NewStopReplicaRequestTopic()
			t.Topic = p.tp.Topic
			t.Partition = p.tp.Partition
			req.Topics = append(req.Topics, t)
		}
		return req
	}
	for run := range topicRuns(parts) {
		t := kmsg.NewStopReplicaRequestTopic()
		t.Topic = run[0].tp.Topic
		for _, p := range run {
			t.Partitions = append(t.Partitions, p.tp.Partition)
			ps := kmsg.NewStopReplicaRequestTopicPartitionState()
			ps.Partition = p.tp.Partition
			ps.LeaderEpoch = p.leaderEpoch
			ps.Delete = deletePartitions
			t.PartitionStates = append(t.PartitionStates, ps)
		}
		req.Topics = append(req.Topics, t)
	}
	return req
}

// topicRuns yields parts in runs of consecutive entries of one topic. The batch sorts the
// parts by topic and partition before building (sortByPartition), so each run is all of one
// topic's partitions: the per-topic groups of the requests' newer layouts.
func topicRuns[P partitionSnapshot](parts []P) iter.Seq[[]P] {
	return func(yield func([]P) bool) {
		for start := 0; start < len(parts); {
			topic := parts[start].topicPartition().Topic
			end := start + 1
			for end < len(parts) && parts[end].topicPartition().Topic == topic {
				end++
			}
			if !yield(parts[start:end]) {
				return
			}
			start = end
		}
	}
}
