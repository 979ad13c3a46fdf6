package txn

import (
	"context"
	"time"

	"github.com/sirupsen/logrus"
	"github.com/twmb/franz-go/pkg/kerr"

	"samsa/kafka"
)

// Marker is one transaction's COMMIT or ABORT marker for a set of
// partitions (one entry of WriteTxnMarkers).
type Marker struct {
	ProducerID       int64
	ProducerEpoch    int16
	Commit           bool
	CoordinatorEpoch int32
	Partitions       []kafka.TopicPartition
}

// MarkerWriter delivers markers to partition leaders (the broker sends
// WriteTxnMarkers over the inter-broker listener).
type MarkerWriter interface {
	// WriteMarkers sends m to the current leader of each of its partitions
	// and returns a Kafka error code per partition: NONE once the leader
	// wrote the control batch, NONE as well for a partition the metadata
	// does not know (Kafka treats it as deleted), LEADER_NOT_AVAILABLE for
	// one whose leader is unknown or not a live broker (Kafka's
	// unknown-destination queue), another retriable code
	// (NOT_LEADER_OR_FOLLOWER, NETWORK_EXCEPTION, ...) otherwise. It
	// blocks until every leader answered or ctx ends.
	WriteMarkers(ctx context.Context, m Marker) map[kafka.TopicPartition]int16
}

// startMarkersLocked starts the loop that brings md from Prepare* to
// Complete*, unless one runs already.
func (c *Coordinator) startMarkersLocked(p int32, part *partition, md *metadata) {
	if md.markerRunning {
		return
	}
	md.markerRunning = true
	c.goTracked(func() { c.markerLoop(p, part, md) })
}

// markerLoop is the goroutine startMarkersLocked starts: completeTxn, then
// settleComplete. The id's next transaction may reach Prepare* between
// Complete* being applied and this loop ending (its EndTxn found
// markerRunning still set and started nothing): the loop then starts
// the next one, or that transaction would never get its markers.
func (c *Coordinator) markerLoop(p int32, part *partition, md *metadata) {
	done := c.completeTxn(p, part, md)
	if h := c.loopEndHook.Load(); h != nil {
		(*h)()
	}
	c.mu.Lock()
	md.markerRunning = false
	md.unknownDest, md.appendRetry = 0, false
	if done && (md.state == PrepareCommit || md.state == PrepareAbort) && c.mu.parts[p] == part && part.txns[md.id] == md {
		c.startMarkersLocked(p, part, md)
	}
	c.mu.Unlock()
	if done {
		c.settleComplete(p, part, md)
	}
}

// completeTxn sends md's markers until every partition's leader has one,
// then writes Complete* (Kafka's TransactionMarkerChannelManager and
// completion handler). It stops when the partition is resigned (the next
// coordinator resumes from its log), or when a leader answers that the
// producer epoch or coordinator epoch is stale (a newer coordinator owns
// the transaction). It reports whether it wrote Complete*.
func (c *Coordinator) completeTxn(p int32, part *partition, md *metadata) bool {
	backoff := c.cfg.RetryBackoff
	for {
		c.mu.Lock()
		if c.mu.parts[p] != part || part.txns[md.id] != md || (md.state != PrepareCommit && md.state != PrepareAbort) {
			c.mu.Unlock()
			return false
		}
		m := Marker{ProducerID: md.pid, ProducerEpoch: md.epoch, Commit: md.state == PrepareCommit,
			CoordinatorEpoch: part.epoch, Partitions: md.partitionList()}
		if len(m.Partitions) == 0 && md.pending == noState {
			t := decideComplete(md.snapshot(), c.now().UnixMilli())
			md.pending = t.state
			c.mu.Unlock()
			switch code := c.write(part.ctx, p, part, md, t); code {
			case 0:
				c.lg.WithFields(logrus.Fields{"transactional_id": md.id, "state": t.state}).Debug("txn: transaction completed")
				return true
			case kerr.NotCoordinator.Code:
				return false
			}
			c.mu.Lock()
			md.appendRetry = true // Kafka's txnLogAppendRetryQueue
			c.mu.Unlock()
			if !sleepCtx(part.ctx, backoff) {
				return false
			}
			continue
		}
		c.mu.Unlock()
		if len(m.Partitions) == 0 { // another transition is pending: wait for it
			if !sleepCtx(part.ctx, backoff) {
				return false
			}
			continue
		}
		res := c.markers.WriteMarkers(part.ctx, m)
		c.metrics.markersSent.Inc(int64(len(m.Partitions)))
		stop, retry := false, false
		c.mu.Lock()
		md.unknownDest = 0
		for _, tp := range m.Partitions {
			code, ok := res[tp]
			switch {
			case !ok:
				retry = true
			case code == kerr.LeaderNotAvailable.Code:
				md.unknownDest++ // Kafka's markersQueueForUnknownBroker
				retry = true
			case code == 0, code == kerr.UnsupportedForMessageFormat.Code, code == kerr.UnsupportedVersion.Code:
				delete(md.partitions, tp)
			case code == kerr.InvalidProducerEpoch.Code, code == kerr.TransactionCoordinatorFenced.Code:
				stop = true
			default:
				retry = true
			}
		}
		c.mu.Unlock()
		if stop {
			c.lg.WithField("transactional_id", md.id).Info("txn: a leader fenced the markers; a newer coordinator owns the transaction")
			return false
		}
		if retry && !sleepCtx(part.ctx, backoff) {
			return false
		}
	}
}

// sleepCtx waits d or until ctx ends; it reports whether d passed.
func sleepCtx(ctx context.Context, d time.Duration) bool {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-ctx.Done():
		return false
	case <-t.C:
		return true
	}
}
