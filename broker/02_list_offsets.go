package broker

// ListOffsets: v0-6
//
// Behaviour:
//   - Timestamp -2 (earliest): the log start offset. -1 (latest): the high
//     watermark for consumers (replica id -1; the log end offset for any
//     other replica id, -2 included, which Kafka gives no isolation level);
//     read_committed (isolation level 1, v2+) gives the last stable offset,
//     which also bounds timestamp lookups (KIP-98).
//   - Any other timestamp: the first offset whose record timestamp is at or
//     after it (from the time indexes), if that offset is below that limit;
//     otherwise offset -1 and timestamp -1, as Kafka.
//   - Only the leader answers (NOT_LEADER_FOR_PARTITION elsewhere), except
//     for the debugging replica id -2 (kafka-replica-verification), which
//     any replica with a log answers from its own log, as Kafka 2.8
//     (fetchOnlyFromLeader = replicaId != DEBUGGING_REPLICA_ID); unknown
//     partitions answer UNKNOWN_TOPIC_OR_PARTITION.
//   - v0 (legacy, max_num_offsets): up to max_num_offsets offsets, newest
//     first, from the segment base offsets and the log end, each paired with
//     the segment's largest timestamp (Kafka used the file's mtime): -1 from
//     the log end down, -2 the log start only, a timestamp the segments at or
//     before it; consumers see the high watermark instead of larger offsets.
//   - A partition named twice in one request answers INVALID_REQUEST for
//     both (Kafka 2.8).
//   - Authorization: Describe per topic, checked first
//     (TOPIC_AUTHORIZATION_FAILED).
//
// Version notes:
//   - v1: one offset with its timestamp (KIP-79). v2: isolation level
//     (KIP-98). v4: current leader epoch in, leader epoch out (KIP-320).
//   - v6: flexible.

import (
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"

	"samsa/broker/acl"
	"samsa/kafka"
)

func (b *Broker) handleListOffsets(r *request) (kmsg.Response, error) {
	req := r.body.(*kmsg.ListOffsetsRequest)
	resp := req.ResponseKind().(*kmsg.ListOffsetsResponse)
	seen := map[kafka.TopicPartition]int{}
	for _, t := range req.Topics {
		for _, p := range t.Partitions {
			seen[kafka.TopicPartition{Topic: t.Topic, Partition: p.Partition}]++
		}
	}
	describe := b.topicAuthCache(r, acl.OpDescribe)
	for _, t := range req.Topics {
		rt := kmsg.NewListOffsetsResponseTopic()
		rt.Topic = t.Topic
		for _, p := range t.Partitions {
			rp := kmsg.NewListOffsetsResponseTopicPartition()
			rp.Partition = p.Partition
			rp.Timestamp, rp.Offset, rp.LeaderEpoch = -1, -1, -1
			tp := kafka.TopicPartition{Topic: t.Topic, Partition: p.Partition}
			if !describe.ok(t.Topic) {
				rp.ErrorCode = kerr.TopicAuthorizationFailed.Code
				if req.Version == 0 {
					rp.OldStyleOffsets = []int64{}
				}
				rt.Partitions = append(rt.Partitions, rp)
				continue
			}
			if seen[tp] > 1 {
				rp.ErrorCode = b.errorCode(errInvalidRequest)
				rt.Partitions = append(rt.Partitions, rp)
				continue
			}
			if req.Version == 0 {
				offs, err := b.replicas.LegacyOffsets(tp, p.Timestamp, p.MaxNumOffsets, req.ReplicaID)
				rp.ErrorCode = b.errorCode(err)
				rp.OldStyleOffsets = offs
				if rp.OldStyleOffsets == nil {
					rp.OldStyleOffsets = []int64{}
				}
				rt.Partitions = append(rt.Partitions, rp)
				continue
			}
			epoch := int32(-1)
			if req.Version >= 4 {
				epoch = p.CurrentLeaderEpoch
			}
			ans, err := b.replicas.ListOffset(tp, p.Timestamp, req.ReplicaID, epoch, req.Version >= 2 && req.IsolationLevel == 1)
			if err != nil {
				rp.ErrorCode = b.errorCode(err)
				rt.Partitions = append(rt.Partitions, rp)
				continue
			}
			rp.Offset, rp.Timestamp, rp.LeaderEpoch = ans.Offset, ans.Timestamp, ans.LeaderEpoch
			rt.Partitions = append(rt.Partitions, rp)
		}
		resp.Topics = append(resp.Topics, rt)
	}
	return resp, nil
}
