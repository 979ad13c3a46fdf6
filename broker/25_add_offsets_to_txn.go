package broker

// AddOffsetsToTxn: v0-3
//
// Behaviour:
//   - Adds the group's __consumer_offsets partition (abs(hash(group)) %
//     offsets.topic.num.partitions) to the transaction, with the codes of
//     AddPartitionsToTxn (Kafka 2.8's handleAddOffsetsToTransaction), so
//     the commit/abort marker reaches the group coordinator.
//   - No ACL check: Kafka requires Write on the transactional id and Read
//     on the group.
//
// Version notes:
//   - v1: same as v0. v2: PRODUCER_FENCED replaces INVALID_PRODUCER_EPOCH.
//     v3: flexible.

import (
	"github.com/twmb/franz-go/pkg/kmsg"

	"samsa/broker/txn"
)

func (b *Broker) handleAddOffsetsToTxn(r *request) (kmsg.Response, error) {
	req := r.body.(*kmsg.AddOffsetsToTxnRequest)
	resp := req.ResponseKind().(*kmsg.AddOffsetsToTxnResponse)
	tp := txn.TopicPartition{Topic: consumerOffsetsTopic, Partition: b.groups.PartitionFor(req.Group)}
	code := b.txns.AddPartitions(r.ctx, req.TransactionalID, req.ProducerID, req.ProducerEpoch, []txn.TopicPartition{tp})
	resp.ErrorCode = fencedCode(code, req.Version >= 2)
	return resp, nil
}
