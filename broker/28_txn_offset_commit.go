package broker

// TxnOffsetCommit: v0-3
//
// Behaviour:
//   - The group coordinator writes the offsets to __consumer_offsets as a
//     transactional batch of the producer and keeps them pending until the
//     transaction's marker lands on that partition: COMMIT makes them the
//     group's committed offsets, ABORT drops them
//     (group.Coordinator.CompleteTxnOffsets, called by the WriteTxnMarkers
//     handler). Meanwhile OffsetFetch with require_stable answers
//     UNSTABLE_OFFSET_COMMIT for them.
//   - Group checks as Kafka 2.8's doTxnCommitOffsets: a missing group is
//     created Empty; FENCED_INSTANCE_ID, UNKNOWN_MEMBER_ID (non-empty
//     unknown member id), ILLEGAL_GENERATION (generation >= 0 and not the
//     current one); NOT_COORDINATOR, COORDINATOR_LOAD_IN_PROGRESS
//     (COORDINATOR_NOT_AVAILABLE below v2, as Kafka), OFFSET_METADATA_TOO_LARGE.
//   - The batch continues the producer's sequence on the offsets partition
//     (Kafka writes no sequence there and skips the check for its own
//     appends; Samsa's log checks every producer batch).
//   - Authorization and partition checks as Kafka 2.8's
//     handleTxnOffsetCommitRequest: Write on the transactional id, else
//     every partition TRANSACTIONAL_ID_AUTHORIZATION_FAILED; Read on the
//     group, else every partition GROUP_AUTHORIZATION_FAILED; then Read per
//     topic (TOPIC_AUTHORIZATION_FAILED) and, only for allowed topics, an
//     unknown partition is UNKNOWN_TOPIC_OR_PARTITION. Those partitions are
//     not committed; the others are, and with none left the coordinator is
//     not asked.
//
// Version notes:
//   - v2: committed leader epoch. v3: generation_id, member_id,
//     group_instance_id (KIP-447), flexible.

import (
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"

	"samsa/broker/acl"
	"samsa/broker/group"
	"samsa/kafka"
)

func (b *Broker) handleTxnOffsetCommit(r *request) (kmsg.Response, error) {
	req := r.body.(*kmsg.TxnOffsetCommitRequest)
	resp := req.ResponseKind().(*kmsg.TxnOffsetCommitResponse)
	in := group.TxnCommitRequest{Group: req.Group, TransactionalID: req.TransactionalID,
		ProducerID: req.ProducerID, ProducerEpoch: req.ProducerEpoch, Generation: req.Generation, MemberID: req.MemberID}
	if req.InstanceID != nil {
		in.GroupInstanceID = *req.InstanceID
	}
	whole := int16(0)
	switch {
	case !b.authorizedTransactionalID(r, acl.OpWrite, &req.TransactionalID):
		whole = kerr.TransactionalIDAuthorizationFailed.Code
	case !b.authorizedGroup(r, acl.OpRead, req.Group):
		whole = kerr.GroupAuthorizationFailed.Code
	}
	snap := b.meta.Snapshot()
	read := b.topicAuthCache(r, acl.OpRead)
	// pre holds each partition's refusal in request order, 0 for those
	// handed to the coordinator.
	var pre []int16
	for _, t := range req.Topics {
		for _, p := range t.Partitions {
			code := whole
			if code == 0 {
				if !read.ok(t.Topic) {
					code = kerr.TopicAuthorizationFailed.Code
				} else if _, ok := snap.Partition(t.Topic, p.Partition); !ok {
					code = kerr.UnknownTopicOrPartition.Code
				}
			}
			pre = append(pre, code)
			if code != 0 {
				continue
			}
			md := ""
			if p.Metadata != nil {
				md = *p.Metadata
			}
			in.Offsets = append(in.Offsets, group.CommitOffset{TopicPartition: kafka.TopicPartition{Topic: t.Topic, Partition: p.Partition},
				Offset: p.Offset, LeaderEpoch: p.LeaderEpoch, Metadata: md})
		}
	}
	var codes []int16
	if len(in.Offsets) > 0 {
		codes = b.groups.CommitTxnOffsets(r.ctx, in)
	}
	i, j := 0, 0
	for _, t := range req.Topics {
		rt := kmsg.NewTxnOffsetCommitResponseTopic()
		rt.Topic = t.Topic
		for _, p := range t.Partitions {
			rp := kmsg.NewTxnOffsetCommitResponseTopicPartition()
			rp.Partition, rp.ErrorCode = p.Partition, pre[i]
			if rp.ErrorCode == 0 {
				rp.ErrorCode = codes[j]
				j++
			}
			if req.Version < 2 && rp.ErrorCode == kerr.CoordinatorLoadInProgress.Code {
				rp.ErrorCode = kerr.CoordinatorNotAvailable.Code
			}
			i++
			rt.Partitions = append(rt.Partitions, rp)
		}
		resp.Topics = append(resp.Topics, rt)
	}
	return resp, nil
}
