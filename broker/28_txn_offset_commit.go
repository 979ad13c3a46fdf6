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
//   - No ACL check: Kafka requires Write on the transactional id and Read
//     on the group and topics.
//
// Version notes:
//   - v2: committed leader epoch. v3: generation_id, member_id,
//     group_instance_id (KIP-447), flexible.

import (
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"

	"samsa/broker/group"
)

func (b *Broker) handleTxnOffsetCommit(r *request) (kmsg.Response, error) {
	req := r.body.(*kmsg.TxnOffsetCommitRequest)
	resp := req.ResponseKind().(*kmsg.TxnOffsetCommitResponse)
	in := group.TxnCommitRequest{Group: req.Group, TransactionalID: req.TransactionalID,
		ProducerID: req.ProducerID, ProducerEpoch: req.ProducerEpoch, Generation: req.Generation, MemberID: req.MemberID}
	if req.InstanceID != nil {
		in.GroupInstanceID = *req.InstanceID
	}
	for _, t := range req.Topics {
		for _, p := range t.Partitions {
			md := ""
			if p.Metadata != nil {
				md = *p.Metadata
			}
			in.Offsets = append(in.Offsets, group.CommitOffset{TopicPartition: group.TopicPartition{Topic: t.Topic, Partition: p.Partition},
				Offset: p.Offset, LeaderEpoch: p.LeaderEpoch, Metadata: md})
		}
	}
	codes := b.groups.CommitTxnOffsets(r.ctx, in)
	i := 0
	for _, t := range req.Topics {
		rt := kmsg.NewTxnOffsetCommitResponseTopic()
		rt.Topic = t.Topic
		for _, p := range t.Partitions {
			rp := kmsg.NewTxnOffsetCommitResponseTopicPartition()
			rp.Partition, rp.ErrorCode = p.Partition, codes[i]
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
