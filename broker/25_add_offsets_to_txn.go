package broker

// AddOffsetsToTxn: v0-3
//
// Behaviour:
//   - Adds the group's __consumer_offsets partition (abs(hash(group)) %
//     offsets.topic.num.partitions) to the transaction, with the codes of
//     AddPartitionsToTxn (Kafka 2.8's handleAddOffsetsToTransaction), so
//     the commit/abort marker reaches the group coordinator.
//   - Authorization as Kafka 2.8: Write on the transactional id
//     (TRANSACTIONAL_ID_AUTHORIZATION_FAILED), then Read on the group
//     (GROUP_AUTHORIZATION_FAILED), before the coordinator is asked.
//
// Version notes:
//   - v1: same as v0. v2: PRODUCER_FENCED replaces INVALID_PRODUCER_EPOCH.
//     v3: flexible.

import (
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"

	"samsa/broker/acl"
	"samsa/kafka"
)

func (b *Broker) handleAddOffsetsToTxn(r *request) (kmsg.Response, error) {
	req := r.body.(*kmsg.AddOffsetsToTxnRequest)
	resp := req.ResponseKind().(*kmsg.AddOffsetsToTxnResponse)
	switch {
	case !b.authorizedTransactionalID(r, acl.OpWrite, &req.TransactionalID):
		resp.ErrorCode = kerr.TransactionalIDAuthorizationFailed.Code
		return resp, nil
	case !b.authorizedGroup(r, acl.OpRead, req.Group):
		resp.ErrorCode = kerr.GroupAuthorizationFailed.Code
		return resp, nil
	}
	tp := kafka.TopicPartition{Topic: consumerOffsetsTopic, Partition: b.groups.PartitionFor(req.Group)}
	code := b.txns.AddPartitions(r.ctx, req.TransactionalID, req.ProducerID, req.ProducerEpoch, []kafka.TopicPartition{tp})
	resp.ErrorCode = fencedCode(code, req.Version >= 2)
	return resp, nil
}
