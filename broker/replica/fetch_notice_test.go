package replica

import (
	"context"
	"errors"
	"strconv"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kerr"

	"samsa/broker/fetchsession"
	"samsa/broker/purgatory"
	"samsa/broker/record"
	"samsa/broker/storage"
	"samsa/kafka"
)

// followerSession is a consumer's incremental fetch session (KIP-227) on a
// follower replica (KIP-392 reads), served as the broker's Fetch handler
// serves it: a fetch session cache hears the fetch purgatory's notices
// (broker/fetch_session.go's watchFetchChanges), and each changed-only
// incremental fetch reads only the partitions the cache says changed.
type followerSession struct {
	t      *testing.T
	m      *Manager
	cache  *fetchsession.Cache
	id     int32
	epoch  int32
	offset int64 // the consumer's position
}

// newFollowerSession opens the session with a full fetch of tp0 from
// offset and checks that, once the new session has examined tp0, an
// unchanged tp0 is left out of its answers.
func newFollowerSession(t *testing.T, m *Manager, offset int64) *followerSession {
	t.Helper()
	s := &followerSession{t: t, m: m, cache: fetchsession.NewCache(fetchsession.Config{Slots: 10}), offset: offset}
	m.Fetch.SetObserver(purgatory.Observer{Changed: s.cache.Changed, ChangedAll: s.cache.ChangedAll})
	x := s.cache.NewContext(fetchsession.Request{Partitions: s.entries()})
	s.id = x.Finish([]fetchsession.PartitionResponse{s.read()}, make([]bool, 1))
	if s.id == fetchsession.InvalidSessionID {
		t.Fatal("no session created")
	}
	s.epoch = 1
	// A new session examines everything once; then an unchanged partition
	// is neither read nor answered.
	if got := s.fetch(false); got != nil {
		t.Fatalf("first incremental fetch answered %+v, want nothing", *got)
	}
	if got := s.fetch(false); got != nil {
		t.Fatalf("idle incremental fetch answered %+v, want nothing", *got)
	}
	return s
}

// entries names tp0 at the consumer's position.
func (s *followerSession) entries() []fetchsession.Entry {
	return []fetchsession.Entry{{TP: tp0, Req: fetchsession.PartitionRequest{FetchOffset: s.offset, LogStartOffset: -1,
		MaxBytes: 1 << 20, CurrentLeaderEpoch: -1, LastFetchedEpoch: -1}}}
}

// read is the partition's answer to the consumer now, as the Fetch
// handler builds it (an error answers -1 offsets).
func (s *followerSession) read() fetchsession.PartitionResponse {
	s.t.Helper()
	res, err := s.m.Read(tp0, ReadParams{ReplicaID: ConsumerReplicaID, FetchOffset: s.offset, MaxBytes: 1 << 20,
		CurrentLeaderEpoch: -1, FollowerLogStartOffset: -1, AnyReplica: true})
	switch {
	case errors.Is(err, storage.ErrOffsetOutOfRange):
		return fetchsession.PartitionResponse{ErrorCode: kerr.OffsetOutOfRange.Code, HighWatermark: -1, LogStartOffset: -1, LastStableOffset: -1}
	case err != nil:
		s.t.Fatalf("consumer read on the follower: %v", err)
	}
	return fetchsession.PartitionResponse{HighWatermark: res.HighWatermark, LogStartOffset: res.LogStartOffset,
		LastStableOffset: res.LastStableOffset}
}

// fetch sends the next changed-only incremental fetch (naming tp0 at the
// consumer's position if named, else no partition) and returns what it
// answers for tp0: nil when tp0 is left out of the response.
func (s *followerSession) fetch(named bool) *fetchsession.PartitionResponse {
	s.t.Helper()
	req := fetchsession.Request{SessionID: s.id, Epoch: s.epoch, ChangedOnly: true}
	if named {
		req.Partitions = s.entries()
	}
	x := s.cache.NewContext(req)
	s.epoch++
	if x.Kind != fetchsession.Incremental {
		s.t.Fatalf("incremental fetch got context kind %d (error %d)", x.Kind, x.ErrorCode)
	}
	parts := x.Partitions()
	resps := make([]fetchsession.PartitionResponse, len(parts))
	for i := range parts {
		resps[i] = s.read()
	}
	include := make([]bool, len(parts))
	x.Finish(resps, include)
	for i, e := range parts {
		if e.TP == tp0 && include[i] {
			return &resps[i]
		}
	}
	return nil
}

// sees checks that the next incremental fetch answers tp0 with high
// watermark hw and log start offset start, and the one after nothing.
func (s *followerSession) sees(what string, hw, start int64) {
	s.t.Helper()
	s.answered(what, s.fetch(false), hw, start)
}

func (s *followerSession) answered(what string, got *fetchsession.PartitionResponse, hw, start int64) {
	s.t.Helper()
	if got == nil {
		s.t.Fatalf("%s: the incremental fetch left the partition out, want high watermark %d, log start %d", what, hw, start)
	}
	if got.ErrorCode != 0 || got.HighWatermark != hw || got.LogStartOffset != start {
		s.t.Fatalf("%s: answered error %d, high watermark %d, log start %d, want 0, %d, %d", what,
			got.ErrorCode, got.HighWatermark, got.LogStartOffset, hw, start)
	}
	if again := s.fetch(false); again != nil {
		s.t.Fatalf("%s: the next fetch answered %+v again, want nothing", what, *again)
	}
}

// seesOutOfRange checks that the next incremental fetch answers tp0 with
// OFFSET_OUT_OF_RANGE (the log restarted past the consumer's position);
// the consumer then moves to offset and its next fetch, naming tp0 there,
// answers high watermark hw and log start offset start.
func (s *followerSession) seesOutOfRange(what string, offset, hw, start int64) {
	s.t.Helper()
	if got := s.fetch(false); got == nil || got.ErrorCode != kerr.OffsetOutOfRange.Code {
		s.t.Fatalf("%s: the incremental fetch answered %+v, want OFFSET_OUT_OF_RANGE", what, got)
	}
	s.offset = offset
	s.answered(what+", consumer reset to "+strconv.FormatInt(offset, 10), s.fetch(true), hw, start)
}

// newFollowerWithData makes this broker a follower of tp0 (leader 2,
// epoch 9) holding offsets 0-3 in leader epochs 5, 5, 7 and 8, high
// watermark 4.
func newFollowerWithData(t *testing.T) (*Manager, *Partition) {
	t.Helper()
	m, _ := newTestManager(t, 1, 1)
	res, err := m.BecomeLeaderOrFollower(context.Background(), LeaderAndIsr{ControllerEpoch: 1,
		Partitions: []PartitionState{{TopicPartition: tp0, Leader: 2, LeaderEpoch: 9, ISR: []int32{2, 1}, Replicas: []int32{2, 1}}}})
	if err != nil || res[tp0] != nil {
		t.Fatal(err, res)
	}
	p := m.Partition(tp0)
	var batches []byte
	for off, epoch := range []int32{5, 5, 7, 8} {
		h := record.NewBuildHeader(int64(off), time.Now().UnixMilli())
		h.PartitionLeaderEpoch = epoch
		b, err := record.Build(h, []record.Record{{Value: []byte("v")}}, record.CodecNone)
		if err != nil {
			t.Fatal(err)
		}
		batches = append(batches, b...)
	}
	if err := p.appendAsFollower(9, &FollowerFetchResult{TopicPartition: tp0, HighWatermark: 4, Records: batches}); err != nil {
		t.Fatal(err)
	}
	if hw := p.Log().HighWatermark(); hw != 4 {
		t.Fatalf("follower high watermark %d, want 4", hw)
	}
	return m, p
}

// logRangeSource answers LogRange with a fixed range (startAtLeaderEnd).
type logRangeSource struct {
	scriptedSource
	start, end int64
}

func (s *logRangeSource) LogRange(context.Context, LeaderEndpoint, kafka.TopicPartition) (int64, int64, error) {
	return s.start, s.end, nil
}

// TestReplicaFollowerChangesReachFetchSessions: every change of a
// follower's high watermark or log start offset outside a consumer's own
// reads reaches the fetch sessions holding the partition, so a consumer's
// changed-only incremental fetch answers the partition with the new values
// (Kafka's incremental FetchContext answers a partition whose high
// watermark or log start offset changed), and only once.
func TestReplicaFollowerChangesReachFetchSessions(t *testing.T) {
	t.Run("truncation by leader epoch lowers the high watermark", func(t *testing.T) {
		m, p := newFollowerWithData(t)
		s := newFollowerSession(t, m, 0)
		if err := p.truncateForFollower(9, EpochEndOffset{LeaderEpoch: 5, EndOffset: 2}); err != nil {
			t.Fatal(err)
		}
		s.sees("truncated to offset 2", 2, 0)
	})
	t.Run("follower ahead of the leader's log end truncates", func(t *testing.T) {
		m, p := newFollowerWithData(t)
		s := newFollowerSession(t, m, 0)
		if err := p.realignForFollower(9, 0, 1); err != nil {
			t.Fatal(err)
		}
		s.sees("truncated to the leader's log end 1", 1, 0)
	})
	t.Run("follower behind the leader's log start restarts there", func(t *testing.T) {
		m, p := newFollowerWithData(t)
		s := newFollowerSession(t, m, 0)
		if err := p.realignForFollower(9, 10, 12); err != nil {
			t.Fatal(err)
		}
		s.seesOutOfRange("restarted at the leader's log start 10", 10, 10, 10)
	})
	t.Run("new replica starts at the leader's log end", func(t *testing.T) {
		m, _ := newTestManager(t, 1, 1)
		res, err := m.BecomeLeaderOrFollower(context.Background(), LeaderAndIsr{ControllerEpoch: 1,
			Partitions: []PartitionState{{TopicPartition: tp0, Leader: 2, LeaderEpoch: 9, ISR: []int32{2}, Replicas: []int32{2, 1}}}})
		if err != nil || res[tp0] != nil {
			t.Fatal(err, res)
		}
		s := newFollowerSession(t, m, 0)
		m.fetchers.cfg.Source = &logRangeSource{start: 0, end: 7}
		f := newFetcher(m.fetchers, 2, 0)
		if err := f.startAtLeaderEnd(LeaderEndpoint{ID: 2}, m.Partition(tp0), 9); err != nil {
			t.Fatal(err)
		}
		s.seesOutOfRange("restarted at the leader's log end 7", 7, 7, 7)
	})
	t.Run("the leader's high watermark and log start are followed", func(t *testing.T) {
		m, p := newFollowerWithData(t)
		s := newFollowerSession(t, m, 4)
		if err := p.appendAsFollower(9, &FollowerFetchResult{TopicPartition: tp0, HighWatermark: 4, LogStartOffset: 3}); err != nil {
			t.Fatal(err)
		}
		s.sees("log start followed to 3", 4, 3)
		h := record.NewBuildHeader(4, time.Now().UnixMilli())
		h.PartitionLeaderEpoch = 9
		b, err := record.Build(h, []record.Record{{Value: []byte("v")}}, record.CodecNone)
		if err != nil {
			t.Fatal(err)
		}
		if err := p.appendAsFollower(9, &FollowerFetchResult{TopicPartition: tp0, HighWatermark: 5, LogStartOffset: 3, Records: b}); err != nil {
			t.Fatal(err)
		}
		s.sees("high watermark followed to 5", 5, 3)
	})
}
