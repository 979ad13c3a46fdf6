package broker

// OffsetFetch: v0-7
//
// Behaviour:
//   - v0 reads offsets from ZooKeeper (/consumers/<g>/offsets/<t>/<p>); a
//     partition without one answers offset -1 with
//     UNKNOWN_TOPIC_OR_PARTITION, as Kafka 2.8.
//   - v1+ read from broker/group: a group never seen has no offsets (-1, no
//     error), as ZooKeeper-era Kafka and clients expect. v2+ with null
//     topics return every committed offset of the group; coordinator errors
//     (NOT_COORDINATOR, COORDINATOR_LOAD_IN_PROGRESS) are top-level from
//     v2, per partition before.
//   - require_stable (v7, KIP-447): a partition with a transactional
//     commit still waiting for its marker (TxnOffsetCommit, then the
//     COMMIT/ABORT marker on __consumer_offsets) answers offset -1 with
//     UNSTABLE_OFFSET_COMMIT, which clients retry. A plain commit is
//     visible only once written, so it is never "unstable" here.
//
// Version notes:
//   - v2: null topics = all, top-level error. v3: throttle.
//   - v5: leader epoch. v6: flexible. v7: require_stable (KIP-447).

import (
	"errors"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"

	"samsa/broker/group"
	"samsa/kafka"
	"samsa/zkutil"
)

func (b *Broker) handleOffsetFetch(r *request) (kmsg.Response, error) {
	req := r.body.(*kmsg.OffsetFetchRequest)
	resp := req.ResponseKind().(*kmsg.OffsetFetchResponse)
	if req.Version == 0 {
		b.fetchOffsetsZK(req, resp)
		return resp, nil
	}
	var parts []kafka.TopicPartition
	if req.Topics != nil || req.Version < 2 {
		parts = []kafka.TopicPartition{}
		for _, t := range req.Topics {
			for _, p := range t.Partitions {
				parts = append(parts, kafka.TopicPartition{Topic: t.Topic, Partition: p})
			}
		}
	}
	var code int16
	var offs []group.FetchedOffset
	if req.RequireStable {
		var codes []int16
		code, offs, codes = b.groups.FetchOffsetsStable(r.ctx, req.Group, parts)
		for i, c := range codes {
			if c != 0 {
				offs[i].ErrorCode = c
			}
		}
	} else {
		code, offs = b.groups.FetchOffsets(r.ctx, req.Group, parts)
	}
	if code != 0 {
		if req.Version >= 2 {
			resp.ErrorCode = code
			return resp, nil
		}
		offs = make([]group.FetchedOffset, len(parts))
		for i, tp := range parts {
			offs[i] = group.FetchedOffset{TopicPartition: tp, Offset: -1, LeaderEpoch: -1, ErrorCode: code}
		}
	}
	idx := map[string]int{}
	for _, o := range offs {
		i, ok := idx[o.Topic]
		if !ok {
			rt := kmsg.NewOffsetFetchResponseTopic()
			rt.Topic = o.Topic
			resp.Topics = append(resp.Topics, rt)
			i = len(resp.Topics) - 1
			idx[o.Topic] = i
		}
		rp := kmsg.NewOffsetFetchResponseTopicPartition()
		rp.Partition, rp.Offset, rp.LeaderEpoch, rp.ErrorCode = o.Partition, o.Offset, o.LeaderEpoch, o.ErrorCode
		md := o.Metadata
		rp.Metadata = &md
		resp.Topics[i].Partitions = append(resp.Topics[i].Partitions, rp)
	}
	return resp, nil
}

// fetchOffsetsZK is OffsetFetch v0: offsets from ZooKeeper.
func (b *Broker) fetchOffsetsZK(req *kmsg.OffsetFetchRequest, resp *kmsg.OffsetFetchResponse) {
	for _, t := range req.Topics {
		rt := kmsg.NewOffsetFetchResponseTopic()
		rt.Topic = t.Topic
		for _, p := range t.Partitions {
			rp := kmsg.NewOffsetFetchResponseTopicPartition()
			rp.Partition, rp.Offset = p, -1
			empty := ""
			rp.Metadata = &empty
			off, err := b.zk.GetConsumerOffset(req.Group, t.Topic, p)
			switch {
			case errors.Is(err, zkutil.ErrNoNode):
				rp.ErrorCode = kerr.UnknownTopicOrPartition.Code
			case err != nil:
				rp.ErrorCode = b.errorCode(err)
			default:
				rp.Offset = off
			}
			rt.Partitions = append(rt.Partitions, rp)
		}
		resp.Topics = append(resp.Topics, rt)
	}
}
