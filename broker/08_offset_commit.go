package broker

// OffsetCommit: v0-8
//
// Behaviour:
//   - v0 stores offsets in ZooKeeper under /consumers/<g>/offsets/<t>/<p>
//     (the 0.8.1 format Kafka 2.8 still uses for v0), without metadata;
//     partitions of unknown topics answer UNKNOWN_TOPIC_OR_PARTITION.
//   - Partitions missing from the metadata cache answer
//     UNKNOWN_TOPIC_OR_PARTITION in every version (Kafka 2.8's
//     nonExistingTopicErrors); the others are committed.
//   - v1+ go to broker/group's CommitOffsets: written to __consumer_offsets
//     with acks=all and answered once committed; generation -1 commits for
//     a group that only stores offsets (simple consumers).
//   - retention_time_ms (v2-4) is honoured (-1 = offsets.retention.minutes).
//   - Authorization (Kafka 2.8): Read on the group, else every partition
//     GROUP_AUTHORIZATION_FAILED; then Read per topic
//     (TOPIC_AUTHORIZATION_FAILED, before the existence check).
//
// Version notes:
//   - v1: generation, member id, per-partition timestamp (ignored).
//   - v2: retention time. v3: throttle. v5: retention time removed.
//   - v6: leader epoch (KIP-320). v7: group instance id. v8: flexible.

import (
	"fmt"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"

	"samsa/broker/acl"
	"samsa/broker/group"
	"samsa/kafka"
)

func (b *Broker) handleOffsetCommit(r *request) (kmsg.Response, error) {
	req := r.body.(*kmsg.OffsetCommitRequest)
	resp := req.ResponseKind().(*kmsg.OffsetCommitResponse)
	var codes []int16
	read := b.topicAuthCache(r, acl.OpRead)
	if !b.authorizedGroup(r, acl.OpRead, req.Group) {
		for _, t := range req.Topics {
			for range t.Partitions {
				codes = append(codes, kerr.GroupAuthorizationFailed.Code)
			}
		}
	} else if req.Version == 0 {
		codes = b.commitOffsetsZK(req, read)
	} else {
		in := group.CommitRequest{Group: req.Group, Generation: req.Generation, MemberID: req.MemberID, RetentionMs: -1}
		if req.Version >= 2 && req.Version <= 4 {
			in.RetentionMs = req.RetentionTimeMillis
		}
		if req.InstanceID != nil {
			in.GroupInstanceID = *req.InstanceID
		}
		// Kafka 2.8 answers partitions missing from the metadata cache
		// UNKNOWN_TOPIC_OR_PARTITION and commits the others.
		snap := b.meta.Snapshot()
		var known []int // request positions of the partitions sent to the coordinator
		for _, t := range req.Topics {
			for _, p := range t.Partitions {
				if !read.ok(t.Topic) {
					codes = append(codes, kerr.TopicAuthorizationFailed.Code)
					continue
				}
				if _, ok := snap.Partition(t.Topic, p.Partition); !ok {
					codes = append(codes, b.errorCode(fmt.Errorf("%w: %s-%d", errUnknownTopic, t.Topic, p.Partition)))
					continue
				}
				known = append(known, len(codes))
				codes = append(codes, 0)
				co := group.CommitOffset{TopicPartition: kafka.TopicPartition{Topic: t.Topic, Partition: p.Partition},
					Offset: p.Offset, LeaderEpoch: -1}
				if req.Version >= 6 {
					co.LeaderEpoch = p.LeaderEpoch
				}
				if p.Metadata != nil {
					co.Metadata = *p.Metadata
				}
				in.Offsets = append(in.Offsets, co)
			}
		}
		if len(in.Offsets) > 0 {
			for j, code := range b.groups.CommitOffsets(r.ctx, in) {
				if j < len(known) {
					codes[known[j]] = code
				}
			}
		}
	}
	i := 0
	for _, t := range req.Topics {
		rt := kmsg.NewOffsetCommitResponseTopic()
		rt.Topic = t.Topic
		for _, p := range t.Partitions {
			rp := kmsg.NewOffsetCommitResponseTopicPartition()
			rp.Partition = p.Partition
			if i < len(codes) {
				rp.ErrorCode = codes[i]
			}
			i++
			rt.Partitions = append(rt.Partitions, rp)
		}
		resp.Topics = append(resp.Topics, rt)
	}
	return resp, nil
}

// commitOffsetsZK is OffsetCommit v0: offsets in ZooKeeper.
func (b *Broker) commitOffsetsZK(req *kmsg.OffsetCommitRequest, read *authorizedTopicsCache) []int16 {
	snap := b.meta.Snapshot()
	var codes []int16
	for _, t := range req.Topics {
		for _, p := range t.Partitions {
			var err error
			if !read.ok(t.Topic) {
				err = kerr.TopicAuthorizationFailed
			} else if _, ok := snap.Partition(t.Topic, p.Partition); !ok {
				err = fmt.Errorf("%w: %s-%d", errUnknownTopic, t.Topic, p.Partition)
			} else {
				err = b.zk.SetConsumerOffset(req.Group, t.Topic, p.Partition, p.Offset)
			}
			codes = append(codes, b.errorCode(err))
		}
	}
	return codes
}
