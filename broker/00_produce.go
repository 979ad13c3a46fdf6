package broker

// Produce: v0-9
//
// Behaviour:
//   - acks 0: nothing is answered; if any partition failed, the connection
//     is closed so the client notices (Kafka does the same). acks 1: answer
//     after the leader's local append. acks -1 (all): the ISR must have at
//     least min.insync.replicas members before the append
//     (NOT_ENOUGH_REPLICAS), then the request parks in the produce
//     purgatory until the high watermark passes the appended batch, or
//     timeout_ms ends (REQUEST_TIMED_OUT; the data stays in the log, as in
//     Kafka). Other acks values (Kafka 2.8 KafkaApis + ReplicaManager
//     order): partitions missing from the metadata cache answer
//     UNKNOWN_TOPIC_OR_PARTITION and v3+ framing faults the answer of
//     ProduceRequest.validateRecords (validateProduceRecords); every other
//     partition INVALID_REQUIRED_ACKS, unread (no CRC, leadership or
//     internal-topic check), nothing appended, no failed-produce meter.
//   - Message sets v0/v1 (Produce v0-2) are converted to one record batch
//     v2 before the append; Samsa stores only v2. From v3 every partition
//     goes through validateProduceRecords (Kafka's
//     ProduceRequest.validateRecords) first, whatever acks says.
//   - Validation and offset assignment happen in broker/storage (CRC,
//     framing, record counts, max.message.bytes, timestamps):
//     CORRUPT_MESSAGE, INVALID_RECORD, MESSAGE_TOO_LARGE, INVALID_TIMESTAMP,
//     RECORD_LIST_TOO_LARGE per partition. zstd below v7:
//     UNSUPPORTED_COMPRESSION_TYPE (KIP-110).
//   - Partitions this broker does not lead: NOT_LEADER_FOR_PARTITION;
//     partitions it does not host: UNKNOWN_TOPIC_OR_PARTITION.
//   - Idempotent producer (KIP-98, Kafka 2.8 rules, checked in
//     broker/storage): a stale epoch is INVALID_PRODUCER_EPOCH, a sequence
//     gap OUT_OF_ORDER_SEQUENCE_NUMBER, an unknown producer not at
//     sequence 0 UNKNOWN_PRODUCER_ID; a retry of one of the producer's last
//     five batches appends nothing and answers the original base offset.
//   - Transactions (Kafka 2.8, checked in broker/storage): the first
//     transactional batch of a producer opens its transaction in the
//     partition (the last stable offset stops there); a non-transactional
//     batch while it is open is INVALID_TXN_STATE; control batches from
//     clients are INVALID_RECORD (markers come from WriteTxnMarkers). With
//     transaction.partition.verification.enable (KIP-890 part 1, off by
//     default until the coordinator answers AddPartitionsToTxn v4) the
//     leader first asks the coordinator whether the partition is in the
//     producer's ongoing transaction (txn_verify.go).
//   - LogAppendTime topics return the append time (v2+).
//   - Metrics as Kafka 2.8's ReplicaManager.appendToLocalLog: MessagesIn
//     and BytesIn count every answered append, a duplicate idempotent batch
//     again (its original record count, the request's bytes);
//     FailedProduceRequests counts only unexpected failures, not unknown
//     partitions, not-leader, too-large, corrupt, storage errors or the
//     request checks (countsAsFailedProduce, errProduceRequestCheck).
//   - Authorization (Kafka 2.8 KafkaApis.handleProduceRequest): when the
//     first batch of any partition is transactional, the request needs
//     Write on its transactional_id (a null id fails) or every partition
//     answers TRANSACTIONAL_ID_AUTHORIZATION_FAILED (CVE-2018-17196: every
//     partition is inspected, not one); then Write on each topic, else
//     TOPIC_AUTHORIZATION_FAILED before the existence check. IdempotentWrite
//     is checked by InitProducerId, not here (KIP-679).
//   - Internal topics (__consumer_offsets) refuse client produce with
//     INVALID_TOPIC_EXCEPTION, as Kafka; the group coordinator appends
//     through broker/replica directly.
//
// Version notes:
//   - v0-2: message sets v0/v1. v1: throttle. v2: log_append_time.
//   - v3: record batch v2 and transactional_id (KIP-98).
//   - v5: log_start_offset. v7: zstd allowed (KIP-110).
//   - v8: error_records and error_message (KIP-467; error_message set).
//   - v9: flexible.

import (
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"time"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"

	"samsa/broker/acl"
	"samsa/broker/record"
	"samsa/broker/replica"
	"samsa/broker/server"
	"samsa/kafka"
)

// produceMaxDecompressed bounds the decompression of a legacy message set
// on conversion; storage checks the converted batch against
// max.message.bytes anyway.
const produceMaxDecompressed = 64 << 20

func (b *Broker) handleProduce(r *request) (kmsg.Response, error) {
	req := r.body.(*kmsg.ProduceRequest)
	resp := req.ResponseKind().(*kmsg.ProduceResponse)
	deadline := b.opts.Now().Add(time.Duration(max(req.TimeoutMillis, 0)) * time.Millisecond)
	acksErr := error(nil)
	if req.Acks != 0 && req.Acks != 1 && req.Acks != -1 {
		acksErr = fmt.Errorf("%w: %d", errInvalidRequiredAcks, req.Acks)
	}

	// Sized once: an entry per partition (thousands in a request at 12,000
	// partitions), not grown by doubling.
	var waits []produceWait
	if req.Acks == -1 {
		waits = make([]produceWait, 0, producePartitions(req))
	}
	resp.Topics = make([]kmsg.ProduceResponseTopic, 0, len(req.Topics))
	failed := false
	txnDenied := !b.authorizedProduceTransaction(r, req)
	writeAuth := b.topicAuthCache(r, acl.OpWrite)
	// KIP-890 part 1 (txn_verify.go), only for partitions the checks below let through.
	verdicts := b.verifyTxnProduce(r.ctx, req, func(topic string) bool {
		return acksErr == nil && produceAuthErr(txnDenied, writeAuth, topic) == nil
	})
	for _, t := range req.Topics {
		rt := kmsg.NewProduceResponseTopic()
		rt.Topic = t.Topic
		rt.Partitions = make([]kmsg.ProduceResponseTopicPartition, 0, len(t.Partitions))
		for _, p := range t.Partitions {
			rp := kmsg.NewProduceResponseTopicPartition()
			rp.Partition = p.Partition
			rp.BaseOffset, rp.LogAppendTime, rp.LogStartOffset = -1, -1, -1
			tp := kafka.TopicPartition{Topic: t.Topic, Partition: p.Partition}
			if authErr := produceAuthErr(txnDenied, writeAuth, t.Topic); authErr != nil {
				failed = true
				rp.ErrorCode = authErr.Code
				rt.Partitions = append(rt.Partitions, rp)
				continue
			}
			if acksErr != nil {
				// Kafka's ReplicaManager.appendRecords refuses the whole
				// request before any append; the failed-produce meter is
				// not marked, as in Kafka.
				failed = true
				b.setProduceErr(&rp, b.produceRefused(req.Version, tp, p.Records, acksErr))
				rt.Partitions = append(rt.Partitions, rp)
				continue
			}
			if err := verdicts.err(tp); err != nil {
				failed = true
				b.setProduceErr(&rp, err)
				rt.Partitions = append(rt.Partitions, rp)
				continue
			}
			res, err := b.produceOne(req.Version, tp, p.Records, req.Acks)
			if err != nil {
				failed = true
				b.setProduceErr(&rp, err)
				if !errors.Is(err, errProduceRequestCheck) && countsAsFailedProduce(rp.ErrorCode) {
					b.failed(tp, true)
				}
				rt.Partitions = append(rt.Partitions, rp)
				continue
			}
			b.mtr.produced(t.Topic, res.LastOffset-res.BaseOffset+1, int64(len(p.Records)))
			rp.BaseOffset, rp.LogAppendTime, rp.LogStartOffset = res.BaseOffset, res.LogAppendTime, res.LogStartOffset
			rt.Partitions = append(rt.Partitions, rp)
			if req.Acks == -1 {
				waits = append(waits, produceWait{ti: len(resp.Topics), pi: len(rt.Partitions) - 1, tp: tp, next: res.LastOffset + 1})
			}
		}
		resp.Topics = append(resp.Topics, rt)
	}
	if req.Acks == 0 {
		if failed {
			return nil, errors.New("broker: produce with acks=0 failed; closing the connection as Kafka does")
		}
		return nil, nil
	}
	if len(waits) == 0 {
		return resp, nil
	}
	// The appends are done, in request order; the wait for the high
	// watermark happens on the connection's writer goroutine, so the
	// connection can read and append the next requests meanwhile
	// (server.Pending).
	return &producePending{ProduceResponse: resp, b: b, waits: waits, deadline: deadline}, nil
}

// producePartitions counts the partitions req names.
func producePartitions(req *kmsg.ProduceRequest) int {
	n := 0
	for _, t := range req.Topics {
		n += len(t.Partitions)
	}
	return n
}

// produceWait is one partition of an acks=all produce waiting for its
// high watermark.
type produceWait struct {
	ti, pi int // indexes of the response entry
	tp     kafka.TopicPartition
	next   int64 // HW needed: last offset + 1
}

// producePending is an acks=all produce response whose partitions wait for
// replication (Kafka's DelayedProduce). It holds nothing but the response
// until Wait, so a connection that closes first abandons it freely.
type producePending struct {
	*kmsg.ProduceResponse
	b        *Broker
	waits    []produceWait
	deadline time.Time // timeout_ms from when the request was handled
}

var _ server.Pending = (*producePending)(nil)

// Wait implements server.Pending: it parks until every partition's high
// watermark passes its batch, the deadline (REQUEST_TIMED_OUT) or ctx.
func (p *producePending) Wait(ctx context.Context) (kmsg.Response, error) {
	resp := p.ProduceResponse
	for _, w := range p.waits {
		rp := &resp.Topics[w.ti].Partitions[w.pi]
		if err := p.b.replicas.WaitReplicated(ctx, w.tp, w.next, p.deadline); err != nil {
			p.b.setProduceErr(rp, err)
		}
	}
	return resp, nil
}

// produceRefused is one partition's answer to a request with invalid acks,
// in Kafka 2.8's order: KafkaApis.handleProduceRequest answers partitions
// missing from the metadata cache (UNKNOWN_TOPIC_OR_PARTITION) and
// ProduceRequest.validateRecords failures itself, and
// ReplicaManager.appendRecords answers every other partition
// INVALID_REQUIRED_ACKS without looking at it (no CRC, leadership or
// internal-topic checks).
func (b *Broker) produceRefused(version int16, tp kafka.TopicPartition, records []byte, acksErr error) error {
	if _, ok := b.meta.Snapshot().Partition(tp.Topic, tp.Partition); !ok {
		return fmt.Errorf("%w: %s", errUnknownTopic, tp)
	}
	if err := validateProduceRecords(version, records); err != nil {
		return err
	}
	return acksErr
}

// errProduceRequestCheck marks the produce errors Kafka finds before
// ReplicaManager.appendToLocalLog's try block (ProduceRequest.validateRecords
// in KafkaApis, the internal-topic check): they never mark
// FailedProduceRequestsPerSec.
var errProduceRequestCheck = errors.New("broker: produce request check")

// produceOne converts (if needed) and appends one partition's records.
// Errors of the request checks also wrap errProduceRequestCheck.
func (b *Broker) produceOne(version int16, tp kafka.TopicPartition, records []byte, acks int16) (replica.AppendResult, error) {
	// Kafka's KafkaApis checks the metadata cache, then
	// ProduceRequest.validateRecords, before the append. The metadata is
	// only consulted when validation fails, so the happy path costs no
	// lookup and a partition the broker leads but has no metadata for yet
	// still takes appends.
	if err := validateProduceRecords(version, records); err != nil {
		if _, ok := b.meta.Snapshot().Partition(tp.Topic, tp.Partition); !ok {
			return replica.AppendResult{}, fmt.Errorf("%w: %w: %s", errProduceRequestCheck, errUnknownTopic, tp)
		}
		return replica.AppendResult{}, fmt.Errorf("%w: %w", errProduceRequestCheck, err)
	}
	magic, err := record.Magic(records)
	if err != nil {
		return replica.AppendResult{}, fmt.Errorf("%w: %w: %w", errProduceRequestCheck, record.ErrCorrupt, err)
	}
	switch {
	case isInternalTopic(tp.Topic):
		return replica.AppendResult{}, fmt.Errorf("%w: %w: cannot append to internal topic %s", errProduceRequestCheck, errInvalidTopic, tp.Topic)
	}
	batches := records
	switch {
	case magic < record.MagicV2:
		batches, err = record.ConvertToV2(records, record.CodecProducer, produceMaxDecompressed)
		if err != nil {
			return replica.AppendResult{}, err
		}
		if len(batches) == 0 {
			return replica.AppendResult{}, fmt.Errorf("%w: empty message set", record.ErrCorrupt)
		}
	case version < 3:
		return replica.AppendResult{}, fmt.Errorf("%w: record batch v2 in produce v%d", record.ErrCorrupt, version)
	}
	return b.replicas.AppendAsLeader(tp, batches, acks)
}

func (b *Broker) setProduceErr(rp *kmsg.ProduceResponseTopicPartition, err error) {
	rp.ErrorCode = b.errorCode(err)
	if rp.ErrorCode != kerr.RequestTimedOut.Code {
		rp.BaseOffset = -1
	}
	msg := err.Error()
	rp.ErrorMessage = &msg
}

// Offsets in a batch header that Kafka's batch iterator reads before it
// has a whole batch (HEADER_SIZE_UP_TO_MAGIC is magic's offset + 1).
const (
	produceMagicOffset      = 16
	produceAttributesOffset = 21
	produceMinRecordSize    = 14 // LegacyRecord.RECORD_OVERHEAD_V0
)

// validateProduceRecords is Kafka 2.8's ProduceRequest.validateRecords,
// which KafkaApis runs before the append sees acks: from v3 a partition
// must frame at least one complete batch, of magic 2, not zstd below v7
// (UNSUPPORTED_COMPRESSION_TYPE), and no second complete batch
// (INVALID_RECORD otherwise). Kafka's batch iterator (ByteBufferLogInputStream)
// throws CORRUPT_MESSAGE on a batch size below 14 or a magic above 2 as it
// reaches them. v0-2 message sets are not checked here, as in Kafka.
func validateProduceRecords(version int16, records []byte) error {
	if version < 3 {
		return nil
	}
	size, ok, err := produceNextBatchSize(records)
	if err != nil {
		return err
	}
	if !ok {
		return fmt.Errorf("%w: produce requests with version %d must have at least one record batch", record.ErrInvalidRecord, version)
	}
	if magic := int8(records[produceMagicOffset]); magic != record.MagicV2 {
		return fmt.Errorf("%w: produce requests with version %d are only allowed to contain record batches with magic version 2",
			record.ErrInvalidRecord, version)
	}
	if version < 7 && size > produceAttributesOffset+1 &&
		record.Codec(binary.BigEndian.Uint16(records[produceAttributesOffset:])&0x07) == record.CodecZstd {
		return fmt.Errorf("%w: produce requests with version %d are not allowed to use ZStandard compression", errUnsupportedCompression, version)
	}
	if _, more, err := produceNextBatchSize(records[size:]); err != nil {
		return err
	} else if more {
		return fmt.Errorf("%w: produce requests with version %d are only allowed to contain exactly one record batch",
			record.ErrInvalidRecord, version)
	}
	return nil
}

// produceNextBatchSize is Kafka's ByteBufferLogInputStream.nextBatchSize
// plus its "remaining < batchSize" test: the size of the complete batch at
// the head of buf, false when buf holds no complete batch, or
// CORRUPT_MESSAGE for a size below 14 or a magic outside 0..2.
func produceNextBatchSize(buf []byte) (int, bool, error) {
	if len(buf) < record.LogOverhead {
		return 0, false, nil
	}
	size := int32(binary.BigEndian.Uint32(buf[8:]))
	if size < produceMinRecordSize {
		return 0, false, fmt.Errorf("%w: record size %d is less than the minimum record overhead (%d)",
			record.ErrCorrupt, size, produceMinRecordSize)
	}
	if len(buf) <= produceMagicOffset {
		return 0, false, nil
	}
	if magic := int8(buf[produceMagicOffset]); magic < 0 || magic > record.MagicV2 {
		return 0, false, fmt.Errorf("%w: invalid magic found in record: %d", record.ErrCorrupt, magic)
	}
	total := int64(size) + record.LogOverhead
	if int64(len(buf)) < total {
		return 0, false, nil
	}
	return int(total), true, nil
}
