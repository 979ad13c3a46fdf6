package txn

import (
	"errors"
	"fmt"

	"github.com/sirupsen/logrus"

	"samsa/broker/record"
)

// errNoProgress: a read returned nothing below the end offset.
var errNoProgress = errors.New("txn: transaction state read made no progress")

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
// first read (not the high watermark, as Kafka): last value wins and a
// tombstone removes the id. Undecodable records are logged and skipped.
func (c *Coordinator) replay(part *partition, p int32) (map[string]*metadata, error) {
	txns := map[string]*metadata{}
	var off int64
	end := int64(-1)
	for {
		if err := part.ctx.Err(); err != nil {
			return nil, err
		}
		res, err := c.log.ReadFrom(p, off, c.cfg.LoadBufferSize)
		if err != nil {
			return nil, fmt.Errorf("txn: read partition %d at %d: %w", p, off, err)
		}
		if end < 0 {
			end = res.End
		}
		if off >= end {
			return txns, nil
		}
		if len(res.Batches) == 0 {
			return nil, fmt.Errorf("%w (partition %d, offset %d, end %d)", errNoProgress, p, off, end)
		}
		next := off
		for rest := res.Batches; len(rest) > 0; {
			b, r, err := record.NextBatch(rest)
			if err != nil {
				return nil, fmt.Errorf("txn: partition %d: %w", p, err)
			}
			rest = r
			if b.LastOffset() < off {
				continue
			}
			next = b.LastOffset() + 1
			if b.IsControl() {
				continue
			}
			recs, err := b.Records(c.cfg.LoadMaxDecompressedBytes)
			if err != nil {
				return nil, fmt.Errorf("txn: partition %d batch at %d: %w", p, b.BaseOffset(), err)
			}
			for i := range recs {
				c.replayRecord(txns, p, b.BaseOffset()+int64(recs[i].OffsetDelta), recs[i].Key, recs[i].Value)
			}
		}
		if next <= off {
			return nil, fmt.Errorf("%w (partition %d, offset %d)", errNoProgress, p, off)
		}
		off = next
	}
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
