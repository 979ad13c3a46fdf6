package broker

// Metadata: v0-11
//
// Behaviour:
//   - Answers from the metadata cache, which only UpdateMetadata fills (as
//     Kafka): a broker that has not heard from the controller yet lists no
//     brokers and no topics, and clients retry.
//   - Brokers: only live brokers that have an endpoint for the listener the
//     request arrived on, with their rack.
//   - Topics: v0 empty list = all topics; v1+ null = all topics and empty =
//     none. Topics being deleted are already gone from the cache.
//   - A partition whose leader is not live answers LEADER_NOT_AVAILABLE with
//     leader -1. v0 lists only live replicas and ISR members and answers
//     REPLICA_NOT_AVAILABLE when that left some out (Kafka's
//     errorUnavailableEndpoints); v1+ list all, and v5+ add the offline ones.
//   - Unknown topics: when auto.create.topics.enable is true and the request
//     allows it (always below v4, the flag from v4, KIP-204's semantics), the
//     topic is created with num.partitions and default.replication.factor
//     through the same path as CreateTopics, and the answer is
//     LEADER_NOT_AVAILABLE until the controller has elected its leaders.
//     Otherwise UNKNOWN_TOPIC_OR_PARTITION. Illegal names answer
//     INVALID_TOPIC_EXCEPTION and are never created.
//   - Authorization (Kafka 2.8 handleTopicMetadataRequest): Describe per
//     topic. The all-topics form silently omits topics the principal may
//     not describe; named topics it may not describe answer
//     TOPIC_AUTHORIZATION_FAILED with no partitions, whether or not they
//     exist (their existence is never checked). Auto-creation needs Create
//     on the cluster or on the topic, else TOPIC_AUTHORIZATION_FAILED.
//     Refused topics are listed after the others, as in Kafka.
//   - Authorized operations (v8+): with the include_* flags set, the bit
//     field of allowed operations (the cluster's only with Describe on it,
//     else 0; without an authorizer every supported operation, as Kafka
//     2.8); otherwise "not requested" (-2147483648).
//
// Version notes:
//   - v1: controller id, rack, is_internal; null topics. v2: cluster id.
//   - v3: throttle. v4: allow_auto_topic_creation (KIP-204).
//   - v5: offline replicas (KIP-112). v7: leader epoch (KIP-320).
//   - v8: authorized operations (KIP-430). v9: flexible.
//   - v10: topic ids, as the controller sent them in UpdateMetadata v7
//     (zero while unknown).
//   - v11: cluster authorized operations removed.

import (
	"math"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"

	"samsa/broker/acl"
	"samsa/broker/metadata"
)

// authorizedOperationsOmitted is Kafka's Int.MIN_VALUE "not requested".
const authorizedOperationsOmitted = math.MinInt32

func (b *Broker) handleMetadata(r *request) (kmsg.Response, error) {
	req := r.body.(*kmsg.MetadataRequest)
	resp := req.ResponseKind().(*kmsg.MetadataResponse)
	v := req.Version
	snap := b.meta.Snapshot()

	resp.ControllerID = snap.ControllerID
	if !snap.Alive(snap.ControllerID) {
		resp.ControllerID = -1
	}
	if id := b.ClusterID(); id != "" {
		resp.ClusterID = &id
	}
	resp.AuthorizedOperations = authorizedOperationsOmitted
	for _, id := range snap.BrokerIDs {
		br := snap.Brokers[id]
		ep, ok := br.Endpoint(r.listener)
		if !ok {
			continue
		}
		mb := kmsg.NewMetadataResponseBroker()
		mb.NodeID, mb.Host, mb.Port, mb.Rack = id, ep.Host, ep.Port, br.Rack
		resp.Brokers = append(resp.Brokers, mb)
	}

	allTopics := (v == 0 && len(req.Topics) == 0) || (v >= 1 && req.Topics == nil)
	var names []string
	if allTopics {
		names = snap.TopicNames()
	} else {
		seen := make(map[string]bool, len(req.Topics))
		for _, t := range req.Topics {
			if t.Topic == nil || seen[*t.Topic] {
				continue
			}
			seen[*t.Topic] = true
			names = append(names, *t.Topic)
		}
	}
	allowAuto := v < 4 || req.AllowAutoTopicCreation
	names, refused := b.metadataAuthorize(r, snap, names, allTopics, allowAuto && b.cfg.AutoCreateTopicsEnable)
	if v >= 8 && req.IncludeClusterAuthorizedOperations {
		resp.AuthorizedOperations = 0
		if b.authorizedCluster(r, acl.OpDescribe) {
			resp.AuthorizedOperations = b.authorizedOperations(r, acl.ResourceCluster, acl.ClusterName)
		}
	}
	for _, name := range names {
		mt := kmsg.NewMetadataResponseTopic()
		mt.Topic = kmsg.StringPtr(name)
		mt.IsInternal = isInternalTopic(name)
		mt.TopicID = snap.TopicIDs[name]
		mt.AuthorizedOperations = authorizedOperationsOmitted
		if v >= 8 && req.IncludeTopicAuthorizedOperations {
			mt.AuthorizedOperations = b.authorizedOperations(r, acl.ResourceTopic, name)
		}
		parts := snap.Partitions(name)
		if len(parts) == 0 {
			mt.ErrorCode = b.errorCode(b.metadataUnknownTopic(r, name, allowAuto))
			resp.Topics = append(resp.Topics, mt)
			continue
		}
		for _, ps := range parts {
			mt.Partitions = append(mt.Partitions, metadataPartition(snap, ps, v))
		}
		resp.Topics = append(resp.Topics, mt)
	}
	resp.Topics = append(resp.Topics, refused...)
	return resp, nil
}

// metadataUnknownTopic decides the error for a topic the cache does not
// know, auto-creating it when allowed.
func (b *Broker) metadataUnknownTopic(r *request, name string, allowAuto bool) error {
	if err := validateTopicName(name); err != nil {
		return err
	}
	if !allowAuto || !b.cfg.AutoCreateTopicsEnable {
		return errUnknownTopic
	}
	err := b.autoCreateTopic(r.ctx, name)
	if err == nil || isTopicExists(err) {
		return errLeaderNotAvailable
	}
	return err
}

func metadataPartition(snap *metadata.Snapshot, ps metadata.PartitionState, v int16) kmsg.MetadataResponseTopicPartition {
	mp := kmsg.NewMetadataResponseTopicPartition()
	mp.Partition = ps.Partition
	mp.Leader = ps.Leader
	mp.LeaderEpoch = ps.LeaderEpoch
	mp.Replicas = ps.Replicas
	mp.ISR = ps.ISR
	mp.OfflineReplicas = ps.OfflineReplicas
	if v == 0 {
		// Kafka's errorUnavailableEndpoints: v0 lists live brokers only and
		// says so with REPLICA_NOT_AVAILABLE.
		mp.Replicas = liveOnly(snap, ps.Replicas)
		mp.ISR = liveOnly(snap, ps.ISR)
		if len(mp.Replicas) < len(ps.Replicas) || len(mp.ISR) < len(ps.ISR) {
			mp.ErrorCode = kerr.ReplicaNotAvailable.Code
		}
	}
	if mp.Replicas == nil {
		mp.Replicas = []int32{}
	}
	if mp.ISR == nil {
		mp.ISR = []int32{}
	}
	if mp.OfflineReplicas == nil {
		mp.OfflineReplicas = []int32{}
	}
	if ps.Leader < 0 || !snap.Alive(ps.Leader) {
		mp.Leader = -1
		mp.ErrorCode = kerr.LeaderNotAvailable.Code
	}
	return mp
}

func liveOnly(snap *metadata.Snapshot, ids []int32) []int32 {
	out := make([]int32, 0, len(ids))
	for _, id := range ids {
		if snap.Alive(id) {
			out = append(out, id)
		}
	}
	return out
}
