package broker

// ElectLeaders: v0-2
//
// Behaviour:
//   - Only the active controller answers (NOT_CONTROLLER elsewhere, as a
//     top-level error from v1 and per partition in v0).
//   - Preferred elections move leadership to the first replica when it is
//     alive and in the ISR; unclean elections (v1+, KIP-460) elect any live
//     replica for leaderless partitions. Per partition:
//     ELECTION_NOT_NEEDED, PREFERRED_LEADER_NOT_AVAILABLE,
//     ELIGIBLE_LEADERS_NOT_AVAILABLE, UNKNOWN_TOPIC_OR_PARTITION,
//     INVALID_TOPIC_EXCEPTION (topic being deleted). Null topics elect
//     every partition.
//   - The decision is the controller's (controller.ElectLeaders); the
//     answer comes once it wrote the new leaders, without waiting for the
//     timeout.
//   - Authorization: Alter on the cluster, else CLUSTER_AUTHORIZATION_FAILED
//     at the top (v1+) and on every named partition, nothing elected (Kafka
//     2.8).
//
// Version notes:
//   - v0 was ElectPreferredLeaders (KIP-183). v1: election type and
//     top-level error (KIP-460). v2: flexible.

import (
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"

	"samsa/broker/acl"
	"samsa/controller"
	"samsa/kafka"
)

func (b *Broker) handleElectLeaders(r *request) (kmsg.Response, error) {
	req := r.body.(*kmsg.ElectLeadersRequest)
	resp := req.ResponseKind().(*kmsg.ElectLeadersResponse)
	var tps []kafka.TopicPartition
	if req.Topics != nil {
		tps = []kafka.TopicPartition{}
		for _, t := range req.Topics {
			for _, p := range t.Partitions {
				tps = append(tps, kafka.TopicPartition{Topic: t.Topic, Partition: p})
			}
		}
	}
	var results map[kafka.TopicPartition]error
	var err error
	if !b.authorizedCluster(r, acl.OpAlter) {
		// Kafka 2.8: CLUSTER_AUTHORIZATION_FAILED at the top (v1+) and on
		// every named partition; nothing is elected.
		resp.ErrorCode = kerr.ClusterAuthorizationFailed.Code
		results = map[kafka.TopicPartition]error{}
		for _, tp := range tps {
			results[tp] = kerr.ClusterAuthorizationFailed
		}
	} else if !b.IsController() {
		err = errNotController
	} else {
		results, err = b.ctrl.ElectLeaders(r.ctx, controller.ElectionType(req.ElectionType), tps)
	}
	if err != nil {
		if req.Version >= 1 {
			resp.ErrorCode = b.errorCode(err)
			return resp, nil
		}
		results = map[kafka.TopicPartition]error{}
		for _, tp := range tps {
			results[tp] = err
		}
	}
	idx := map[string]int{}
	add := func(tp kafka.TopicPartition, perr error) {
		i, ok := idx[tp.Topic]
		if !ok {
			rt := kmsg.NewElectLeadersResponseTopic()
			rt.Topic = tp.Topic
			resp.Topics = append(resp.Topics, rt)
			i = len(resp.Topics) - 1
			idx[tp.Topic] = i
		}
		rp := kmsg.NewElectLeadersResponseTopicPartition()
		rp.Partition = tp.Partition
		if perr != nil {
			rp.ErrorCode = b.errorCode(perr)
			if rp.ErrorCode != kerr.UnknownServerError.Code {
				msg := perr.Error()
				rp.ErrorMessage = &msg
			}
		}
		resp.Topics[i].Partitions = append(resp.Topics[i].Partitions, rp)
	}
	if tps != nil {
		for _, tp := range tps {
			add(tp, results[tp])
		}
	} else {
		for tp, perr := range results {
			add(tp, perr)
		}
	}
	return resp, nil
}
