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

// verifyTxnPartition is KIP-890 part 1 (Kafka 3.6's leader-side check,
// behind transaction.partition.verification.enable): before the first
// transactional batch of a producer epoch is appended to tp, the leader
// asks the transaction coordinator of txnID (the leader of
// __transaction_state partition abs(hash(txnID)) % partitions, found in the
// metadata cache as a client's FindCoordinator would) with
// AddPartitionsToTxn v4, verify_only, whether tp is in the producer's
// ongoing transaction. A positive answer is cached until a marker ends the
// transaction in tp or the epoch changes, so later batches cost one map
// lookup. Errors are the produce answer (Kafka's ReplicaManager mapping):
// INVALID_TXN_STATE as is; CONCURRENT_TRANSACTIONS, coordinator loading,
// unavailable or moved, and network errors NOT_ENOUGH_REPLICAS (retriable);
// PRODUCER_FENCED INVALID_PRODUCER_EPOCH; INVALID_PRODUCER_ID_MAPPING as is.
// A coordinator without v4 skips the check, as Kafka does.
func (b *Broker) verifyTxnPartition(ctx context.Context, txnID *string, tp kafka.TopicPartition, batches []byte) error {
	if !b.cfg.TransactionPartitionVerificationEnable {
		return nil
	}
	if m, err := record.Magic(batches); err != nil || m < record.MagicV2 {
		return nil
	}
	h, err := record.ParseHeader(batches, 0)
	if err != nil || !h.IsTransactional() || h.IsControl() || h.ProducerID < 0 {
		return nil // not transactional, or storage rejects it anyway
	}
	if b.txnVerify.verified(tp, h.ProducerID, h.ProducerEpoch) {
		return nil
	}
	if txnID == nil || *txnID == "" {
		return fmt.Errorf("%w: transactional batch of producer %d without a transactional id", kerr.InvalidTxnState, h.ProducerID)
	}
	code, err := b.askTxnCoordinator(ctx, *txnID, tp, h.ProducerID, h.ProducerEpoch)
	if err != nil {
		return fmt.Errorf("%w: verifying %s with the transaction coordinator: %v", kerr.NotEnoughReplicas, tp, err)
	}
	switch code {
	case 0:
		b.txnVerify.add(tp, h.ProducerID, h.ProducerEpoch)
		return nil
	case kerr.InvalidTxnState.Code, kerr.ClusterAuthorizationFailed.Code:
		return fmt.Errorf("%w: %s is not in the ongoing transaction of %q (producer %d epoch %d)",
			kerr.InvalidTxnState, tp, *txnID, h.ProducerID, h.ProducerEpoch)
	case kerr.ProducerFenced.Code, kerr.InvalidProducerEpoch.Code:
		return fmt.Errorf("%w: producer %d epoch %d is fenced", kerr.InvalidProducerEpoch, h.ProducerID, h.ProducerEpoch)
	case kerr.InvalidProducerIDMapping.Code:
		return kerr.InvalidProducerIDMapping
	default: // CONCURRENT_TRANSACTIONS, COORDINATOR_*, NOT_COORDINATOR, ...
		return fmt.Errorf("%w: transaction coordinator answered %v", kerr.NotEnoughReplicas, kerr.ErrorForCode(code))
	}
}

// askTxnCoordinator sends the verify-only AddPartitionsToTxn v4 and
// returns tp's error code (or the top-level one). A coordinator that
// does not offer v4 answers 0: no verification.
func (b *Broker) askTxnCoordinator(ctx context.Context, txnID string, tp kafka.TopicPartition, pid int64, epoch int16) (int16, error) {
	snap := b.meta.Snapshot()
	n := int32(len(snap.Topics[transactionStateTopic]))
	if n == 0 {
		return 0, fmt.Errorf("no %s topic", transactionStateTopic)
	}
	ps, ok := snap.Partition(transactionStateTopic, group.PartitionFor(txnID, n))
	if !ok || ps.Leader < 0 {
		return 0, fmt.Errorf("the coordinator's partition of %q has no leader", txnID)
	}
	addr, ok := b.interBrokerAddr(ps.Leader)
	if !ok {
		return 0, fmt.Errorf("no address for coordinator %d", ps.Leader)
	}
	ctx, cancel := context.WithTimeout(ctx, txnVerifyTimeout)
	defer cancel()
	c := peer.New(addr, "txn-verify-"+itoa(b.ID()), b.peerOptions()...)
	defer c.Close()
	_, maxV, err := c.Versions(ctx, kmsg.AddPartitionsToTxn.Int16())
	if errors.Is(err, peer.ErrUnsupported) || (err == nil && maxV < 4) {
		return 0, nil // a coordinator without v4: no verification (Kafka 3.6)
	}
	if err != nil {
		return 0, err
	}
	req := kmsg.NewPtrAddPartitionsToTxnRequest()
	req.Version = 4
	tx := kmsg.NewAddPartitionsToTxnRequestTransaction()
	tx.TransactionalID, tx.ProducerID, tx.ProducerEpoch, tx.VerifyOnly = txnID, pid, epoch, true
	tt := kmsg.NewAddPartitionsToTxnRequestTransactionTopic()
	tt.Topic, tt.Partitions = tp.Topic, []int32{tp.Partition}
	tx.Topics = append(tx.Topics, tt)
	req.Transactions = append(req.Transactions, tx)
	kr, err := c.RequestPinned(ctx, req)
	if err != nil {
		return 0, err
	}
	resp, ok := kr.(*kmsg.AddPartitionsToTxnResponse)
	if !ok {
		return 0, fmt.Errorf("AddPartitionsToTxn answered with %T", kr)
	}
	if resp.ErrorCode != 0 {
		return resp.ErrorCode, nil
	}
	for _, t := range resp.Transactions {
		for _, rt := range t.Topics {
			for _, p := range rt.Partitions {
				if rt.Topic == tp.Topic && p.Partition == tp.Partition {
					return p.ErrorCode, nil
				}
			}
		}
	}
	return 0, fmt.Errorf("the coordinator's answer does not name %s", tp)
}
