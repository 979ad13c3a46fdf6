package broker

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"time"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"

	"samsa/broker/group"
	"samsa/broker/record"
	"samsa/broker/storage"
	"samsa/kafka"
	"samsa/peer"
)

// txnVerifyKey identifies a producer in a partition.
type txnVerifyKey struct {
	tp  kafka.TopicPartition
	pid int64
}

// txnVerifyCache remembers positive KIP-890 verifications (the coordinator
// said the partition is in the producer's ongoing transaction at an
// epoch), so that only the first transactional batch of a transaction per
// partition asks the coordinator. An entry dies when a marker ends the
// partition's transaction of that producer (verifiedTxnEnded) or the
// producer's epoch changes (the stored epoch no longer matches).
type txnVerifyCache struct {
	mu struct {
		sync.Mutex
		epochs map[txnVerifyKey]int16
	}
}

func (c *txnVerifyCache) verified(tp kafka.TopicPartition, pid int64, epoch int16) bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	e, ok := c.mu.epochs[txnVerifyKey{tp, pid}]
	return ok && e == epoch
}

func (c *txnVerifyCache) add(tp kafka.TopicPartition, pid int64, epoch int16) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.mu.epochs == nil {
		c.mu.epochs = map[txnVerifyKey]int16{}
	}
	c.mu.epochs[txnVerifyKey{tp, pid}] = epoch
}

// dropProducer forgets pid's verification for tp.
func (c *txnVerifyCache) dropProducer(tp kafka.TopicPartition, pid int64) {
	c.mu.Lock()
	defer c.mu.Unlock()
	delete(c.mu.epochs, txnVerifyKey{tp, pid})
}

// verifiedTxnEnded is called when a marker for pid was appended to tp: the
// next transaction must be verified again.
func (b *Broker) verifiedTxnEnded(tp kafka.TopicPartition, pid int64) {
	b.txnVerify.dropProducer(tp, pid)
}

// txnVerifyTimeout bounds one verification round trip.
const txnVerifyTimeout = 10 * time.Second

// txnVerdicts is the KIP-890 verification of one produce request: the
// error a partition's append must answer with, nil for those that may be
// appended (verified, or not transactional). A nil txnVerdicts allows all.
type txnVerdicts map[kafka.TopicPartition]error

func (v txnVerdicts) err(tp kafka.TopicPartition) error { return v[tp] }

// txnVerifyAsk is one producer epoch's partitions still to verify.
type txnVerifyAsk struct {
	pid   int64
	epoch int16
	tps   []kafka.TopicPartition
}

// verifyTxnProduce is KIP-890 part 1 (Kafka 3.6's leader-side check,
// behind transaction.partition.verification.enable): before the first
// transactional batch of a producer epoch is appended to a partition, the
// leader asks the transaction coordinator of the request's transactional
// id (the leader of __transaction_state partition abs(hash(id)) %
// partitions, found in the metadata cache as a client's FindCoordinator
// would) whether the partition is in the producer's ongoing transaction.
// All the request's unverified partitions go in one question (Kafka's
// AddPartitionsToTxnManager batches per coordinator too): answered in
// process when this broker is the coordinator, else with AddPartitionsToTxn
// v4 verify_only over a kept inter-broker connection. A positive answer
// is cached until a marker ends the transaction in the partition or the
// epoch changes, so later batches cost one map lookup. Errors are the
// produce answer (Kafka's ReplicaManager mapping, verifyErr). A remote
// coordinator without v4 skips the check, as Kafka does. Only topics
// allowed lets through are verified: the authorization and acks checks
// come first, as in Kafka, so a principal refused on a topic cannot make
// the leader ask the coordinator or touch a producer's guard.
func (b *Broker) verifyTxnProduce(ctx context.Context, req *kmsg.ProduceRequest, allowed func(topic string) bool) txnVerdicts {
	if !b.cfg.TransactionPartitionVerificationEnable {
		return nil
	}
	var asks []txnVerifyAsk
	for _, t := range req.Topics {
		if !allowed(t.Topic) {
			continue // refused before any append: no verification, no guard
		}
		for _, p := range t.Partitions {
			tp := kafka.TopicPartition{Topic: t.Topic, Partition: p.Partition}
			h, ok := txnBatchHeader(p.Records)
			if !ok || b.txnVerify.verified(tp, h.ProducerID, h.ProducerEpoch) {
				continue
			}
			i := 0
			for i < len(asks) && (asks[i].pid != h.ProducerID || asks[i].epoch != h.ProducerEpoch) {
				i++
			}
			if i == len(asks) {
				asks = append(asks, txnVerifyAsk{pid: h.ProducerID, epoch: h.ProducerEpoch})
			}
			asks[i].tps = append(asks[i].tps, tp)
		}
	}
	if len(asks) == 0 {
		return nil
	}
	out := txnVerdicts{}
	for _, a := range asks {
		if req.TransactionID == nil || *req.TransactionID == "" {
			for _, tp := range a.tps {
				out[tp] = fmt.Errorf("%w: transactional batch of producer %d without a transactional id", kerr.InvalidTxnState, a.pid)
			}
			continue
		}
		id := *req.TransactionID
		guards := b.startTxnVerification(a)
		codes, err := b.askTxnCoordinator(ctx, id, a)
		for _, tp := range a.tps {
			code, ok := codes[tp]
			switch {
			case err != nil:
				out[tp] = fmt.Errorf("%w: verifying %s with the transaction coordinator: %v", kerr.NotEnoughReplicas, tp, err)
			case !ok:
				out[tp] = fmt.Errorf("%w: the coordinator's answer does not name %s", kerr.NotEnoughReplicas, tp)
			case code == 0:
				b.txnVerify.add(tp, a.pid, a.epoch)
			default:
				out[tp] = verifyErr(code, id, tp, a.pid, a.epoch)
			}
			if g, ok := guards[tp]; ok {
				g.log.CompleteTxnVerification(a.pid, g.guard, out[tp] == nil)
			}
		}
	}
	return out
}

// txnGuard is one partition's verification guard (storage's
// StartTxnVerification): the append that follows is refused if a marker
// ended the verified transaction in between.
type txnGuard struct {
	log   *storage.Log
	guard uint64
}

// startTxnVerification starts the verification of a's partitions in their
// logs' producer state (those not led here have no guard: their append
// fails on its own).
func (b *Broker) startTxnVerification(a txnVerifyAsk) map[kafka.TopicPartition]txnGuard {
	out := make(map[kafka.TopicPartition]txnGuard, len(a.tps))
	for _, tp := range a.tps {
		p := b.replicas.Partition(tp)
		if p == nil {
			continue
		}
		if l := p.Log(); l != nil {
			out[tp] = txnGuard{log: l, guard: l.StartTxnVerification(a.pid, a.epoch)}
		}
	}
	return out
}

// txnBatchHeader returns the header of a transactional data batch (v2,
// transactional, not control, with a producer id); ok is false for
// anything else, which storage checks (or refuses) on its own.
func txnBatchHeader(batches []byte) (record.BatchHeader, bool) {
	if m, err := record.Magic(batches); err != nil || m < record.MagicV2 {
		return record.BatchHeader{}, false
	}
	h, err := record.ParseHeader(batches, 0)
	if err != nil || !h.IsTransactional() || h.IsControl() || h.ProducerID < 0 {
		return record.BatchHeader{}, false
	}
	return h, true
}

// verifyErr maps the coordinator's code for a partition to the produce
// answer: INVALID_TXN_STATE as is; PRODUCER_FENCED INVALID_PRODUCER_EPOCH;
// INVALID_PRODUCER_ID_MAPPING as is; CONCURRENT_TRANSACTIONS, coordinator
// loading, unavailable or moved NOT_ENOUGH_REPLICAS (retriable).
func verifyErr(code int16, id string, tp kafka.TopicPartition, pid int64, epoch int16) error {
	switch code {
	case kerr.InvalidTxnState.Code, kerr.ClusterAuthorizationFailed.Code:
		return fmt.Errorf("%w: %s is not in the ongoing transaction of %q (producer %d epoch %d)",
			kerr.InvalidTxnState, tp, id, pid, epoch)
	case kerr.ProducerFenced.Code, kerr.InvalidProducerEpoch.Code:
		return fmt.Errorf("%w: producer %d epoch %d is fenced", kerr.InvalidProducerEpoch, pid, epoch)
	case kerr.InvalidProducerIDMapping.Code:
		return kerr.InvalidProducerIDMapping
	default: // CONCURRENT_TRANSACTIONS, COORDINATOR_*, NOT_COORDINATOR, ...
		return fmt.Errorf("%w: transaction coordinator answered %v", kerr.NotEnoughReplicas, kerr.ErrorForCode(code))
	}
}

// askTxnCoordinator asks id's coordinator about a's partitions and returns
// a code per partition (a top-level code is given to each). A remote
// coordinator that does not offer v4 answers NONE for all: no verification.
func (b *Broker) askTxnCoordinator(ctx context.Context, id string, a txnVerifyAsk) (map[kafka.TopicPartition]int16, error) {
	snap := b.meta.Snapshot()
	n := int32(len(snap.Topics[transactionStateTopic]))
	if n == 0 {
		return nil, fmt.Errorf("no %s topic", transactionStateTopic)
	}
	ps, ok := snap.Partition(transactionStateTopic, group.PartitionFor(id, n))
	if !ok || ps.Leader < 0 {
		return nil, fmt.Errorf("the coordinator's partition of %q has no leader", id)
	}
	all := func(code int16) map[kafka.TopicPartition]int16 {
		out := make(map[kafka.TopicPartition]int16, len(a.tps))
		for _, tp := range a.tps {
			out[tp] = code
		}
		return out
	}
	if ps.Leader == b.ID() && b.txns != nil {
		// This broker is the coordinator: the same decision the v4
		// handler makes (verifyTxnPartitions), without the round trip.
		codes, code := b.txns.Verify(id, a.pid, a.epoch, a.tps)
		if code != 0 {
			return all(code), nil
		}
		return codes, nil
	}
	addr, ok := b.interBrokerAddr(ps.Leader)
	if !ok {
		return nil, fmt.Errorf("no address for coordinator %d", ps.Leader)
	}
	ctx, cancel := context.WithTimeout(ctx, txnVerifyTimeout)
	defer cancel()
	c := b.txnMarks.verifyClient(ps.Leader, addr)
	_, maxV, err := c.Versions(ctx, kmsg.AddPartitionsToTxn.Int16())
	if errors.Is(err, peer.ErrUnsupported) || (err == nil && maxV < addPartitionsVerifyVersion) {
		return all(0), nil // a coordinator without v4: no verification (Kafka 3.6)
	}
	if err != nil {
		return nil, err
	}
	req := kmsg.NewPtrAddPartitionsToTxnRequest()
	req.Version = addPartitionsVerifyVersion
	tx := kmsg.NewAddPartitionsToTxnRequestTransaction()
	tx.TransactionalID, tx.ProducerID, tx.ProducerEpoch, tx.VerifyOnly = id, a.pid, a.epoch, true
	idx := map[string]int{}
	for _, tp := range a.tps {
		i, ok := idx[tp.Topic]
		if !ok {
			i = len(tx.Topics)
			idx[tp.Topic] = i
			tt := kmsg.NewAddPartitionsToTxnRequestTransactionTopic()
			tt.Topic = tp.Topic
			tx.Topics = append(tx.Topics, tt)
		}
		tx.Topics[i].Partitions = append(tx.Topics[i].Partitions, tp.Partition)
	}
	req.Transactions = append(req.Transactions, tx)
	kr, err := c.RequestPinned(ctx, req)
	if err != nil {
		return nil, err
	}
	resp, ok := kr.(*kmsg.AddPartitionsToTxnResponse)
	if !ok {
		return nil, fmt.Errorf("AddPartitionsToTxn answered with %T", kr)
	}
	if resp.ErrorCode != 0 {
		return all(resp.ErrorCode), nil
	}
	out := make(map[kafka.TopicPartition]int16, len(a.tps))
	for _, t := range resp.Transactions {
		if t.TransactionalID != id {
			continue
		}
		for _, rt := range t.Topics {
			for _, p := range rt.Partitions {
				out[kafka.TopicPartition{Topic: rt.Topic, Partition: p.Partition}] = p.ErrorCode
			}
		}
	}
	return out, nil
}
