package txn

import (
	"time"

	"github.com/sirupsen/logrus"
)

// abortTimedOut fences and aborts every Ongoing transaction open longer
// than its timeout (Kafka's abortTimedOutTransactions): the epoch goes up
// so the old producer's next request is PRODUCER_FENCED and the markers
// fence it on every partition.
func (c *Coordinator) abortTimedOut() {
	type job struct {
		p    int32
		part *partition
		md   *metadata
		t    transit
	}
	nowMs := c.now().UnixMilli()
	var jobs []job
	c.mu.Lock()
	for p, part := range c.mu.parts {
		if part.loading {
			continue
		}
		for _, md := range part.txns {
			if md.state == Ongoing && md.pending == noState && md.startMs+int64(md.timeoutMs) < nowMs {
				md.pending = PrepareEpochFence
				jobs = append(jobs, job{p, part, md, decideFence(md.snapshot(), nowMs)})
			}
		}
	}
	c.mu.Unlock()
	for _, j := range jobs {
		c.lg.WithFields(logrus.Fields{"transactional_id": j.md.id, "producer_id": j.t.pid}).
			Info("txn: aborting a transaction open past its timeout")
		c.metrics.timedOut.Inc(1)
		if code := c.write(j.part.ctx, j.p, j.part, j.md, j.t); code == 0 {
			c.mu.Lock()
			c.startMarkersLocked(j.p, j.part, j.md)
			c.mu.Unlock()
		}
	}
}

// removeExpired writes tombstones for ids idle past
// transactional.id.expiration.ms with no transaction open, and forgets
// them once written (Kafka's removeExpiredTransactionalIds).
func (c *Coordinator) removeExpired() {
	type job struct {
		p    int32
		part *partition
		md   *metadata
	}
	nowMs := c.now().UnixMilli()
	var jobs []job
	c.mu.Lock()
	for p, part := range c.mu.parts {
		if part.loading {
			continue
		}
		for _, md := range part.txns {
			if expirable(md.state) && md.pending == noState && md.updateMs+c.cfg.IDExpiration.Milliseconds() <= nowMs {
				md.pending = Dead
				jobs = append(jobs, job{p, part, md})
			}
		}
	}
	c.mu.Unlock()
	for _, j := range jobs {
		batch, err := buildRecord(EncodeKey(j.md.id), nil, nowMs)
		if err == nil {
			err = appendReplicated(j.part.ctx, c.log, j.p, batch, 30*time.Second)
		}
		c.mu.Lock()
		j.md.pending = noState
		j.md.notifyLocked()
		if err == nil && c.mu.parts[j.p] == j.part && j.part.txns[j.md.id] == j.md {
			delete(j.part.txns, j.md.id)
			c.lg.WithField("transactional_id", j.md.id).Info("txn: removed an expired transactional id")
		}
		c.mu.Unlock()
	}
}
