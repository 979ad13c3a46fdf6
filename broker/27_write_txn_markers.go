package broker

// WriteTxnMarkers: v0-1
//
// Behaviour:
//   - Inter-broker: the transaction coordinator sends it to each partition
//     leader to end a transaction (Kafka's handleWriteTxnMarkersRequest).
//     For every marker and partition the leader appends one control batch
//     (transactional + control, the marker's producer id and epoch, one
//     COMMIT or ABORT record carrying the coordinator epoch) with acks=-1
//     semantics: min.insync.replicas is checked before the append and the
//     answer waits until the high watermark passes the marker or
//     request.timeout.ms ends (REQUEST_TIMED_OUT).
//   - Per partition errors: UNKNOWN_TOPIC_OR_PARTITION (unknown topic),
//     NOT_LEADER_OR_FOLLOWER (not led here; Kafka answers
//     UNKNOWN_TOPIC_OR_PARTITION for a known partition without a local
//     replica: the coordinator retries both), NOT_ENOUGH_REPLICAS(_AFTER_APPEND),
//     INVALID_PRODUCER_EPOCH (marker epoch older than the producer's),
//     TRANSACTION_COORDINATOR_FENCED (coordinator epoch older than the
//     producer's last marker's), KAFKA_STORAGE_ERROR. Logs are always
//     message format v2, so UNSUPPORTED_FOR_MESSAGE_FORMAT never occurs.
//   - An ABORT ends the producer's open transaction and is indexed in the
//     segment's .txnindex; a marker for a producer with no open transaction
//     is appended and changes nothing else (Kafka 2.8).
//   - __consumer_offsets partitions: after the marker is replicated the
//     group coordinator materialises (COMMIT) or drops (ABORT) the
//     producer's pending transactional offsets through
//     Broker.txnOffsets (Kafka's scheduleHandleTxnCompletion); the
//     transaction coordinator work sets it at assembly, nil skips.
//   - ClusterAction on the cluster, as Kafka, checked before the handler
//     for every inter-broker API (authz_interbroker.go): every partition
//     answers CLUSTER_AUTHORIZATION_FAILED otherwise.
//   - The KIP-890 verification cache entries of a partition die with the
//     marker (txn_verify.go).
//
// Version notes:
//   - v1: flexible (KIP-482; Kafka 2.8 sends it with IBP >= 2.8-IV0).

import (
	"time"

	"github.com/twmb/franz-go/pkg/kmsg"

	"samsa/broker/replica"
	"samsa/kafka"
)

// TxnOffsetsCompleter is the group coordinator's side of a transaction
// marker on __consumer_offsets: with commit it turns producerID's pending
// transactional offset commits in those partitions into committed offsets,
// otherwise it drops them (Kafka's GroupCoordinator.scheduleHandleTxnCompletion).
// It must not block on the caller's request for long; it is called once
// per WriteTxnMarkers entry after its markers were replicated.
type TxnOffsetsCompleter interface {
	CompleteTxnOffsets(producerID int64, offsetsPartitions []int32, commit bool)
}

func (b *Broker) handleWriteTxnMarkers(r *request) (kmsg.Response, error) {
	req := r.body.(*kmsg.WriteTxnMarkersRequest)
	resp := req.ResponseKind().(*kmsg.WriteTxnMarkersResponse)
	timeout := time.Duration(b.cfg.RequestTimeoutMs) * time.Millisecond
	deadline := b.opts.Now().Add(timeout)
	type wait struct {
		tp   kafka.TopicPartition
		next int64
		code *int16
	}
	var waits []wait
	for _, m := range req.Markers {
		rm := kmsg.NewWriteTxnMarkersResponseMarker()
		rm.ProducerID = m.ProducerID
		mk := replica.TxnMarker{ProducerID: m.ProducerID, ProducerEpoch: m.ProducerEpoch,
			Commit: m.Committed, CoordinatorEpoch: m.CoordinatorEpoch}
		for _, t := range m.Topics {
			rt := kmsg.NewWriteTxnMarkersResponseMarkerTopic()
			rt.Topic = t.Topic
			for _, p := range t.Partitions {
				rp := kmsg.NewWriteTxnMarkersResponseMarkerTopicPartition()
				rp.Partition = p
				tp := kafka.TopicPartition{Topic: t.Topic, Partition: p}
				res, err := b.replicas.AppendTxnMarker(tp, mk)
				if err != nil {
					b.failed(tp, false)
					rp.ErrorCode = b.errorCode(err)
				} else {
					b.verifiedTxnEnded(tp, m.ProducerID)
					waits = append(waits, wait{tp: tp, next: res.LastOffset + 1})
				}
				rt.Partitions = append(rt.Partitions, rp)
			}
			rm.Topics = append(rm.Topics, rt)
		}
		resp.Markers = append(resp.Markers, rm)
	}
	// Point each wait at its partition's error code in the response (the
	// slices are complete now and no longer move).
	i := 0
	for mi := range resp.Markers {
		for ti := range resp.Markers[mi].Topics {
			for pi := range resp.Markers[mi].Topics[ti].Partitions {
				rp := &resp.Markers[mi].Topics[ti].Partitions[pi]
				if i < len(waits) && rp.ErrorCode == 0 {
					waits[i].code = &rp.ErrorCode
					i++
				}
			}
		}
	}
	for _, w := range waits {
		if err := b.replicas.WaitReplicated(r.ctx, w.tp, w.next, deadline); err != nil {
			*w.code = b.errorCode(err)
		}
	}
	b.completeTxnOffsets(req, resp)
	return resp, nil
}

// completeTxnOffsets hands every marker's replicated __consumer_offsets
// partitions to the group coordinator's hook.
func (b *Broker) completeTxnOffsets(req *kmsg.WriteTxnMarkersRequest, resp *kmsg.WriteTxnMarkersResponse) {
	c := b.txnOffsets
	if c == nil {
		return
	}
	for mi, m := range req.Markers {
		var parts []int32
		for _, t := range resp.Markers[mi].Topics {
			if t.Topic != consumerOffsetsTopic {
				continue
			}
			for _, p := range t.Partitions {
				if p.ErrorCode == 0 {
					parts = append(parts, p.Partition)
				}
			}
		}
		if len(parts) > 0 {
			c.CompleteTxnOffsets(m.ProducerID, parts, m.Committed)
		}
	}
}
