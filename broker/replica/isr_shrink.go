package replica

import (
	"slices"

	"github.com/sirupsen/logrus"
)

// maybeShrinkIsr removes followers that have not caught up to the leader's
// log end for replica.lag.time.max.ms (Kafka Partition.maybeShrinkIsr).
//
// The ZooKeeper write of the new ISR is made without the partition's lock,
// so appends, reads and follower fetches of the partition go on during the
// round trip (Kafka 2.7+ does the same with its pending ISR state, KIP-497;
// 2.8's pre-AlterIsr ZooKeeper path holds the write lock across it). This
// is safe for a shrink because until the write succeeds the partition
// keeps using the old, larger ISR: the high watermark still waits for the
// lagging follower and min.insync.replicas is checked against the old ISR,
// which is what Kafka's pending shrink does (its maximal ISR is the old
// one). isrShrinking keeps a second ISR change from starting meanwhile, and
// the result is applied only if no LeaderAndIsr changed the leader epoch or
// zkVersion in between (the controller's state wins; the write, conditional
// on the old zkVersion, then failed or is superseded). An expansion that
// finds the shrink in flight is queued again when the shrink ends
// (expandDeferred), whatever its outcome. An expansion still
// writes under the lock: applying it late would let the high watermark pass
// the joining follower's log end while ZooKeeper already names it in sync.
func (p *Partition) maybeShrinkIsr() {
	if p.m.cfg.Isr == nil || len(p.outOfSync()) == 0 {
		return
	}
	p.mu.Lock()
	out := p.outOfSyncLocked()
	if len(out) == 0 || !p.isLeaderLocked() || p.mu.isrShrinking {
		p.mu.Unlock()
		return
	}
	newISR := make([]int32, 0, len(p.mu.isr))
	for _, id := range p.mu.isr {
		if !slices.Contains(out, id) {
			newISR = append(newISR, id)
		}
	}
	leader, epoch, cepoch, zkv := p.mu.leader, p.mu.leaderEpoch, p.mu.controllerEpoch, p.mu.zkVersion
	p.mu.isrShrinking = true
	p.mu.Unlock()

	v, err := p.m.cfg.Isr.UpdateIsr(p.tp, leader, epoch, newISR, cepoch, zkv)

	p.mu.Lock()
	p.mu.isrShrinking = false
	deferred := p.mu.expandDeferred
	p.mu.expandDeferred = nil
	defer func() {
		for _, id := range deferred {
			p.m.requestExpand(p.tp, id) // each re-checks under the lock
		}
	}()
	if !p.isLeaderLocked() || p.mu.leaderEpoch != epoch || p.mu.zkVersion != zkv {
		p.log.WithFields(logrus.Fields{"new_isr": newISR, "leader_epoch": epoch, "zk_version": zkv}).
			Info("ISR shrink superseded by a LeaderAndIsr during its write; keeping the controller's state")
		p.mu.Unlock()
		return
	}
	moved := false
	if p.applyIsrLocked(newISR, out, true, v, err) {
		moved = p.maybeIncrementHighWatermarkLocked()
	}
	p.mu.Unlock()
	if moved {
		p.m.notify(p.tp)
	}
}
