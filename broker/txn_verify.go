package broker

import (
	"sync"

	"samsa/broker/replica"
)

// txnVerifyKey identifies a producer in a partition.
type txnVerifyKey struct {
	tp  replica.TopicPartition
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

func (c *txnVerifyCache) verified(tp replica.TopicPartition, pid int64, epoch int16) bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	e, ok := c.mu.epochs[txnVerifyKey{tp, pid}]
	return ok && e == epoch
}

func (c *txnVerifyCache) add(tp replica.TopicPartition, pid int64, epoch int16) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.mu.epochs == nil {
		c.mu.epochs = map[txnVerifyKey]int16{}
	}
	c.mu.epochs[txnVerifyKey{tp, pid}] = epoch
}

// dropProducer forgets pid's verification for tp.
func (c *txnVerifyCache) dropProducer(tp replica.TopicPartition, pid int64) {
	c.mu.Lock()
	defer c.mu.Unlock()
	delete(c.mu.epochs, txnVerifyKey{tp, pid})
}

// verifiedTxnEnded is called when a marker for pid was appended to tp: the
// next transaction must be verified again.
func (b *Broker) verifiedTxnEnded(tp replica.TopicPartition, pid int64) {
	b.txnVerify.dropProducer(tp, pid)
}
