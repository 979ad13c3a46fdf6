package replica

import (
	"slices"
	"sync/atomic"

	"github.com/sirupsen/logrus"

	"samsa/kafka"
)

// Starting a new replica at the leader's log end (Samsa's reassignment
// option for cache-like topics): instead of copying the partition from the
// leader's log start, a replica that is out of the ISR, has an empty local
// log and is named by the broker's StartAtLogEnd callback restarts its log
// at the leader's log end offset (TruncateFullyAndStartAt) and fetches only
// what is written from then on. It joins the ISR as soon as it reaches the
// high watermark, so the reassignment finishes in bounded time whatever
// the partition's size. The trade-off: the replica never holds the older
// records; if it becomes leader, consumers can no longer read them.

// startAtLogEndFn is the callback's type.
type startAtLogEndFn = func(tp kafka.TopicPartition) bool

// logEndStart holds the callback; nil means "never".
type logEndStart struct {
	fn atomic.Pointer[startAtLogEndFn]
}

// SetStartAtLogEnd installs the callback that names the partitions whose
// new replicas on this broker start at the leader's log end. It is called
// only for a followed partition that is out of the ISR with an empty log,
// from a fetcher goroutine; it may read ZooKeeper.
func (m *Manager) SetStartAtLogEnd(fn func(tp kafka.TopicPartition) bool) {
	if fn == nil {
		m.logEnd.fn.Store(nil)
		return
	}
	f := startAtLogEndFn(fn)
	m.logEnd.fn.Store(&f)
}

// wantsLogEndStart reports whether p should start at the leader's log end.
func (m *Manager) wantsLogEndStart(p *Partition) bool {
	fn := m.logEnd.fn.Load()
	if fn == nil {
		return false
	}
	p.mu.RLock()
	l := p.mu.data
	inIsr := slices.Contains(p.mu.isr, m.cfg.BrokerID)
	p.mu.RUnlock()
	if l == nil || inIsr || l.LogEndOffset() != 0 || l.LogStartOffset() != 0 {
		return false
	}
	return (*fn)(p.tp)
}

// startAtLeaderEnd restarts the empty follower log at the leader's log end.
func (f *fetcher) startAtLeaderEnd(ep LeaderEndpoint, p *Partition, leaderEpoch int32) error {
	_, end, err := f.fm.cfg.Source.LogRange(f.ctx, ep, p.tp)
	if err != nil {
		return err
	}
	p.mu.RLock()
	defer p.mu.RUnlock()
	if !p.followingLocked(leaderEpoch) {
		return nil
	}
	l := p.mu.data
	if l.LogEndOffset() != 0 || end <= 0 {
		return nil
	}
	p.log.WithFields(logrus.Fields{"offset": end}).
		Warn("new replica starts at the leader's log end; it will not hold the older records")
	return p.truncatedLocked(l.TruncateFullyAndStartAt(end))
}
