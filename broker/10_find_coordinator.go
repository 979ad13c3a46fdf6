package broker

// FindCoordinator: v0-3
//
// Behaviour:
//   - Group keys (type 0): the coordinator is the leader of
//     __consumer_offsets partition abs(hash(group)) %
//     offsets.topic.num.partitions, from the metadata cache, on the
//     request's listener.
//   - __consumer_offsets is created on first use, as Kafka does, with
//     offsets.topic.num.partitions partitions, replication factor
//     offsets.topic.replication.factor (COORDINATOR_NOT_AVAILABLE while
//     fewer brokers are alive, as Kafka 0.11+), cleanup.policy=compact,
//     segment.bytes=offsets.topic.segment.bytes, compression.type=producer.
//     Until its partition has a leader the answer is
//     COORDINATOR_NOT_AVAILABLE and clients retry.
//   - Transaction keys (type 1): the leader of __transaction_state
//     partition abs(hash(transactional id)) %
//     transaction.state.log.num.partitions, the topic created on first use
//     the same way (transaction.state.log.replication.factor, min.isr,
//     segment.bytes; compact, uncompressed, no unclean election), as
//     Kafka's KafkaApis.handleFindCoordinator.
//     Other types: INVALID_REQUEST.
//
// Version notes:
//   - v1: key type, throttle, error message. v3: flexible.
//   - v4 (batched keys, KIP-699) is not offered.

import (
	"fmt"
	"strconv"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"
)

func (b *Broker) handleFindCoordinator(r *request) (kmsg.Response, error) {
	req := r.body.(*kmsg.FindCoordinatorRequest)
	resp := req.ResponseKind().(*kmsg.FindCoordinatorResponse)
	resp.NodeID, resp.Port = -1, -1
	fail := func(code int16, msg string) (kmsg.Response, error) {
		resp.ErrorCode = code
		resp.ErrorMessage = &msg
		return resp, nil
	}
	var (
		topic  string
		p      int32
		create func() error
	)
	switch req.CoordinatorType {
	case 0:
		topic, p, create = consumerOffsetsTopic, b.groups.PartitionFor(req.CoordinatorKey), b.createOffsetsTopic
	case 1:
		topic, p, create = transactionStateTopic, b.txns.PartitionFor(req.CoordinatorKey), b.createTxnStateTopic
	default:
		return fail(kerr.InvalidRequest.Code, fmt.Sprintf("unknown coordinator type %d", req.CoordinatorType))
	}
	snap := b.meta.Snapshot()
	if _, ok := snap.Topics[topic]; !ok {
		if err := create(); err != nil && !isTopicExists(err) {
			b.log.WithError(err).WithField("topic", topic).Debug("creating an internal topic failed")
		}
		return fail(kerr.CoordinatorNotAvailable.Code, "the coordinator's topic is being created")
	}
	ps, ok := snap.Partition(topic, p)
	if !ok || ps.Leader < 0 || !snap.Alive(ps.Leader) {
		return fail(kerr.CoordinatorNotAvailable.Code, "the coordinator's partition has no leader")
	}
	ep, ok := snap.Brokers[ps.Leader].Endpoint(r.listener)
	if !ok {
		return fail(kerr.CoordinatorNotAvailable.Code, "the coordinator has no endpoint on this listener")
	}
	resp.NodeID, resp.Host, resp.Port = ps.Leader, ep.Host, ep.Port
	return resp, nil
}

// createOffsetsTopic creates __consumer_offsets (Kafka
// KafkaApis.createInternalTopic / GroupMetadataManager settings).
func (b *Broker) createOffsetsTopic() error {
	live := int32(len(b.meta.Snapshot().BrokerIDs))
	rf := int32(b.cfg.OffsetsTopicReplicationFactor)
	if live < rf {
		return fmt.Errorf("%w: offsets.topic.replication.factor %d but %d live brokers",
			errInvalidReplicationFactor, rf, live)
	}
	spec := topicSpec{name: consumerOffsetsTopic, partitions: b.cfg.OffsetsTopicNumPartitions, rf: int16(rf),
		configs: map[string]string{
			"cleanup.policy":   "compact",
			"segment.bytes":    strconv.Itoa(int(b.cfg.OffsetsTopicSegmentBytes)),
			"compression.type": "producer",
		}}
	a, err := b.planTopic(spec)
	if err != nil {
		return err
	}
	return b.createTopic(spec, a)
}
