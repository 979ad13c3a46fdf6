package replica

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"time"

	"github.com/sirupsen/logrus"

	"samsa/broker/storage"
	"samsa/kafka"
)

// FetchSource is how a follower reaches its leader (implemented by the
// broker over peer; STYLE S1.4). Every call blocks at most until ctx
// ends; an error means the whole request failed (connection, framing).
type FetchSource interface {
	// Fetch sends req and fills resp with the leader's answer. A fetcher
	// keeps one resp and passes it to each of its Fetch calls (never to two
	// at once), so the source reuses its memory: it resets resp.Partitions
	// and may keep its own state in resp.Scratch. Records alias that memory
	// and are valid until resp is passed to Fetch again.
	Fetch(ctx context.Context, leader LeaderEndpoint, req FollowerFetch, resp *FollowerFetchResponse) error
	EndOffsetsForEpoch(ctx context.Context, leader LeaderEndpoint, req map[kafka.TopicPartition]EpochQuery) (map[kafka.TopicPartition]EpochEndOffset, error)
	// LogRange returns the leader's log start and log end offsets of tp
	// (ListOffsets earliest and latest as a replica).
	LogRange(ctx context.Context, leader LeaderEndpoint, tp kafka.TopicPartition) (start, end int64, err error)
}

// FollowerFetch is one replica fetch request.
type FollowerFetch struct {
	ReplicaID int32
	MaxWaitMs int32
	MinBytes  int32
	MaxBytes  int32
	// Partitions are every partition to fetch, in no particular order.
	Partitions []FollowerFetchPartition
	// Changed and Forgotten say how Partitions differ from the previous
	// FollowerFetch the fetcher passed to Fetch (whatever its outcome):
	// the partitions added or with new values, and the ones left out. A
	// source with a fetch session (KIP-227) builds an incremental request
	// from them alone, never looking at the unchanged partitions; one that
	// cannot (a failed call before it built its request, a new session)
	// must build from Partitions.
	Changed   []FollowerFetchPartition
	Forgotten []kafka.TopicPartition
}

// FollowerFetchPartition is one partition of a replica fetch.
type FollowerFetchPartition struct {
	kafka.TopicPartition
	FetchOffset        int64
	CurrentLeaderEpoch int32
	LogStartOffset     int64
	MaxBytes           int32
}

// String prints every field (the embedded TopicPartition's String would
// print only the partition).
func (p FollowerFetchPartition) String() string { return kafka.FieldsString(p) }

// FollowerFetchResponse is the leader's answer to a FollowerFetch.
type FollowerFetchResponse struct {
	// Partitions holds one result per partition answered, in the leader's
	// order.
	Partitions []FollowerFetchResult
	// Scratch is the FetchSource's reusable state (request and decoding
	// buffers); the fetcher never reads it.
	Scratch any
}

// FollowerFetchResult is the leader's answer for one partition.
type FollowerFetchResult struct {
	kafka.TopicPartition
	Err            error // mapped from the Kafka error code; nil on success
	HighWatermark  int64
	LogStartOffset int64
	Records        []byte
}

// String prints every field (the embedded TopicPartition's String would
// print only the partition).
func (r FollowerFetchResult) String() string { return kafka.FieldsString(r) }

// EpochQuery asks for the end offset of LeaderEpoch (OffsetsForLeaderEpoch).
type EpochQuery struct {
	CurrentLeaderEpoch int32
	LeaderEpoch        int32
}

// EpochEndOffset is the leader's answer to an EpochQuery.
type EpochEndOffset struct {
	Err         error
	LeaderEpoch int32 // -1 when the leader knows no such epoch
	EndOffset   int64 // -1 when unknown
}

// partitionFetchState is a fetcher's bookkeeping for one partition.
type partitionFetchState struct {
	leaderEpoch int32
	truncated   bool // truncation by leader epoch done for this epoch
	// delayedUntil keeps the partition out of requests after an error of
	// its own (Kafka's AbstractFetcherThread.delayPartitions), so the
	// other partitions of the leader keep fetching; zero when never delayed.
	delayedUntil time.Time
}

// requestPart is a partition's place in the fetcher's request
// (fetcher_request.go).
type requestPart struct {
	idx         int // in req.Partitions
	leaderEpoch int32
	throttled   bool   // counted against the follower throttle
	answered    uint64 // the last round whose answer was applied (a repeated one is ignored)
}

// fetcher copies the logs of its share of the partitions led by one broker
// (Kafka's ReplicaFetcherThread; num.replica.fetchers of them per leader). Its goroutine is started by fetcherManager.add.
type fetcher struct {
	fm     *fetcherManager
	leader int32
	log    logrus.FieldLogger
	ctx    context.Context
	cancel context.CancelFunc

	mu struct {
		sync.Mutex
		endpoint   LeaderEndpoint
		partitions map[kafka.TopicPartition]*partitionFetchState
		// changed are the partitions whose state (or log start offset)
		// changed since the run goroutine last looked (sync).
		changed map[kafka.TopicPartition]struct{}
	}
	wake chan struct{} // buffer 1: partitions were added

	// Owned by the run goroutine and kept from fetch to fetch, so that an
	// idle round touches no partition and a steady fetch allocates
	// nothing here (fetcher_request.go).
	fetchRequestState
	req  FollowerFetch
	resp FollowerFetchResponse
	// now is the clock read once per round when a partition is delayed;
	// nextReady the earliest end of a delay seen this round.
	now, nextReady time.Time
}

func newFetcher(fm *fetcherManager, leader int32, id int) *fetcher {
	ctx, cancel := context.WithCancel(context.Background())
	f := &fetcher{fm: fm, leader: leader, ctx: ctx, cancel: cancel, wake: make(chan struct{}, 1),
		log: fm.m.log.WithFields(logrus.Fields{"component": "replica-fetcher", "leader": leader, "fetcher": id})}
	f.mu.endpoint = LeaderEndpoint{ID: leader}
	f.mu.partitions = make(map[kafka.TopicPartition]*partitionFetchState)
	f.mu.changed = make(map[kafka.TopicPartition]struct{})
	f.fetchRequestState = newFetchRequestState()
	return f
}

func (f *fetcher) setEndpoint(ep LeaderEndpoint) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.mu.endpoint = ep
}

func (f *fetcher) addPartition(t fetchTarget) {
	f.mu.Lock()
	f.mu.partitions[t.tp] = &partitionFetchState{leaderEpoch: t.leaderEpoch}
	f.mu.changed[t.tp] = struct{}{}
	f.mu.Unlock()
	select {
	case f.wake <- struct{}{}:
	default:
	}
}

func (f *fetcher) removePartition(tp kafka.TopicPartition) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if _, ok := f.mu.partitions[tp]; ok {
		delete(f.mu.partitions, tp)
		f.mu.changed[tp] = struct{}{}
	}
}

// touch makes the next round look at tp again (its log start offset moved).
func (f *fetcher) touch(tp kafka.TopicPartition) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if _, ok := f.mu.partitions[tp]; ok {
		f.mu.changed[tp] = struct{}{}
	}
}

func (f *fetcher) stop() { f.cancel() }

func (f *fetcher) markTruncated(tp kafka.TopicPartition, epoch int32) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if s, ok := f.mu.partitions[tp]; ok && s.leaderEpoch == epoch {
		s.truncated = true
		f.mu.changed[tp] = struct{}{}
	}
}

// delay keeps tp out of requests for replica.fetch.backoff.ms after err,
// an error of that partition alone, unless its leader epoch changed since.
func (f *fetcher) delay(tp kafka.TopicPartition, epoch int32, err error) {
	until := f.fm.m.cfg.Now().Add(f.backoff())
	f.mu.Lock()
	if s, ok := f.mu.partitions[tp]; ok && s.leaderEpoch == epoch {
		s.delayedUntil = until
		f.mu.changed[tp] = struct{}{}
	}
	f.mu.Unlock()
	f.log.WithError(err).WithFields(logrus.Fields{"topic": tp.Topic, "partition": tp.Partition}).
		Debug("replica fetch of a partition failed; backing off that partition")
}

// delayed reports whether s is still in a delay, noting the earliest end
// of a delay in f.nextReady. It reads the clock at most once per round.
func (f *fetcher) delayed(s partitionFetchState) bool {
	if s.delayedUntil.IsZero() {
		return false
	}
	if f.now.IsZero() {
		f.now = f.fm.m.cfg.Now()
	}
	if !f.now.Before(s.delayedUntil) {
		return false
	}
	if f.nextReady.IsZero() || s.delayedUntil.Before(f.nextReady) {
		f.nextReady = s.delayedUntil
	}
	return true
}

// backoff is replica.fetch.backoff.ms (at least 10 ms).
func (f *fetcher) backoff() time.Duration {
	return time.Duration(max(f.fm.cfg.BackoffMs, 10)) * time.Millisecond
}

// run is the fetch loop. It returns when the fetcher is stopped. After a
// round that appended data the next request is written at once: the new
// fetch offsets are what move the leader's high watermark.
func (f *fetcher) run() {
	backoff := f.backoff()
	for f.ctx.Err() == nil {
		ep := f.sync()
		if len(f.states) == 0 {
			select {
			case <-f.wake:
			case <-f.ctx.Done():
			}
			continue
		}
		if err := f.fetchOnce(ep); err != nil && f.ctx.Err() == nil {
			f.log.WithError(err).Debug("replica fetch failed; backing off")
			select {
			case <-f.fm.m.cfg.After(backoff):
			case <-f.ctx.Done():
			}
		}
	}
}

// fetchOnce truncates partitions that need it, then sends one fetch. It
// returns an error when a whole request failed (the caller backs off);
// an error of one partition only delays that partition.
//
// A round is either a truncation round or a fetch round, never both, as in
// Kafka's AbstractFetcherThread: a partition whose leader or epoch changed
// must first truncate to the leader's epoch end (KIP-101/KIP-279), and the
// fetch that follows uses the positions after truncation.
func (f *fetcher) fetchOnce(ep LeaderEndpoint) error {
	f.now, f.nextReady = time.Time{}, time.Time{}
	queries, err := f.epochQueries(ep)
	if err != nil {
		return err
	}
	if len(queries) > 0 {
		return f.truncateByEpoch(ep, queries) // fetch with the new positions on the next round
	}
	held := f.buildFetch()
	if len(f.req.Partitions) == 0 {
		// Nothing to ask for: every partition is delayed or out of quota.
		// Wait for the first to become ready instead of spinning.
		switch {
		case held:
			f.waitForQuota()
		case !f.nextReady.IsZero():
			f.waitFor(f.nextReady.Sub(f.now))
		}
		return nil
	}
	f.roundNo++
	err = f.fm.cfg.Source.Fetch(f.ctx, ep, f.req, &f.resp)
	f.sent() // the source has seen Changed and Forgotten, whatever happened
	if err != nil {
		return err
	}
	f.applyFetch(ep)
	return nil
}

// epochQueries returns the OffsetsForLeaderEpoch query of every partition
// not yet truncated for its current leader epoch (nil when there is none);
// it looks at those partitions only (f.untruncated).
// A partition that should start at the leader's log end (Samsa's log-end
// reassignment) is moved there first, so its query asks about the new log.
func (f *fetcher) epochQueries(ep LeaderEndpoint) (map[kafka.TopicPartition]EpochQuery, error) {
	m := f.fm.m
	var queries map[kafka.TopicPartition]EpochQuery // only after a leader or epoch change
	for tp := range f.untruncated {
		s := f.states[tp]
		if s.truncated || f.delayed(s) {
			continue
		}
		if queries == nil {
			queries = make(map[kafka.TopicPartition]EpochQuery)
		}
		p := m.Partition(tp)
		if p == nil {
			continue
		}
		if m.wantsLogEndStart(p) {
			if err := f.startAtLeaderEnd(ep, p, s.leaderEpoch); err != nil {
				return nil, err
			}
		}
		queries[tp] = EpochQuery{CurrentLeaderEpoch: s.leaderEpoch, LeaderEpoch: p.latestLocalEpoch()}
	}
	return queries, nil
}

// truncateByEpoch asks the leader for the end offsets of the queried epochs
// and truncates each partition to what it answered. A partition the leader
// could not answer for, or whose truncation failed, is delayed; the others
// are marked truncated for this leader epoch and fetch from the next round.
func (f *fetcher) truncateByEpoch(ep LeaderEndpoint, queries map[kafka.TopicPartition]EpochQuery) error {
	m := f.fm.m
	ends, err := f.fm.cfg.Source.EndOffsetsForEpoch(f.ctx, ep, queries)
	if err != nil {
		return err
	}
	for tp, eo := range ends {
		s, ok := f.states[tp]
		if !ok {
			continue
		}
		if eo.Err != nil {
			f.delay(tp, s.leaderEpoch, fmt.Errorf("replica: %s: OffsetsForLeaderEpoch: %w", tp, eo.Err))
			continue
		}
		p := m.Partition(tp)
		if p == nil {
			continue
		}
		if err := p.truncateForFollower(s.leaderEpoch, eo); err != nil {
			f.log.WithError(err).WithFields(logrus.Fields{"topic": tp.Topic, "partition": tp.Partition}).
				Warn("truncation by leader epoch failed")
			f.delay(tp, s.leaderEpoch, err)
			continue
		}
		f.markTruncated(tp, s.leaderEpoch)
	}
	return nil
}

// applyFetch appends each partition's answer in f.resp as the follower's
// log. Only partitions asked for in this round count, once each (a leader
// answering a partition twice must not append twice). Throttled bytes are
// recorded against the follower quota whatever the outcome; OFFSET_OUT_OF_RANGE
// realigns the log (handleOutOfRange); any other error delays the partition.
func (f *fetcher) applyFetch(ep LeaderEndpoint) {
	m := f.fm.m
	for i := range f.resp.Partitions {
		r := &f.resp.Partitions[i]
		tp := r.TopicPartition
		rs, ok := f.inReq[tp]
		if !ok || rs.answered == f.roundNo {
			continue // not asked for, or answered twice
		}
		rs.answered = f.roundNo
		f.touched[tp] = struct{}{} // its log end or start moved, or it errs
		p := m.Partition(tp)
		if p == nil {
			continue
		}
		if rs.throttled {
			m.FollowerThrottle.Record(int64(len(r.Records)))
		}
		if r.Err != nil {
			if errors.Is(r.Err, storage.ErrOffsetOutOfRange) {
				if err := f.handleOutOfRange(ep, p, rs.leaderEpoch); err != nil {
					f.delay(tp, rs.leaderEpoch, err)
				}
				continue
			}
			f.delay(tp, rs.leaderEpoch, r.Err)
			continue
		}
		if err := p.appendAsFollower(rs.leaderEpoch, r); err != nil {
			f.delay(tp, rs.leaderEpoch, fmt.Errorf("replica: %s: follower append: %w", tp, err))
		}
	}
}

// waitFor pauses for d of clock time, or until partitions are added or the
// fetcher stops.
func (f *fetcher) waitFor(d time.Duration) {
	select {
	case <-f.fm.m.cfg.After(max(d, time.Millisecond)):
	case <-f.ctx.Done():
	case <-f.wake:
	}
}

// waitForQuota pauses until the follower throttle has bytes again (at most
// one second, or until the fetcher stops).
func (f *fetcher) waitForQuota() {
	d := min(max(f.fm.m.FollowerThrottle.Delay(), 10*time.Millisecond), time.Second)
	select {
	case <-f.fm.m.cfg.After(d):
	case <-f.ctx.Done():
	case <-f.wake:
	}
}

// handleOutOfRange realigns a follower whose fetch offset the leader
// refused (Kafka AbstractFetcherThread.fetchOffsetAndTruncate): ahead of
// the leader's log end (after an unclean election) it truncates to it;
// behind the leader's log start it restarts its log there.
func (f *fetcher) handleOutOfRange(ep LeaderEndpoint, p *Partition, leaderEpoch int32) error {
	start, end, err := f.fm.cfg.Source.LogRange(f.ctx, ep, p.tp)
	if err != nil {
		return err
	}
	return p.realignForFollower(leaderEpoch, start, end)
}
