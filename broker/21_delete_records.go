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
//
// Version notes:
//   - v1: throttle semantics only. v2: flexible.

import (
	"time"

	"github.com/twmb/franz-go/pkg/kmsg"

	"samsa/broker/replica"
)

func (b *Broker) handleDeleteRecords(r *request) (kmsg.Response, error) {
	req := r.body.(*kmsg.DeleteRecordsRequest)
	resp := req.ResponseKind().(*kmsg.DeleteRecordsResponse)
	deadline := b.opts.Now().Add(time.Duration(max(req.TimeoutMillis, 0)) * time.Millisecond)
	for _, t := range req.Topics {
		rt := kmsg.NewDeleteRecordsResponseTopic()
		rt.Topic = t.Topic
		for _, p := range t.Partitions {
			rp := kmsg.NewDeleteRecordsResponseTopicPartition()
			rp.Partition = p.Partition
			tp := replica.TopicPartition{Topic: t.Topic, Partition: p.Partition}
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
