package broker

// DeleteRecords: v0-2
//
// Behaviour:
//   - The leader moves each partition's log start offset to the requested
//     offset (-1: the high watermark) and deletes the segments wholly below
//     it (KIP-107); consumers then read from there. An offset above the
//     high watermark answers OFFSET_OUT_OF_RANGE; followers answer
//     NOT_LEADER_FOR_PARTITION.
//   - Followers adopt the leader's log start offset from their next fetch
//     and report theirs in the following one (Fetch v5+). As Kafka's
//     DelayedDeleteRecords, the answer waits up to timeout_ms until the low
//     watermark (the smallest log start offset of the leader and the ISR
//     followers) reaches the requested offset, and carries it;
//     REQUEST_TIMED_OUT otherwise.
//   - Authorization: Delete per topic (TOPIC_AUTHORIZATION_FAILED, low
//     watermark -1), before the existence check, as Kafka 2.8.
//
// Version notes:
//   - v1: throttle semantics only. v2: flexible.

import (
	"time"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"

	"samsa/broker/acl"
	"samsa/kafka"
)

func (b *Broker) handleDeleteRecords(r *request) (kmsg.Response, error) {
	req := r.body.(*kmsg.DeleteRecordsRequest)
	resp := req.ResponseKind().(*kmsg.DeleteRecordsResponse)
	deadline := b.opts.Now().Add(time.Duration(max(req.TimeoutMillis, 0)) * time.Millisecond)
	del := b.topicAuthCache(r, acl.OpDelete)
	for _, t := range req.Topics {
		rt := kmsg.NewDeleteRecordsResponseTopic()
		rt.Topic = t.Topic
		for _, p := range t.Partitions {
			rp := kmsg.NewDeleteRecordsResponseTopicPartition()
			rp.Partition = p.Partition
			if !del.ok(t.Topic) {
				rp.LowWatermark, rp.ErrorCode = -1, kerr.TopicAuthorizationFailed.Code
				rt.Partitions = append(rt.Partitions, rp)
				continue
			}
			tp := kafka.TopicPartition{Topic: t.Topic, Partition: p.Partition}
			lw, err := b.replicas.DeleteRecords(tp, p.Offset)
			if err == nil {
				lw, err = b.replicas.WaitLowWatermark(r.ctx, tp, lw, deadline)
			}
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
