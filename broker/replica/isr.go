package replica

import (
	"context"
	"slices"
	"sync"
	"time"

	"github.com/sirupsen/logrus"

	"samsa/kafka"
)

// IsrStore persists the ISR changes a leader makes (Kafka's pre-AlterIsr
// path, ZkIsrManager): the broker implements it over zkutil (STYLE S1.4).
type IsrStore interface {
	// UpdateIsr writes the partition state znode with isr if its zkVersion
	// is still expectedZkVersion, returning the new zkVersion. An error
	// leaves the ISR unchanged; the leader waits for a newer LeaderAndIsr.
	UpdateIsr(tp kafka.TopicPartition, leader, leaderEpoch int32, isr []int32, controllerEpoch, expectedZkVersion int32) (int32, error)
	// NotifyIsrChanges creates one /isr_change_notification child naming tps.
	NotifyIsrChanges(tps []kafka.TopicPartition) error
}

// ISR change propagation timing (Kafka ReplicaManager.maybePropagateIsrChanges):
// check every 2.5 s; write when nothing changed for 5 s or the last write is
// 60 s old.
const (
	isrPropagateInterval = 2500 * time.Millisecond
	isrChangeQuiet       = 5 * time.Second
	isrPropagateMax      = 60 * time.Second
)

// isrPropagator batches partitions whose ISR changed.
type isrPropagator struct {
	mu         sync.Mutex
	pending    map[kafka.TopicPartition]struct{}
	lastChange time.Time
	lastWrite  time.Time
}

func (ip *isrPropagator) record(tp kafka.TopicPartition, now time.Time) {
	ip.mu.Lock()
	defer ip.mu.Unlock()
	if ip.pending == nil {
		ip.pending = map[kafka.TopicPartition]struct{}{}
	}
	ip.pending[tp] = struct{}{}
	ip.lastChange = now
}

// due returns the partitions to announce now, if any.
func (ip *isrPropagator) due(now time.Time) []kafka.TopicPartition {
	ip.mu.Lock()
	defer ip.mu.Unlock()
	if len(ip.pending) == 0 {
		return nil
	}
	if now.Sub(ip.lastChange) < isrChangeQuiet && now.Sub(ip.lastWrite) < isrPropagateMax {
		return nil
	}
	out := make([]kafka.TopicPartition, 0, len(ip.pending))
	for tp := range ip.pending {
		out = append(out, tp)
	}
	ip.pending = nil
	ip.lastWrite = now
	return out
}

// isrLoop shrinks ISRs of lagging followers every replica.lag.time.max.ms/2
// and announces ISR changes to the controller. It runs while the Manager is
// open (started by New when an IsrStore is configured). Both intervals run
// on the injected clock (Config.After); each is re-armed after its work.
func (m *Manager) isrLoop(ctx context.Context) {
	shrinkEvery := max(m.cfg.ReplicaLagTimeMax/2, 10*time.Millisecond)
	propagateEvery := min(isrPropagateInterval, m.cfg.ReplicaLagTimeMax)
	shrink, propagate := m.cfg.After(shrinkEvery), m.cfg.After(propagateEvery)
	for {
		select {
		case <-ctx.Done():
			return
		case <-shrink:
			for _, p := range m.Partitions() {
				p.maybeShrinkIsr()
			}
			shrink = m.cfg.After(shrinkEvery)
		case <-propagate:
			if tps := m.isrChanges.due(m.cfg.Now()); len(tps) > 0 {
				if err := m.cfg.Isr.NotifyIsrChanges(tps); err != nil {
					m.log.WithError(err).Warn("writing the ISR change notification failed")
					for _, tp := range tps {
						m.isrChanges.record(tp, m.cfg.Now())
					}
				}
			}
			propagate = m.cfg.After(propagateEvery)
		}
	}
}

// shouldExpandLocked reports whether follower id, having fetched up to
// offset, qualifies to rejoin the ISR (Kafka Partition.isFollowerInSync:
// caught up to the HW and to the start of the current leader epoch).
func (p *Partition) shouldExpandLocked(id int32, offset int64) bool {
	if p.m.cfg.Isr == nil || slices.Contains(p.mu.isr, id) || !slices.Contains(p.mu.replicas, id) {
		return false
	}
	return offset >= p.mu.data.HighWatermark() && offset >= p.mu.epochStartOffset
}

// maybeExpandIsr adds follower id to the ISR if it still qualifies
// (Kafka Partition.maybeExpandIsr). It writes the state znode under the
// partition's write lock, as Kafka does, and reports whether the high
// watermark moved (the caller wakes the purgatories).
func (p *Partition) maybeExpandIsr(id int32) (hwMoved bool) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if !p.isLeaderLocked() {
		return false
	}
	p.progress.Lock()
	fs, ok := p.mu.followers[id]
	offset := int64(-1)
	if ok {
		offset = fs.leo
	}
	p.progress.Unlock()
	if ok && p.mu.isrShrinking {
		// Both writes expect the same zkVersion: the expansion waits for
		// the shrink, which queues it again when it ends
		// (isr_shrink.go). Waiting for the follower's next fetch would
		// not do: a changed-only fetch session does not read an idle
		// partition again, so the follower would rejoin only at the next
		// append or sweep.
		if !slices.Contains(p.mu.expandDeferred, id) {
			p.mu.expandDeferred = append(p.mu.expandDeferred, id)
		}
		return false
	}
	if !ok || !p.shouldExpandLocked(id, offset) {
		return false
	}
	newISR := append(slices.Clone(p.mu.isr), id)
	if p.writeIsrLocked(newISR, []int32{id}, false) {
		return p.maybeIncrementHighWatermarkLocked()
	}
	return false
}

func (p *Partition) outOfSync() []int32 {
	p.mu.RLock()
	defer p.mu.RUnlock()
	return p.outOfSyncLocked()
}

// outOfSyncLocked lists the ISR followers that lag (Kafka
// getOutOfSyncReplicas): not at the log end and not caught up for
// replica.lag.time.max.ms.
func (p *Partition) outOfSyncLocked() []int32 {
	if !p.isLeaderLocked() {
		return nil
	}
	now := p.m.cfg.Now()
	leo := p.mu.data.LogEndOffset()
	p.progress.Lock()
	defer p.progress.Unlock()
	var out []int32
	for _, id := range p.mu.isr {
		if id == p.m.cfg.BrokerID {
			continue
		}
		fs, ok := p.mu.followers[id]
		if !ok || (fs.leo < leo && now.Sub(fs.lastCaughtUp) > p.m.cfg.ReplicaLagTimeMax) {
			out = append(out, id)
		}
	}
	return out
}

// writeIsrLocked persists newISR and applies it on success; changed are
// the replicas that leave (shrink) or join the ISR, named in the log line
// with their progress (isr_log.go).
func (p *Partition) writeIsrLocked(newISR, changed []int32, shrink bool) bool {
	v, err := p.m.cfg.Isr.UpdateIsr(p.tp, p.mu.leader, p.mu.leaderEpoch, newISR, p.mu.controllerEpoch, p.mu.zkVersion)
	return p.applyIsrLocked(newISR, changed, shrink, v, err)
}

// applyIsrLocked applies the outcome of an ISR write: on success newISR
// and its zkVersion v; on err a warning and the old ISR. It reports
// whether the ISR changed.
func (p *Partition) applyIsrLocked(newISR, changed []int32, shrink bool, v int32, err error) bool {
	if err != nil {
		p.log.WithError(err).WithFields(logrus.Fields{"old_isr": p.mu.isr, "new_isr": newISR,
			"leader_epoch": p.mu.leaderEpoch}).
			Warn("ISR change failed; keeping the old ISR until the next LeaderAndIsr")
		return false
	}
	p.logIsrChangeLocked(newISR, changed, shrink)
	p.mu.isr = newISR
	p.mu.zkVersion = v
	p.m.isrChanges.record(p.tp, p.m.cfg.Now())
	p.m.isrChanged(p.tp, shrink)
	return true
}
