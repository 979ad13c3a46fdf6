package broker

// AddPartitionsToTxn: v0-3
//
// Behaviour:
//   - Client form (v0-3), as Kafka 2.8's handleAddPartitionsToTransaction:
//     a partition missing from the metadata cache is
//     UNKNOWN_TOPIC_OR_PARTITION and an internal topic
//     TOPIC_AUTHORIZATION_FAILED; if any partition fails, the others get
//     OPERATION_NOT_ATTEMPTED and nothing is added. Otherwise the
//     coordinator (broker/txn) answers one code for every partition:
//     INVALID_PRODUCER_ID_MAPPING, PRODUCER_FENCED (INVALID_PRODUCER_EPOCH
//     below v2), CONCURRENT_TRANSACTIONS while a transition is pending or
//     the previous transaction is completing, NOT_COORDINATOR,
//     COORDINATOR_LOAD_IN_PROGRESS; NONE once the partitions are in the
//     Ongoing transaction (replicated to __transaction_state).
//   - v4 (KIP-890 part 1, Kafka 3.6) is accepted as an inter-broker request
//     and not advertised in ApiVersions (Kafka 2.8 offers up to v3): a
//     partition leader asks whether partitions are in a producer's open
//     transaction. Only verify_only entries are served: per partition NONE
//     or INVALID_TXN_STATE, or one code for the transaction
//     (INVALID_PRODUCER_ID_MAPPING, PRODUCER_FENCED,
//     CONCURRENT_TRANSACTIONS, NOT_COORDINATOR,
//     COORDINATOR_LOAD_IN_PROGRESS); nothing is written. A v4 entry
//     without verify_only (KIP-890 part 2's broker-side add) is
//     INVALID_REQUEST.
//   - Authorization as Kafka 2.8: Write on the transactional id, else
//     every partition TRANSACTIONAL_ID_AUTHORIZATION_FAILED; then Write per
//     topic (internal topics never), else TOPIC_AUTHORIZATION_FAILED, before
//     the existence check so a refused principal cannot tell a missing topic
//     from an existing one. v4 needs ClusterAction on the cluster (Kafka
//     3.6), else CLUSTER_AUTHORIZATION_FAILED at the top level.
//
// Version notes:
//   - v1: same as v0. v2: PRODUCER_FENCED replaces INVALID_PRODUCER_EPOCH.
//   - v3: flexible. v4: batched, verify_only (broker to broker only).

import (
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"

	"samsa/broker/acl"
	"samsa/kafka"
)

// addPartitionsVerifyVersion is the first version with verify_only.
const addPartitionsVerifyVersion = 4

func (b *Broker) handleAddPartitionsToTxn(r *request) (kmsg.Response, error) {
	req := r.body.(*kmsg.AddPartitionsToTxnRequest)
	resp := req.ResponseKind().(*kmsg.AddPartitionsToTxnResponse)
	if req.Version >= addPartitionsVerifyVersion {
		if !b.authorizedCluster(r, acl.OpClusterAction) {
			resp.ErrorCode = kerr.ClusterAuthorizationFailed.Code
			return resp, nil
		}
		for _, t := range req.Transactions {
			resp.Transactions = append(resp.Transactions, b.verifyTxnPartitions(t))
		}
		return resp, nil
	}
	snap := b.meta.Snapshot()
	codes := map[kafka.TopicPartition]int16{}
	var tps []kafka.TopicPartition
	failed := false
	idAllowed := b.authorizedTransactionalID(r, acl.OpWrite, &req.TransactionalID)
	write := b.topicAuthCache(r, acl.OpWrite)
	for _, t := range req.Topics {
		for _, p := range t.Partitions {
			tp := kafka.TopicPartition{Topic: t.Topic, Partition: p}
			tps = append(tps, tp)
			switch _, ok := snap.Partition(t.Topic, p); {
			case !idAllowed:
				codes[tp], failed = kerr.TransactionalIDAuthorizationFailed.Code, true
			case isInternalTopic(t.Topic) || !write.ok(t.Topic):
				codes[tp], failed = kerr.TopicAuthorizationFailed.Code, true
			case !ok:
				codes[tp], failed = kerr.UnknownTopicOrPartition.Code, true
			}
		}
	}
	code := int16(0)
	if !failed {
		code = fencedCode(b.txns.AddPartitions(r.ctx, req.TransactionalID, req.ProducerID, req.ProducerEpoch, tps), req.Version >= 2)
	}
	byTopic := map[string]int{}
	for _, tp := range tps {
		c, ok := codes[tp]
		switch {
		case !failed:
			c = code
		case !ok:
			c = kerr.OperationNotAttempted.Code
		}
		i, ok := byTopic[tp.Topic]
		if !ok {
			i = len(resp.Topics)
			byTopic[tp.Topic] = i
			rt := kmsg.NewAddPartitionsToTxnResponseTopic()
			rt.Topic = tp.Topic
			resp.Topics = append(resp.Topics, rt)
		}
		rp := kmsg.NewAddPartitionsToTxnResponseTopicPartition()
		rp.Partition, rp.ErrorCode = tp.Partition, c
		resp.Topics[i].Partitions = append(resp.Topics[i].Partitions, rp)
	}
	return resp, nil
}

// verifyTxnPartitions answers one v4 entry.
func (b *Broker) verifyTxnPartitions(t kmsg.AddPartitionsToTxnRequestTransaction) kmsg.AddPartitionsToTxnResponseTransaction {
	out := kmsg.NewAddPartitionsToTxnResponseTransaction()
	out.TransactionalID = t.TransactionalID
	var tps []kafka.TopicPartition
	for _, tt := range t.Topics {
		for _, p := range tt.Partitions {
			tps = append(tps, kafka.TopicPartition{Topic: tt.Topic, Partition: p})
		}
	}
	var codes map[kafka.TopicPartition]int16
	code := int16(kerr.InvalidRequest.Code)
	if t.VerifyOnly {
		codes, code = b.txns.Verify(t.TransactionalID, t.ProducerID, t.ProducerEpoch, tps)
	}
	for _, tt := range t.Topics {
		rt := kmsg.NewAddPartitionsToTxnResponseTransactionTopic()
		rt.Topic = tt.Topic
		for _, p := range tt.Partitions {
			rp := kmsg.NewAddPartitionsToTxnResponseTransactionTopicPartition()
			rp.Partition, rp.ErrorCode = p, code
			if code == 0 {
				rp.ErrorCode = codes[kafka.TopicPartition{Topic: tt.Topic, Partition: p}]
			}
			rt.Partitions = append(rt.Partitions, rp)
		}
		out.Topics = append(out.Topics, rt)
	}
	return out
}
