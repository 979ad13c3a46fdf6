package broker

// DescribeProducers: v0-0
//
// Behaviour:
//   - KIP-664 (Kafka 2.8 has the RPC; the admin API and kafka-transactions.sh
//     came in 3.0): for each partition, the producers in this replica's
//     producer state (leader or follower: any replica answers, as Kafka),
//     with epoch, last sequence (-1 when only a marker is known), last
//     timestamp, coordinator epoch of the last marker and the first offset
//     of the open transaction (-1: none).
//   - Unknown topic or partition, or not hosted here:
//     UNKNOWN_TOPIC_OR_PARTITION / NOT_LEADER_OR_FOLLOWER per partition.
//   - Read on the topic, else TOPIC_AUTHORIZATION_FAILED per partition
//     (Kafka's handleDescribeProducersRequest).
//
// Version notes:
//   - v0: flexible.

import (
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"

	"samsa/broker/acl"
	"samsa/broker/record"
	"samsa/kafka"
)

func (b *Broker) handleDescribeProducers(r *request) (kmsg.Response, error) {
	req := r.body.(*kmsg.DescribeProducersRequest)
	resp := req.ResponseKind().(*kmsg.DescribeProducersResponse)
	for _, t := range req.Topics {
		rt := kmsg.NewDescribeProducersResponseTopic()
		rt.Topic = t.Topic
		for _, p := range t.Partitions {
			rp := kmsg.NewDescribeProducersResponseTopicPartition()
			rp.Partition = p
			if !b.authorizedTopic(r, acl.OpRead, t.Topic) {
				rp.ErrorCode = kerr.TopicAuthorizationFailed.Code
				rt.Partitions = append(rt.Partitions, rp)
				continue
			}
			entries, err := b.replicas.ProducerStates(kafka.TopicPartition{Topic: t.Topic, Partition: p})
			if err != nil {
				rp.ErrorCode = b.errorCode(err)
				rt.Partitions = append(rt.Partitions, rp)
				continue
			}
			rp.ActiveProducers = make([]kmsg.DescribeProducersResponseTopicPartitionActiveProducer, 0, len(entries))
			for _, e := range entries {
				ap := kmsg.NewDescribeProducersResponseTopicPartitionActiveProducer()
				ap.ProducerID, ap.ProducerEpoch = e.ProducerID, int32(e.Epoch)
				ap.LastSequence, ap.LastTimestamp = record.NoSequence, e.LastTimestamp
				if n := len(e.Batches); n > 0 {
					ap.LastSequence = e.Batches[n-1].LastSeq
				}
				ap.CoordinatorEpoch, ap.CurrentTxnStartOffset = e.CoordinatorEpoch, e.CurrentTxnFirstOffset
				rp.ActiveProducers = append(rp.ActiveProducers, ap)
			}
			rt.Partitions = append(rt.Partitions, rp)
		}
		resp.Topics = append(resp.Topics, rt)
	}
	return resp, nil
}
