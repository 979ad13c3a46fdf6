package broker

// AlterPartitionReassignments: v0-0
//
// Behaviour:
//   - Only the active controller answers (NOT_CONTROLLER as the top-level
//     error elsewhere). The controller (controller.AlterPartitionReassignments,
//     KIP-455) starts, replaces, or with null replicas cancels each
//     partition's reassignment; the answer comes once they have started,
//     not when they complete.
//   - Per partition: UNKNOWN_TOPIC_OR_PARTITION, INVALID_REPLICA_ASSIGNMENT
//     (empty, duplicate or dead replicas), NO_REASSIGNMENT_IN_PROGRESS (a
//     cancellation with nothing to cancel).
//
//   - Samsa: a partition with the tagged field LogEndReassignmentTag = 0x01
//     has its new replicas start at the leader's log end instead of copying
//     the partition (reassign_log_end.go); the entries are stored in
//     /config/samsa_log_end_replicas/<topic> before the controller acts.
//   - Authorization: Alter on the cluster, else CLUSTER_AUTHORIZATION_FAILED
//     and nothing changes (Kafka 2.8).
//
// Version notes:
//   - v0: flexible (Kafka 2.4+). v1 (replication factor change flag) is not
//     offered.

import (
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"

	"samsa/broker/acl"
	"samsa/kafka"
)

func (b *Broker) handleAlterPartitionReassignments(r *request) (kmsg.Response, error) {
	req := r.body.(*kmsg.AlterPartitionAssignmentsRequest)
	resp := req.ResponseKind().(*kmsg.AlterPartitionAssignmentsResponse)
	if !b.authorizedCluster(r, acl.OpAlter) {
		resp.ErrorCode, resp.ErrorMessage = kerr.ClusterAuthorizationFailed.Code, kmsg.StringPtr(msgClusterAuthFailed)
		return resp, nil
	}
	if !b.IsController() {
		b.setTopicErr(&resp.ErrorCode, &resp.ErrorMessage, errNotController)
		return resp, nil
	}
	if err := b.recordLogEndReassignments(req); err != nil {
		b.setTopicErr(&resp.ErrorCode, &resp.ErrorMessage, err)
		return resp, nil
	}
	targets := map[kafka.TopicPartition][]int32{}
	for _, t := range req.Topics {
		for _, p := range t.Partitions {
			targets[kafka.TopicPartition{Topic: t.Topic, Partition: p.Partition}] = p.Replicas
		}
	}
	results, err := b.ctrl.AlterPartitionReassignments(r.ctx, targets)
	if err != nil {
		b.setTopicErr(&resp.ErrorCode, &resp.ErrorMessage, err)
		return resp, nil
	}
	for _, t := range req.Topics {
		rt := kmsg.NewAlterPartitionAssignmentsResponseTopic()
		rt.Topic = t.Topic
		for _, p := range t.Partitions {
			rp := kmsg.NewAlterPartitionAssignmentsResponseTopicPartition()
			rp.Partition = p.Partition
			if perr := results[kafka.TopicPartition{Topic: t.Topic, Partition: p.Partition}]; perr != nil {
				b.setTopicErr(&rp.ErrorCode, &rp.ErrorMessage, perr)
			}
			rt.Partitions = append(rt.Partitions, rp)
		}
		resp.Topics = append(resp.Topics, rt)
	}
	return resp, nil
}
