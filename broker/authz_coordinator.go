package broker

// Authorization of OffsetFetch (9) and FindCoordinator (10), kept out of
// their handler files while the transaction work edits them: apis.go
// routes both keys through these wrappers, which decide as Kafka 2.8's
// KafkaApis does and then call the plain handler with what is allowed.

import (
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"

	"samsa/broker/acl"
)

// handleOffsetFetchAuthorized: Describe on the group, else
// GROUP_AUTHORIZATION_FAILED (top level from v2, per partition below);
// then Describe per topic. Named partitions the principal may not Describe
// answer offset -1 with TOPIC_AUTHORIZATION_FAILED
// (OffsetFetchResponse.UNAUTHORIZED_PARTITION) and never reach the
// coordinator; the all-partitions form (null topics, v2+) silently omits
// them.
func (b *Broker) handleOffsetFetchAuthorized(r *request) (kmsg.Response, error) {
	if b.authz == nil {
		return b.handleOffsetFetch(r)
	}
	req := r.body.(*kmsg.OffsetFetchRequest)
	if !b.authorizedGroup(r, acl.OpDescribe, req.Group) {
		return offsetFetchError(req, kerr.GroupAuthorizationFailed.Code), nil
	}
	describe := b.topicAuthCache(r, acl.OpDescribe)
	orig := req.Topics
	var denied []kmsg.OffsetFetchRequestTopic
	if orig != nil {
		allowed := make([]kmsg.OffsetFetchRequestTopic, 0, len(orig))
		for _, t := range orig {
			if describe.ok(t.Topic) {
				allowed = append(allowed, t)
			} else {
				denied = append(denied, t)
			}
		}
		req.Topics = allowed
	}
	out, err := b.handleOffsetFetch(r)
	req.Topics = orig
	if err != nil {
		return out, err
	}
	resp := out.(*kmsg.OffsetFetchResponse)
	if resp.ErrorCode != 0 {
		return resp, nil
	}
	if orig == nil {
		kept := resp.Topics[:0]
		for _, t := range resp.Topics {
			if describe.ok(t.Topic) {
				kept = append(kept, t)
			}
		}
		resp.Topics = kept
		return resp, nil
	}
	for _, t := range denied {
		rt := kmsg.NewOffsetFetchResponseTopic()
		rt.Topic = t.Topic
		for _, p := range t.Partitions {
			rp := kmsg.NewOffsetFetchResponseTopicPartition()
			rp.Partition, rp.Offset, rp.LeaderEpoch, rp.ErrorCode = p, -1, -1, kerr.TopicAuthorizationFailed.Code
			rp.Metadata = kmsg.StringPtr("")
			rt.Partitions = append(rt.Partitions, rp)
		}
		resp.Topics = append(resp.Topics, rt)
	}
	return resp, nil
}

// offsetFetchError is OffsetFetchRequest.getErrorResponse: the error at
// the top level from v2, and on every requested partition.
func offsetFetchError(req *kmsg.OffsetFetchRequest, code int16) *kmsg.OffsetFetchResponse {
	resp := req.ResponseKind().(*kmsg.OffsetFetchResponse)
	if req.Version >= 2 {
		resp.ErrorCode = code
	}
	for _, t := range req.Topics {
		rt := kmsg.NewOffsetFetchResponseTopic()
		rt.Topic = t.Topic
		for _, p := range t.Partitions {
			rp := kmsg.NewOffsetFetchResponseTopicPartition()
			rp.Partition, rp.Offset, rp.LeaderEpoch, rp.ErrorCode = p, -1, -1, code
			rp.Metadata = kmsg.StringPtr("")
			rt.Partitions = append(rt.Partitions, rp)
		}
		resp.Topics = append(resp.Topics, rt)
	}
	return resp
}

// handleFindCoordinatorAuthorized: Describe on the group (key type 0) or on
// the transactional id (key type 1), else GROUP_AUTHORIZATION_FAILED /
// TRANSACTIONAL_ID_AUTHORIZATION_FAILED with node -1, as Kafka 2.8
// answers before looking for the coordinator.
func (b *Broker) handleFindCoordinatorAuthorized(r *request) (kmsg.Response, error) {
	if b.authz == nil {
		return b.handleFindCoordinator(r)
	}
	req := r.body.(*kmsg.FindCoordinatorRequest)
	var refused *kerr.Error
	switch {
	case req.CoordinatorType == 0 && !b.authorizedGroup(r, acl.OpDescribe, req.CoordinatorKey):
		refused = kerr.GroupAuthorizationFailed
	case req.CoordinatorType == 1 && !b.authorizedTransactionalID(r, acl.OpDescribe, &req.CoordinatorKey):
		refused = kerr.TransactionalIDAuthorizationFailed
	}
	if refused == nil {
		return b.handleFindCoordinator(r)
	}
	resp := req.ResponseKind().(*kmsg.FindCoordinatorResponse)
	resp.NodeID, resp.Port, resp.ErrorCode = -1, -1, refused.Code
	resp.ErrorMessage = kmsg.StringPtr(refused.Description)
	return resp, nil
}

// handleInitProducerIDAuthorized is Kafka 2.8's InitProducerId check
// (authorizedInitProducerID): Write on the transactional id, else
// TRANSACTIONAL_ID_AUTHORIZATION_FAILED; without an id IdempotentWrite on
// the cluster or Write on some topic (KIP-679), else
// CLUSTER_AUTHORIZATION_FAILED. The answer then carries producer id -1 and
// epoch -1.
func (b *Broker) handleInitProducerIDAuthorized(r *request) (kmsg.Response, error) {
	req := r.body.(*kmsg.InitProducerIDRequest)
	if b.authorizedInitProducerID(r, req.TransactionalID) {
		return b.handleInitProducerID(r)
	}
	resp := req.ResponseKind().(*kmsg.InitProducerIDResponse)
	resp.ProducerID, resp.ProducerEpoch = -1, -1
	resp.ErrorCode = kerr.ClusterAuthorizationFailed.Code
	if req.TransactionalID != nil {
		resp.ErrorCode = kerr.TransactionalIDAuthorizationFailed.Code
	}
	return resp, nil
}
