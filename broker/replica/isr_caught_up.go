package replica

import (
	"sync"
	"sync/atomic"
	"time"
)

// A follower's caught-up time on an idle partition.
//
// Kafka 2.8 refreshes a follower's lastCaughtUpTimeMs on every fetch, for
// every partition of the request: a follower at the log end of an idle
// partition is caught up as of its last fetch. Samsa's changed-only fetch
// sessions (broker/fetchsession) do not read an idle partition for its
// followers, so recordFollowerFetchLocked ran only at the 5 s sweep, and
// with replica.lag.time.max.ms below that the ISR loop could shrink a
// healthy follower between an append and the follower's fetch of it. So
// the leader keeps, per follower broker, the time of its last session fetch
// (Manager.FollowerFetched, from the fetch handler), and when the log end
// moves past what a follower had fetched (the first high-watermark check
// after an append, caughtUpUntilLocked), that follower counts as caught up
// as of its last fetch, as Kafka's rule gives: its offset was the log end
// at every fetch until then. A follower that stopped fetching keeps its
// old time and is shrunk as in Kafka.
//
// The time is per follower broker, not per fetch session: with
// num.replica.fetchers > 1, a stalled fetcher's idle partitions count as
// caught up while another fetcher of the same broker fetches, until the
// next append, after which the stall shows within replica.lag.time.max.ms.

// followerFetches holds, per follower broker id, the UnixNano of its last
// session fetch. The map only grows (one entry per follower broker).
type followerFetches struct {
	mu   sync.RWMutex
	last map[int32]*atomic.Int64
}

// FollowerFetched records that follower broker id sent a fetch in a fetch
// session now (called by the fetch handler for every authorised follower
// session fetch, whatever partitions it reads).
func (m *Manager) FollowerFetched(id int32) {
	now := m.cfg.Now().UnixNano()
	f := &m.followerFetches
	f.mu.RLock()
	v := f.last[id]
	f.mu.RUnlock()
	if v == nil {
		f.mu.Lock()
		if f.last == nil {
			f.last = map[int32]*atomic.Int64{}
		}
		if v = f.last[id]; v == nil {
			v = new(atomic.Int64)
			f.last[id] = v
		}
		f.mu.Unlock()
	}
	v.Store(now)
}

// lastFollowerFetch returns when follower broker id last sent a session
// fetch (zero if never).
func (m *Manager) lastFollowerFetch(id int32) time.Time {
	f := &m.followerFetches
	f.mu.RLock()
	v := f.last[id]
	f.mu.RUnlock()
	if v == nil {
		return time.Time{}
	}
	return time.Unix(0, v.Load())
}

// caughtUpUntilLocked is called with the log end leo whenever the high
// watermark is checked: if the log end moved past the last one seen
// (p.knownEnd), every follower that had fetched up to that one was caught
// up until this append, so its caught-up time becomes its last fetch (if
// later). The caller holds mu (read or write) and progress.
func (p *Partition) caughtUpUntilLocked(leo int64) {
	if leo <= p.knownEnd {
		p.knownEnd = leo
		return
	}
	for id, fs := range p.mu.followers {
		if fs.leo < 0 || fs.leo < p.knownEnd {
			continue
		}
		if t := p.m.lastFollowerFetch(id); t.After(fs.lastCaughtUp) {
			fs.lastCaughtUp = t
		}
	}
	p.knownEnd = leo
}
