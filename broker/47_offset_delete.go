package broker

// OffsetDelete: v0-0
//
// Behaviour:
//   - broker/group deletes the committed offsets of the named partitions
//     (KIP-496); partitions the group is still subscribed to answer
//     GROUP_SUBSCRIBED_TO_TOPIC, an unknown group GROUP_ID_NOT_FOUND.
//   - Authorization: Delete on the group, else GROUP_AUTHORIZATION_FAILED at
//     the top; Read per topic, refused partitions TOPIC_AUTHORIZATION_FAILED
//     and left alone (Kafka 2.8).
//
// Version notes:
//   - v0: the only version (Kafka 2.4+).

import (
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"

	"samsa/broker/acl"
	"samsa/kafka"
)

func (b *Broker) handleOffsetDelete(r *request) (kmsg.Response, error) {
	req := r.body.(*kmsg.OffsetDeleteRequest)
	resp := req.ResponseKind().(*kmsg.OffsetDeleteResponse)
	if !b.authorizedGroup(r, acl.OpDelete, req.Group) {
		resp.ErrorCode = kerr.GroupAuthorizationFailed.Code
		return resp, nil
	}
	read := b.topicAuthCache(r, acl.OpRead)
	var parts []kafka.TopicPartition
	for _, t := range req.Topics {
		if !read.ok(t.Topic) {
			continue
		}
		for _, p := range t.Partitions {
			parts = append(parts, kafka.TopicPartition{Topic: t.Topic, Partition: p.Partition})
		}
	}
	res := b.groups.DeleteOffsets(r.ctx, req.Group, parts)
	resp.ErrorCode = res.ErrorCode
	i := 0
	for _, t := range req.Topics {
		rt := kmsg.NewOffsetDeleteResponseTopic()
		rt.Topic = t.Topic
		denied := !read.ok(t.Topic)
		for _, p := range t.Partitions {
			rp := kmsg.NewOffsetDeleteResponseTopicPartition()
			rp.Partition = p.Partition
			if denied {
				rp.ErrorCode = kerr.TopicAuthorizationFailed.Code
			} else if i < len(res.Codes) {
				rp.ErrorCode = res.Codes[i]
			}
			if !denied {
				i++
			}
			rt.Partitions = append(rt.Partitions, rp)
		}
		resp.Topics = append(resp.Topics, rt)
	}
	return resp, nil
}
