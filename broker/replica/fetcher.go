package replica

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"time"

	"github.com/sirupsen/logrus"

	"samsa/broker/record"
	"samsa/broker/storage"
)

// FetchSource is how a follower reaches its leader (implemented by the
// broker over broker/peer; STYLE S1.4). Both calls block at most until ctx
// ends; an error means the whole request failed (connection, framing).
type FetchSource interface {
	Fetch(ctx context.Context, leader LeaderEndpoint, req FollowerFetch) (map[TopicPartition]FollowerFetchResult, error)
	EndOffsetsForEpoch(ctx context.Context, leader LeaderEndpoint, req map[TopicPartition]EpochQuery) (map[TopicPartition]EpochEndOffset, error)
	// LogRange returns the leader's log start and log end offsets of tp
	// (ListOffsets earliest and latest as a replica).
	LogRange(ctx context.Context, leader LeaderEndpoint, tp TopicPartition) (start, end int64, err error)
}

// FollowerFetch is one replica fetch request.
type FollowerFetch struct {
	ReplicaID  int32
	MaxWaitMs  int32
	MinBytes   int32
	MaxBytes   int32
	Partitions []FollowerFetchPartition
}

// FollowerFetchPartition is one partition of a replica fetch.
type FollowerFetchPartition struct {
	TopicPartition
	FetchOffset        int64
	CurrentLeaderEpoch int32
	LogStartOffset     int64
	MaxBytes           int32
}

// FollowerFetchResult is the leader's answer for one partition.
type FollowerFetchResult struct {
	Err            error // mapped from the Kafka error code; nil on success
	HighWatermark  int64
	LogStartOffset int64
	Records        []byte
}

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
}

// fetcher copies the logs of the partitions led by one broker (Kafka's
// ReplicaFetcherThread). Its goroutine is started by fetcherManager.add.
type fetcher struct {
	fm     *fetcherManager
	leader int32
	log    logrus.FieldLogger
	ctx    context.Context
	cancel context.CancelFunc

	mu struct {
		sync.Mutex
		endpoint   LeaderEndpoint
		partitions map[TopicPartition]*partitionFetchState
	}
	wake chan struct{} // buffer 1: partitions were added
}

func newFetcher(fm *fetcherManager, leader int32) *fetcher {
	ctx, cancel := context.WithCancel(context.Background())
	f := &fetcher{fm: fm, leader: leader, ctx: ctx, cancel: cancel, wake: make(chan struct{}, 1),
		log: fm.m.log.WithFields(logrus.Fields{"component": "replica-fetcher", "leader": leader})}
	f.mu.endpoint = LeaderEndpoint{ID: leader}
	f.mu.partitions = make(map[TopicPartition]*partitionFetchState)
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
	f.mu.Unlock()
	select {
	case f.wake <- struct{}{}:
	default:
	}
}

func (f *fetcher) removePartition(tp TopicPartition) {
	f.mu.Lock()
	defer f.mu.Unlock()
	delete(f.mu.partitions, tp)
}

func (f *fetcher) stop() { f.cancel() }

// snapshot returns the endpoint and a copy of the partition states.
func (f *fetcher) snapshot() (LeaderEndpoint, map[TopicPartition]partitionFetchState) {
	f.mu.Lock()
	defer f.mu.Unlock()
	out := make(map[TopicPartition]partitionFetchState, len(f.mu.partitions))
	for tp, s := range f.mu.partitions {
		out[tp] = *s
	}
	return f.mu.endpoint, out
}

func (f *fetcher) markTruncated(tp TopicPartition, epoch int32) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if s, ok := f.mu.partitions[tp]; ok && s.leaderEpoch == epoch {
		s.truncated = true
	}
}

// run is the fetch loop. It returns when the fetcher is stopped.
func (f *fetcher) run() {
	backoff := time.Duration(max(f.fm.cfg.BackoffMs, 10)) * time.Millisecond
	for f.ctx.Err() == nil {
		ep, parts := f.snapshot()
		if len(parts) == 0 {
			select {
			case <-f.wake:
			case <-f.ctx.Done():
			}
			continue
		}
		if err := f.fetchOnce(ep, parts); err != nil && f.ctx.Err() == nil {
			f.log.WithError(err).Debug("replica fetch failed; backing off")
			select {
			case <-f.fm.m.cfg.After(backoff):
			case <-f.ctx.Done():
			}
		}
	}
}

// fetchOnce truncates partitions that need it, then sends one fetch.
func (f *fetcher) fetchOnce(ep LeaderEndpoint, parts map[TopicPartition]partitionFetchState) error {
	m := f.fm.m
	queries := map[TopicPartition]EpochQuery{}
	for tp, s := range parts {
		if !s.truncated {
			p := m.Partition(tp)
			if p == nil {
				continue
			}
			if m.wantsLogEndStart(p) {
				if err := f.startAtLeaderEnd(ep, p, s.leaderEpoch); err != nil {
					return err
				}
			}
			queries[tp] = EpochQuery{CurrentLeaderEpoch: s.leaderEpoch, LeaderEpoch: p.latestLocalEpoch()}
		}
	}
	if len(queries) > 0 {
		ends, err := f.fm.cfg.Source.EndOffsetsForEpoch(f.ctx, ep, queries)
		if err != nil {
			return err
		}
		var failed error
		for tp, eo := range ends {
			if eo.Err != nil {
				failed = fmt.Errorf("replica: %s: OffsetsForLeaderEpoch: %w", tp, eo.Err)
				continue
			}
			p := m.Partition(tp)
			if p == nil {
				continue
			}
			if err := p.truncateForFollower(parts[tp].leaderEpoch, eo); err != nil {
				f.log.WithError(err).WithFields(logrus.Fields{"topic": tp.Topic, "partition": tp.Partition}).
					Warn("truncation by leader epoch failed")
				failed = err
				continue
			}
			f.markTruncated(tp, parts[tp].leaderEpoch)
		}
		return failed // fetch with the new positions on the next round
	}

	req := FollowerFetch{ReplicaID: m.cfg.BrokerID, MaxWaitMs: f.fm.cfg.MaxWaitMs,
		MinBytes: f.fm.cfg.MinBytes, MaxBytes: f.fm.cfg.MaxBytes}
	throttled := map[TopicPartition]bool{}
	held := false // a throttled partition was left out: its quota is used up
	for tp, s := range parts {
		p := m.Partition(tp)
		if p == nil {
			continue
		}
		l := p.Log()
		if l == nil {
			continue
		}
		maxBytes := f.fm.cfg.PartitionMaxBytes
		if m.followerThrottled(p) {
			avail := m.FollowerThrottle.Available()
			if avail == 0 {
				held = true
				continue
			}
			throttled[tp] = true
			maxBytes = int32(min(int(maxBytes), avail))
		}
		req.Partitions = append(req.Partitions, FollowerFetchPartition{TopicPartition: tp,
			FetchOffset: l.LogEndOffset(), CurrentLeaderEpoch: s.leaderEpoch,
			LogStartOffset: l.LogStartOffset(), MaxBytes: maxBytes})
	}
	if len(req.Partitions) == 0 {
		if held {
			f.waitForQuota()
		}
		return nil
	}
	results, err := f.fm.cfg.Source.Fetch(f.ctx, ep, req)
	if err != nil {
		return err
	}
	var failed error
	for tp, r := range results {
		s, ok := parts[tp]
		p := m.Partition(tp)
		if !ok || p == nil {
			continue
		}
		if throttled[tp] {
			m.FollowerThrottle.Record(int64(len(r.Records)))
		}
		if r.Err != nil {
			if errors.Is(r.Err, storage.ErrOffsetOutOfRange) {
				if err := f.handleOutOfRange(ep, p, s.leaderEpoch); err != nil {
					failed = err
				}
				continue
			}
			failed = r.Err
			continue
		}
		if err := p.appendAsFollower(s.leaderEpoch, r); err != nil {
			failed = fmt.Errorf("replica: %s: follower append: %w", tp, err)
		}
	}
	return failed
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

// latestLocalEpoch returns the last leader epoch in the local log's epoch
// cache (-1 when empty).
func (p *Partition) latestLocalEpoch() int32 {
	l := p.Log()
	if l == nil {
		return -1
	}
	return l.LeaderEpochCache().LatestEpoch()
}

// followingLocked reports whether p still follows with leaderEpoch.
func (p *Partition) followingLocked(leaderEpoch int32) bool {
	return p.mu.data != nil && p.mu.leader >= 0 && p.mu.leader != p.m.cfg.BrokerID && p.mu.leaderEpoch == leaderEpoch
}

// truncateForFollower truncates the local log by the leader's answer to an
// OffsetsForLeaderEpoch query (KIP-101/KIP-279, Kafka's
// AbstractFetcherThread.getOffsetTruncationState): to the end offset of the
// largest common epoch, never past the local log end. The leader answers
// with the largest epoch it knows at or below the one asked; when that is
// an epoch this replica also has, the target is the smaller of the two
// replicas' end offsets for it, and when it is not, the end offset of this
// replica's largest epoch below it — otherwise a replica that led briefly
// (fast double failover, KAFKA-6361) keeps batches of an epoch the new
// leader never had. An unknown epoch (-1) falls back to the high
// watermark, as Kafka does.
func (p *Partition) truncateForFollower(leaderEpoch int32, eo EpochEndOffset) error {
	p.mu.RLock()
	defer p.mu.RUnlock()
	if !p.followingLocked(leaderEpoch) {
		return nil
	}
	l := p.mu.data
	target := eo.EndOffset
	if eo.LeaderEpoch < 0 || target < 0 {
		target = l.HighWatermark()
	} else if localEpoch, localEnd := l.EndOffsetForEpoch(eo.LeaderEpoch); localEnd >= 0 {
		if localEpoch != eo.LeaderEpoch {
			target = localEnd
		} else {
			target = min(target, localEnd)
		}
	}
	if target >= l.LogEndOffset() {
		return nil
	}
	p.log.WithFields(logrus.Fields{"offset": target, "log_end_offset": l.LogEndOffset()}).
		Info("truncating follower log by leader epoch")
	return l.TruncateTo(target)
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

func (p *Partition) realignForFollower(leaderEpoch int32, leaderStart, leaderEnd int64) error {
	p.mu.RLock()
	defer p.mu.RUnlock()
	if !p.followingLocked(leaderEpoch) {
		return nil
	}
	l := p.mu.data
	leo := l.LogEndOffset()
	switch {
	case leaderEnd < leo:
		p.log.WithFields(logrus.Fields{"offset": leaderEnd, "log_end_offset": leo}).
			Warn("follower ahead of the leader; truncating to the leader's log end")
		return l.TruncateTo(max(leaderEnd, l.LogStartOffset()))
	case leaderStart > leo:
		p.log.WithField("offset", leaderStart).Warn("follower behind the leader's log start; restarting the log there")
		return l.TruncateFullyAndStartAt(leaderStart)
	}
	return nil
}

// appendAsFollower appends the whole batches of r and follows the
// leader's high watermark (Kafka Partition.appendRecordsToFollower).
func (p *Partition) appendAsFollower(leaderEpoch int32, r FollowerFetchResult) error {
	p.mu.RLock()
	defer p.mu.RUnlock()
	if !p.followingLocked(leaderEpoch) {
		return nil
	}
	l := p.mu.data
	whole := wholeBatches(r.Records)
	if len(whole) > 0 {
		if _, err := l.AppendAsFollower(whole); err != nil {
			return err
		}
	}
	if hw := min(r.HighWatermark, l.LogEndOffset()); hw > l.HighWatermark() {
		l.SetHighWatermark(hw)
	}
	// Follow the leader's log start (DeleteRecords, retention), as Kafka's
	// maybeIncrementLogStartOffset on followers; never past our HW.
	if r.LogStartOffset > l.LogStartOffset() && r.LogStartOffset <= l.HighWatermark() {
		if _, err := l.DeleteRecordsBefore(r.LogStartOffset); err != nil {
			return err
		}
	}
	return nil
}

// wholeBatches returns the prefix of buf made of complete batches (a fetch
// response may end with a partial batch).
func wholeBatches(buf []byte) []byte {
	rest := buf
	for len(rest) > 0 {
		_, next, err := record.NextBatch(rest)
		if err != nil {
			break
		}
		rest = next
	}
	return buf[:len(buf)-len(rest)]
}
