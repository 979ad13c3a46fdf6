package broker

// ListPartitionReassignments: v0-0
//
// Behaviour:
//   - Only the active controller answers (NOT_CONTROLLER elsewhere). Lists
//     the reassignments in progress (all, or among the named partitions)
//     with the current replicas and the adding/removing sets (KIP-455).
//   - Authorization: Describe on the cluster, else
//     CLUSTER_AUTHORIZATION_FAILED (Kafka 2.8).
//
// Version notes:
//   - v0: flexible (Kafka 2.4+).

import (
	"sort"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"

	"samsa/broker/acl"
	"samsa/kafka"
)

func (b *Broker) handleListPartitionReassignments(r *request) (kmsg.Response, error) {
	req := r.body.(*kmsg.ListPartitionReassignmentsRequest)
	resp := req.ResponseKind().(*kmsg.ListPartitionReassignmentsResponse)
	if !b.authorizedCluster(r, acl.OpDescribe) {
		resp.ErrorCode, resp.ErrorMessage = kerr.ClusterAuthorizationFailed.Code, kmsg.StringPtr(msgClusterAuthFailed)
		return resp, nil
	}
	if !b.IsController() {
		b.setTopicErr(&resp.ErrorCode, &resp.ErrorMessage, errNotController)
		return resp, nil
	}
	var tps []kafka.TopicPartition
	if req.Topics != nil {
		tps = []kafka.TopicPartition{}
		for _, t := range req.Topics {
			for _, p := range t.Partitions {
				tps = append(tps, kafka.TopicPartition{Topic: t.Topic, Partition: p})
			}
		}
	}
	ras, err := b.ctrl.ListPartitionReassignments(r.ctx, tps)
	if err != nil {
		b.setTopicErr(&resp.ErrorCode, &resp.ErrorMessage, err)
		return resp, nil
	}
	keys := make([]kafka.TopicPartition, 0, len(ras))
	for tp := range ras {
		keys = append(keys, tp)
	}
	sort.Slice(keys, func(i, j int) bool {
		return keys[i].Topic < keys[j].Topic || keys[i].Topic == keys[j].Topic && keys[i].Partition < keys[j].Partition
	})
	for _, tp := range keys {
		ra := ras[tp]
		if n := len(resp.Topics); n == 0 || resp.Topics[n-1].Topic != tp.Topic {
			rt := kmsg.NewListPartitionReassignmentsResponseTopic()
			rt.Topic = tp.Topic
			resp.Topics = append(resp.Topics, rt)
		}
		rp := kmsg.NewListPartitionReassignmentsResponseTopicPartition()
		rp.Partition = tp.Partition
		rp.Replicas, rp.AddingReplicas, rp.RemovingReplicas = nonNil(ra.Replicas), nonNil(ra.Adding), nonNil(ra.Removing)
		rt := &resp.Topics[len(resp.Topics)-1]
		rt.Partitions = append(rt.Partitions, rp)
	}
	return resp, nil
}

func nonNil(s []int32) []int32 {
	if s == nil {
		return []int32{}
	}
	return s
}
