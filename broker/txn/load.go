package txn

import (
	"fmt"

	"github.com/sirupsen/logrus"

	"samsa/broker/record"
	"samsa/broker/replay"
)

// load replays partition p into part and then resumes the marker loops of
// transactions left in PrepareCommit/PrepareAbort by the previous
// coordinator (Kafka's loadTransactionsForTxnTopicPartition).
func (c *Coordinator) load(p int32, part *partition) {
	start := c.now()
	txns, err := c.replay(part, p)
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.mu.parts[p] != part {
		return // resigned meanwhile
	}
	if err != nil {
		c.lg.WithError(err).WithField("partition", p).Error("txn: loading transaction state failed; not coordinating it")
		part.cancel()
		delete(c.mu.parts, p)
		return
	}
	part.txns, part.loading = txns, false
	resumed := 0
	for _, md := range txns {
		if md.state == PrepareCommit || md.state == PrepareAbort {
			c.startMarkersLocked(p, part, md)
			resumed++
		}
	}
	took := c.now().Sub(start)
	c.metrics.observeLoad(took)
	c.lg.WithFields(logrus.Fields{"partition": p, "epoch": part.epoch, "ids": len(txns), "resumed": resumed, "took": took}).
		Info("txn: loaded transaction state partition")
}

// replay reads partition p from its start to the log end offset of the
// first read (not the high watermark, as Kafka; the loop is broker/replay's,
// shared with the group coordinator): last value wins and a tombstone
// removes the id. Undecodable records are logged and skipped.
func (c *Coordinator) replay(part *partition, p int32) (map[string]*metadata, error) {
	txns := map[string]*metadata{}
	read := func(off int64, maxBytes int) ([]byte, int64, error) {
		res, err := c.log.ReadFrom(p, off, maxBytes)
		return res.Batches, res.End, err
	}
	apply := func(b record.Batch, _ int64) error {
		if b.IsControl() {
			return nil
		}
		recs, err := b.Records(c.cfg.LoadMaxDecompressedBytes)
		if err != nil {
			return fmt.Errorf("batch at %d: %w", b.BaseOffset(), err)
		}
		for i := range recs {
			c.replayRecord(txns, p, b.BaseOffset()+int64(recs[i].OffsetDelta), recs[i].Key, recs[i].Value)
		}
		return nil
	}
	if err := replay.Partition(part.ctx, read, c.cfg.LoadBufferSize, apply); err != nil {
		return nil, fmt.Errorf("txn: partition %d: %w", p, err)
	}
	return txns, nil
}

// replayRecord applies one record to txns.
func (c *Coordinator) replayRecord(txns map[string]*metadata, p int32, offset int64, key, value []byte) {
	id, err := DecodeKey(key)
	if err == nil {
		var v *Value
		if v, err = DecodeValue(value); err == nil {
			if v == nil {
				delete(txns, id)
			} else {
				txns[id] = fromValue(id, v)
			}
			return
		}
	}
	c.lg.WithError(err).WithFields(logrus.Fields{"partition": p, "offset": offset}).
		Warn("txn: skipping an undecodable transaction state record")
}
