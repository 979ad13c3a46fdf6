package group

import (
	"samsa/broker/record"
	"samsa/kafka"
)

// replayTxnRecord applies one record of producer pid's transactional
// batch while loading: an offset commit becomes pending for pid.
func (c *Coordinator) replayTxnRecord(p int32, pid int64, key, value []byte, get func(string) *loaded) {
	if key == nil || value == nil {
		return
	}
	k, err := DecodeKey(key)
	if err != nil || !k.IsOffset {
		c.log.WithField("partition", p).Warn("group: skipping a transactional record that is not an offset commit")
		return
	}
	v, err := DecodeOffsetValue(value)
	if err != nil {
		c.log.WithError(err).WithField("partition", p).Warn("group: skipping undecodable transactional offset commit")
		return
	}
	l := get(k.Group)
	if l.txn == nil {
		l.txn = txnPending{}
	}
	if l.txn[pid] == nil {
		l.txn[pid] = map[kafka.TopicPartition]OffsetValue{}
	}
	l.txn[pid][kafka.TopicPartition{Topic: k.Topic, Partition: k.Partition}] = v
}

// replayTxnMarker applies a transaction marker while loading: the
// producer's pending offsets in every group become committed or are
// dropped (Kafka's loadGroupsAndOffsets with its pendingOffsets map).
func (c *Coordinator) replayTxnMarker(p int32, b record.Batch, groups map[string]*loaded) {
	pid := b.ProducerID()
	if pid < 0 {
		return
	}
	recs, err := b.Records(c.cfg.LoadMaxDecompressedBytes)
	if err != nil || len(recs) == 0 {
		return
	}
	m, err := record.ParseEndTxnMarker(recs[0].Key, recs[0].Value)
	if err != nil {
		return
	}
	c.txnSeqs.marker(p, pid, b.ProducerEpoch())
	for _, l := range groups {
		pending := l.txn[pid]
		if pending == nil {
			continue
		}
		delete(l.txn, pid)
		if m.Commit {
			for tp, v := range pending {
				l.offsets[tp] = v
			}
		}
	}
}
