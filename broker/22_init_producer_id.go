package broker

// InitProducerId: v0-4
//
// Behaviour:
//   - Without a transactional id (the idempotent producer): a fresh
//     producer id with epoch 0, every time, as Kafka 2.8's
//     TransactionCoordinator.handleInitProducerId does for a null
//     transactional id, even when the request (v3+) names an existing
//     producer id and epoch. A producer id and epoch of which only one is
//     -1: INVALID_REQUEST, as Kafka's KafkaApis.
//   - Producer ids come in blocks of 1000 from ZooKeeper's
//     /latest_producer_id_block (Kafka's ZK-mode ProducerIdManager), taken
//     with a conditional write on the znode's version. While ZooKeeper
//     cannot give a block the answer is COORDINATOR_LOAD_IN_PROGRESS, which
//     Java, librdkafka, franz-go and Sarama retry (Kafka 2.8 would answer
//     UNKNOWN_SERVER_ERROR).
//   - With a transactional id: the transaction coordinator (broker/txn)
//     answers, as Kafka 2.8's TransactionCoordinator.handleInitProducerId:
//     "" is INVALID_REQUEST; transaction_timeout_ms <= 0 or above
//     transaction.max.timeout.ms is INVALID_TRANSACTION_TIMEOUT; a new id
//     gets a fresh producer id at epoch 0; a known one gets epoch+1 (a new
//     producer id once the epoch is exhausted), fencing the previous
//     instance; an open transaction is first fenced and aborted (answer
//     CONCURRENT_TRANSACTIONS, the client retries); NOT_COORDINATOR /
//     COORDINATOR_LOAD_IN_PROGRESS while this broker does not own or is
//     loading the id's __transaction_state partition.
//   - No ACL check (Samsa has no authorizer): Kafka requires IdempotentWrite
//     on the cluster or Write on a topic.
//
// Version notes:
//   - v1: same as v0 (throttle behaviour). v2: flexible.
//   - v3: producer_id and producer_epoch (KIP-360): a transactional
//     producer recovering after a fatal error keeps its id if they match
//     (PRODUCER_FENCED otherwise); for a null transactional id Kafka 2.8
//     ignores them (a new id is allocated).
//   - v4: PRODUCER_FENCED may be returned (KIP-588); below v4 it is
//     INVALID_PRODUCER_EPOCH, as Kafka rewrites it.

import (
	"errors"
	"fmt"
	"sync"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"

	"samsa/broker/record"
)

// errProducerIDsUnavailable: no producer id block could be taken from
// ZooKeeper (COORDINATOR_LOAD_IN_PROGRESS, retried by clients).
var errProducerIDsUnavailable = errors.New("broker: producer ids unavailable")

func (b *Broker) handleInitProducerID(r *request) (kmsg.Response, error) {
	req := r.body.(*kmsg.InitProducerIDRequest)
	resp := req.ResponseKind().(*kmsg.InitProducerIDResponse)
	resp.ProducerID, resp.ProducerEpoch = record.NoProducerID, record.NoProducerEpoch
	if (req.ProducerID == record.NoProducerID) != (req.ProducerEpoch == record.NoProducerEpoch) {
		resp.ErrorCode = kerr.InvalidRequest.Code
		return resp, nil
	}
	if req.TransactionalID != nil {
		res := b.txns.InitProducerID(r.ctx, *req.TransactionalID, req.TransactionTimeoutMillis, req.ProducerID, req.ProducerEpoch)
		resp.ProducerID, resp.ProducerEpoch = res.ProducerID, res.ProducerEpoch
		resp.ErrorCode = fencedCode(res.Code, req.Version >= 4)
		return resp, nil
	}
	pid, err := b.producerIDs.next(b)
	if err != nil {
		b.log.WithError(err).Warn("cannot allocate a producer id")
		resp.ErrorCode = b.errorCode(err)
		return resp, nil
	}
	resp.ProducerID, resp.ProducerEpoch = pid, 0
	return resp, nil
}

// fencedCode rewrites PRODUCER_FENCED to INVALID_PRODUCER_EPOCH for request
// versions that predate it (Kafka's KafkaApis does the same, KIP-588).
func fencedCode(code int16, hasFenced bool) int16 {
	if code == kerr.ProducerFenced.Code && !hasFenced {
		return kerr.InvalidProducerEpoch.Code
	}
	return code
}

// producerIDAllocator hands out producer ids from the block this broker
// last took from ZooKeeper (Kafka 2.8 ZK-mode ProducerIdManager). The zero
// value is ready; it takes its first block on first use.
type producerIDAllocator struct {
	mu struct {
		sync.Mutex
		next, end int64 // next id to hand out, last id of the block
		have      bool  // a block was taken
	}
}

// next returns an unused producer id, taking a new block of
// zkutil.ProducerIDBlockSize ids when the current one is used up. It blocks
// on ZooKeeper then; other callers wait meanwhile.
func (a *producerIDAllocator) next(b *Broker) (int64, error) {
	a.mu.Lock()
	defer a.mu.Unlock()
	if !a.mu.have || a.mu.next > a.mu.end {
		blk, err := b.zk.AllocateProducerIDBlock(b.ID())
		if err != nil {
			return 0, fmt.Errorf("%w: %w", errProducerIDsUnavailable, err)
		}
		b.log.WithField("block_start", blk.BlockStart).WithField("block_end", blk.BlockEnd).
			Info("took a producer id block")
		a.mu.next, a.mu.end, a.mu.have = blk.BlockStart, blk.BlockEnd, true
	}
	pid := a.mu.next
	a.mu.next++
	return pid, nil
}
