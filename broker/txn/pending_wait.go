package txn

import (
	"context"
	"time"

	"samsa/kafka"
)

// A request that Kafka 2.8 answers CONCURRENT_TRANSACTIONS because the
// id's previous step is still in flight (a state append pending, or the
// markers of the last transaction not yet all written) waits here for
// that step instead, at most Config.PendingWait, and is then decided
// again. Kafka's clients treat CONCURRENT_TRANSACTIONS as "back off and
// retry" (franz-go 20 ms, Sarama 20 ms for a transaction's first
// AddPartitionsToTxn and Producer.Transaction.Retry.Backoff, 100 ms, for
// AddOffsetsToTxn, the Java producer retry.backoff.ms), so a producer
// that begins its next transaction as soon as EndTxn answered sleeps that
// long although the markers take well under a millisecond. Waiting on the
// broker gives the client the answer it would have got after its retry,
// minus the sleep; if the step is still in flight after PendingWait the
// answer is CONCURRENT_TRANSACTIONS as in Kafka, so a stuck marker (a
// partition leader down) costs a client what it costs against Kafka.
// The waits are a purgatory keyed by metadata: a channel closed on every
// change of state or pending transition (notifyLocked).

// pendingWait is one request's bound on its waits, started on first use.
type pendingWait struct {
	d time.Duration
	t *time.Timer
}

// expired returns the channel that fires when the request's wait is over.
func (w *pendingWait) expired() <-chan time.Time {
	if w.t == nil {
		w.t = time.NewTimer(w.d)
	}
	return w.t.C
}

func (w *pendingWait) stop() {
	if w.t != nil {
		w.t.Stop()
	}
}

// notifyLocked wakes the requests waiting for md to change.
func (md *metadata) notifyLocked() {
	if md.changed != nil {
		close(md.changed)
		md.changed = nil
	}
}

// awaitChangeLocked is called with c.mu held and returns with it
// released. It waits until md changes, ctx or the partition's tenure
// ends, or w expires, and reports whether md changed (the caller decides
// again from the new state).
func (c *Coordinator) awaitChangeLocked(ctx context.Context, part *partition, md *metadata, w *pendingWait) bool {
	if w.d <= 0 {
		c.mu.Unlock()
		return false
	}
	if md.changed == nil {
		md.changed = make(chan struct{})
	}
	ch := md.changed
	c.mu.Unlock()
	c.metrics.pendingWaits.Inc(1)
	select {
	case <-ch:
		return true
	case <-ctx.Done():
	case <-part.ctx.Done():
	case <-w.expired():
	}
	return false
}

// queueAdds records tps of a request waiting behind md's pending
// AddPartitions append (checked against pid and epoch).
func (md *metadata) queueAdds(pid int64, epoch int16, tps []kafka.TopicPartition) {
	if md.queuedAdds == nil {
		md.queuedAdds = map[queuedAdd]struct{}{}
	}
	for _, tp := range tps {
		md.queuedAdds[queuedAdd{pid, epoch, tp}] = struct{}{}
	}
}

// withQueuedAdds returns tps plus the queued partitions of the same
// producer epoch: the write a request makes covers the requests queued
// behind the previous one, which then find their partitions committed.
// Those of another producer epoch are left out (their requests decide
// on their own, and get PRODUCER_FENCED).
func (md *metadata) withQueuedAdds(pid int64, epoch int16, tps []kafka.TopicPartition) []kafka.TopicPartition {
	if len(md.queuedAdds) == 0 {
		return tps
	}
	out := append([]kafka.TopicPartition(nil), tps...)
	for q := range md.queuedAdds {
		if q.pid == pid && q.epoch == epoch {
			out = append(out, q.tp)
		}
	}
	return out
}

// takeQueuedAdds forgets the queued partitions of pid and epoch (a write
// carrying them starts) and those of any other producer epoch (stale).
func (md *metadata) takeQueuedAdds(_ int64, _ int16) {
	md.queuedAdds = nil
}
