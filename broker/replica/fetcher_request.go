package replica

// The follower fetcher's request, kept from round to round and changed only
// where something changed, so that an idle round looks at no partition
// (issue 18 point 3: no per-partition polling). Kafka's ReplicaFetcherThread
// rebuilds its request from every partition each round and its
// FetchSessionHandler compares them all; here the fetcher knows what
// changed (its own appends and truncations, partitions added, removed,
// truncated, delayed or released, a log start moved by retention) and hands
// the session that delta (FollowerFetch.Changed, Forgotten).

import (
	"time"

	"samsa/broker/storage"
	"samsa/kafka"
)

// fetchRequestState is the run goroutine's view of its partitions and of
// the request it sends.
type fetchRequestState struct {
	// states is a copy of mu.partitions, updated from mu.changed (sync);
	// untruncated the ones still to truncate for their leader epoch.
	states      map[kafka.TopicPartition]partitionFetchState
	untruncated map[kafka.TopicPartition]struct{}
	// touched are the partitions to look at again in the next buildFetch;
	// delays the ones out of the request until a time, looked at again
	// then; throttled the ones under the follower throttle, looked at
	// every round (their share of the quota changes).
	touched   map[kafka.TopicPartition]struct{}
	delays    map[kafka.TopicPartition]time.Time
	throttled map[kafka.TopicPartition]struct{}
	// inReq places each partition of req.Partitions; changed and forgotten
	// are the delta since the last request handed to the source.
	inReq     map[kafka.TopicPartition]*requestPart
	changed   map[kafka.TopicPartition]struct{}
	forgotten map[kafka.TopicPartition]struct{}
	roundNo   uint64                 // requests sent
	retry     []kafka.TopicPartition // to look at again next round (no open log yet)
}

func newFetchRequestState() fetchRequestState {
	return fetchRequestState{
		states:      map[kafka.TopicPartition]partitionFetchState{},
		untruncated: map[kafka.TopicPartition]struct{}{},
		touched:     map[kafka.TopicPartition]struct{}{},
		delays:      map[kafka.TopicPartition]time.Time{},
		throttled:   map[kafka.TopicPartition]struct{}{},
		inReq:       map[kafka.TopicPartition]*requestPart{},
		changed:     map[kafka.TopicPartition]struct{}{},
		forgotten:   map[kafka.TopicPartition]struct{}{},
	}
}

// sync takes the partitions whose state changed since the last round into
// f.states (each to be looked at again) and returns the leader endpoint.
func (f *fetcher) sync() LeaderEndpoint {
	f.mu.Lock()
	defer f.mu.Unlock()
	for tp := range f.mu.changed {
		if s, ok := f.mu.partitions[tp]; ok {
			f.states[tp] = *s
			if s.truncated {
				delete(f.untruncated, tp)
			} else {
				f.untruncated[tp] = struct{}{}
			}
		} else {
			delete(f.states, tp)
			delete(f.untruncated, tp)
			delete(f.delays, tp)
		}
		f.touched[tp] = struct{}{}
	}
	clear(f.mu.changed)
	return f.mu.endpoint
}

// buildFetch brings f.req up to date: every truncated, ready partition
// from its log end, with Changed and Forgotten naming what moved since the
// last request. It looks only at the touched partitions, those whose delay
// ended and the throttled ones. A throttled partition
// (leader/follower.replication.throttled.replicas) asks for at most the
// bytes left in the follower quota, and is left out when none are left:
// held reports that, so the caller waits for the quota instead of a delay.
func (f *fetcher) buildFetch() (held bool) {
	f.expireDelays()
	for tp := range f.throttled {
		f.touched[tp] = struct{}{}
	}
	for tp := range f.touched {
		e, rp, ok, h := f.evaluate(tp)
		held = held || h
		if ok {
			f.put(e, rp)
		} else {
			f.drop(tp)
		}
	}
	clear(f.touched)
	for _, tp := range f.retry {
		f.touched[tp] = struct{}{}
	}
	f.retry = f.retry[:0]
	cfg := f.fm.cfg
	req := &f.req
	req.ReplicaID, req.MaxWaitMs, req.MinBytes, req.MaxBytes = f.fm.m.cfg.BrokerID, cfg.MaxWaitMs, cfg.MinBytes, cfg.MaxBytes
	req.Changed, req.Forgotten = req.Changed[:0], req.Forgotten[:0]
	for tp := range f.changed {
		req.Changed = append(req.Changed, req.Partitions[f.inReq[tp].idx])
	}
	for tp := range f.forgotten {
		req.Forgotten = append(req.Forgotten, tp)
	}
	return held
}

// sent forgets the delta once the source was handed a request.
func (f *fetcher) sent() {
	clear(f.changed)
	clear(f.forgotten)
}

// evaluate returns tp's request entry and whether it belongs in the
// request (truncated, not delayed, its log open, quota left); held when
// the follower throttle alone keeps it out.
func (f *fetcher) evaluate(tp kafka.TopicPartition) (e FollowerFetchPartition, rp requestPart, ok, held bool) {
	m := f.fm.m
	s, known := f.states[tp]
	if !known || !s.truncated {
		return e, rp, false, false
	}
	if f.delayed(s) {
		f.delays[tp] = s.delayedUntil
		return e, rp, false, false
	}
	var l *storage.Log
	p := m.Partition(tp)
	if p != nil {
		l = p.Log()
	}
	if l == nil {
		// Not open yet (or gone without a removal seen yet): looked at
		// again next round, as the whole-walk fetcher did.
		f.retry = append(f.retry, tp)
		return e, rp, false, false
	}
	maxBytes := f.fm.cfg.PartitionMaxBytes
	throttled := m.followerThrottled(p)
	if throttled {
		f.throttled[tp] = struct{}{}
		avail := m.FollowerThrottle.Available()
		if avail == 0 {
			return e, rp, false, true
		}
		maxBytes = int32(min(int(maxBytes), avail))
	} else {
		delete(f.throttled, tp)
	}
	e = FollowerFetchPartition{TopicPartition: tp, FetchOffset: l.LogEndOffset(), CurrentLeaderEpoch: s.leaderEpoch,
		LogStartOffset: l.LogStartOffset(), MaxBytes: maxBytes}
	return e, requestPart{leaderEpoch: s.leaderEpoch, throttled: throttled}, true, false
}

// put places e in the request, noting it as changed if it is new or
// differs from what the last request asked.
func (f *fetcher) put(e FollowerFetchPartition, rp requestPart) {
	tp := e.TopicPartition
	if cur, ok := f.inReq[tp]; ok {
		if f.req.Partitions[cur.idx] != e {
			f.req.Partitions[cur.idx] = e
			f.changed[tp] = struct{}{}
		}
		cur.leaderEpoch, cur.throttled = rp.leaderEpoch, rp.throttled
		return
	}
	rp.idx = len(f.req.Partitions)
	f.inReq[tp] = &rp
	f.req.Partitions = append(f.req.Partitions, e)
	f.changed[tp] = struct{}{}
	delete(f.forgotten, tp)
}

// drop takes tp out of the request, noting it as forgotten.
func (f *fetcher) drop(tp kafka.TopicPartition) {
	cur, ok := f.inReq[tp]
	if !ok {
		return
	}
	last := len(f.req.Partitions) - 1
	if cur.idx != last {
		moved := f.req.Partitions[last]
		f.req.Partitions[cur.idx] = moved
		f.inReq[moved.TopicPartition].idx = cur.idx
	}
	f.req.Partitions = f.req.Partitions[:last]
	delete(f.inReq, tp)
	delete(f.changed, tp)
	f.forgotten[tp] = struct{}{}
}

// expireDelays marks the partitions whose delay ended as touched, noting
// the earliest end still to come in f.nextReady. It reads the clock only
// when a partition is delayed.
func (f *fetcher) expireDelays() {
	if len(f.delays) == 0 {
		return
	}
	if f.now.IsZero() {
		f.now = f.fm.m.cfg.Now()
	}
	for tp, until := range f.delays {
		if !f.now.Before(until) {
			delete(f.delays, tp)
			f.touched[tp] = struct{}{}
		} else if f.nextReady.IsZero() || until.Before(f.nextReady) {
			f.nextReady = until
		}
	}
}
