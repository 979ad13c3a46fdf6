package broker

// DeleteRecords: v0-2
//
// Behaviour:
//   - The leader moves each partition's log start offset to the requested
//     offset (-1: the high watermark) and deletes the segments wholly below
//     it (KIP-107); consumers then read from there. An offset above the
//     high watermark answers OFFSET_OUT_OF_RANGE; followers answer
//     NOT_LEADER_FOR_PARTITION.
//   - The low watermark answered is the leader's new log start offset.
//     Kafka waits (DelayedDeleteRecords) until every replica reached it;
//     Samsa answers at once and followers adopt the leader's log start
//     offset from their next fetch.
//
// Version notes:
//   - v1: throttle semantics only. v2: flexible.

import (
	"github.com/twmb/franz-go/pkg/kmsg"

	"samsa/broker/replica"
)

func (b *Broker) handleDeleteRecords(r *request) (kmsg.Response, error) {
	req := r.body.(*kmsg.DeleteRecordsRequest)
	resp := req.ResponseKind().(*kmsg.DeleteRecordsResponse)
	for _, t := range req.Topics {
		rt := kmsg.NewDeleteRecordsResponseTopic()
		rt.Topic = t.Topic
		for _, p := range t.Partitions {
			rp := kmsg.NewDeleteRecordsResponseTopicPartition()
			rp.Partition = p.Partition
			lw, err := b.replicas.DeleteRecords(replica.TopicPartition{Topic: t.Topic, Partition: p.Partition}, p.Offset)
			rp.LowWatermark = lw
			if err != nil {
				rp.LowWatermark = -1
				rp.ErrorCode = b.errorCode(err)
			}
			rt.Partitions = append(rt.Partitions, rp)
		}
		resp.Topics = append(resp.Topics, rt)
	}
	return resp, nil
}
