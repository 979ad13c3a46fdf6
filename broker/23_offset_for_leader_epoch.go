package broker

// OffsetForLeaderEpoch: v0-4
//
// Behaviour:
//   - Answers from the leader's leader-epoch cache (KIP-101/279): for the
//     requested epoch, the largest known epoch <= it and the offset where
//     that epoch ended (the log end offset for the current epoch); -1/-1
//     when the leader knows no such epoch.
//   - Followers use it to truncate before fetching from a new leader;
//     clients (KIP-320) use it to detect log truncation after a leader
//     change.
//   - Authorization (Kafka 2.8): ClusterAction on the cluster (followers)
//     allows every topic, else Describe per topic (KIP-320 consumers);
//     refused partitions answer TOPIC_AUTHORIZATION_FAILED.
//   - Only the leader answers (NOT_LEADER_FOR_PARTITION elsewhere), except
//     replica id -2 (debugging), as Kafka. A current leader epoch older or
//     newer than the partition's answers FENCED_LEADER_EPOCH or
//     UNKNOWN_LEADER_EPOCH (v2+).
//
// Version notes:
//   - v1: leader epoch in the answer. v2: current leader epoch (KIP-320).
//   - v3: replica id. v4: flexible.

import (
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"

	"samsa/kafka"
)

func (b *Broker) handleOffsetForLeaderEpoch(r *request) (kmsg.Response, error) {
	req := r.body.(*kmsg.OffsetForLeaderEpochRequest)
	resp := req.ResponseKind().(*kmsg.OffsetForLeaderEpochResponse)
	replicaID := int32(-1)
	if req.Version >= 3 {
		replicaID = req.ReplicaID
	}
	describe := b.describeOrClusterAction(r)
	for _, t := range req.Topics {
		rt := kmsg.NewOffsetForLeaderEpochResponseTopic()
		rt.Topic = t.Topic
		for _, p := range t.Partitions {
			rp := kmsg.NewOffsetForLeaderEpochResponseTopicPartition()
			rp.Partition = p.Partition
			rp.LeaderEpoch, rp.EndOffset = -1, -1
			if !describe.ok(t.Topic) {
				rp.ErrorCode = kerr.TopicAuthorizationFailed.Code
				rt.Partitions = append(rt.Partitions, rp)
				continue
			}
			current := int32(-1)
			if req.Version >= 2 {
				current = p.CurrentLeaderEpoch
			}
			ans, err := b.replicas.EndOffsetForEpoch(kafka.TopicPartition{Topic: t.Topic, Partition: p.Partition},
				p.LeaderEpoch, current, replicaID)
			if err != nil {
				rp.ErrorCode = b.errorCode(err)
			} else {
				rp.LeaderEpoch, rp.EndOffset = ans.LeaderEpoch, ans.EndOffset
			}
			rt.Partitions = append(rt.Partitions, rp)
		}
		resp.Topics = append(resp.Topics, rt)
	}
	return resp, nil
}
