package replica

import (
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"sync"
	"testing"
	"time"

	"samsa/broker/record"
	"samsa/broker/storage"
	"samsa/kafka"
)

// deltaSource is a FetchSource that checks FollowerFetch's delta: applying
// Changed and Forgotten to the previous request's partitions must give this
// request's. It answers tp0 with one batch at its fetch offset for the
// first `appends` fetches, then nothing, and reports each request's delta
// sizes on rounds.
type deltaSource struct {
	t       *testing.T
	batch   []byte
	appends int
	mu      sync.Mutex
	model   map[kafka.TopicPartition]FollowerFetchPartition
	calls   int
	rounds  chan [2]int // len(Changed), len(Forgotten)
}

func (s *deltaSource) Fetch(ctx context.Context, _ LeaderEndpoint, req FollowerFetch, resp *FollowerFetchResponse) error {
	s.mu.Lock()
	err := s.check(req)
	s.calls++
	n := s.calls
	s.mu.Unlock()
	if err != nil {
		s.t.Error(err)
	}
	select {
	case s.rounds <- [2]int{len(req.Changed), len(req.Forgotten)}:
	case <-ctx.Done():
		return ctx.Err()
	}
	resp.Partitions = resp.Partitions[:0]
	for _, p := range req.Partitions {
		if p.TopicPartition == tp0 && n <= s.appends {
			binary.BigEndian.PutUint64(s.batch, uint64(p.FetchOffset))
			resp.Partitions = append(resp.Partitions, FollowerFetchResult{TopicPartition: tp0,
				HighWatermark: p.FetchOffset, Records: s.batch})
		}
	}
	return nil
}

// check applies req's delta to the model of the previous request and
// compares the result with req.Partitions.
func (s *deltaSource) check(req FollowerFetch) error {
	want := map[kafka.TopicPartition]FollowerFetchPartition{}
	for _, p := range req.Partitions {
		want[p.TopicPartition] = p
	}
	if s.model != nil {
		for _, p := range req.Changed {
			s.model[p.TopicPartition] = p
		}
		for _, tp := range req.Forgotten {
			delete(s.model, tp)
		}
	} else {
		s.model = map[kafka.TopicPartition]FollowerFetchPartition{}
		for tp, p := range want {
			s.model[tp] = p
		}
	}
	if len(s.model) != len(want) {
		return fmt.Errorf("call %d: delta gives %v, request has %v", s.calls, s.model, want)
	}
	for tp, p := range want {
		if s.model[tp] != p {
			return fmt.Errorf("call %d: %v: delta gives %+v, request has %+v", s.calls, tp, s.model[tp], p)
		}
	}
	return nil
}

func (s *deltaSource) EndOffsetsForEpoch(_ context.Context, _ LeaderEndpoint, q map[kafka.TopicPartition]EpochQuery) (map[kafka.TopicPartition]EpochEndOffset, error) {
	out := make(map[kafka.TopicPartition]EpochEndOffset, len(q))
	for tp := range q {
		out[tp] = EpochEndOffset{LeaderEpoch: -1, EndOffset: -1}
	}
	return out, nil
}

func (s *deltaSource) LogRange(context.Context, LeaderEndpoint, kafka.TopicPartition) (int64, int64, error) {
	return 0, 0, errors.New("deltaSource: no LogRange")
}

// TestReplicaFetcherSendsDeltas: the fetcher's requests are kept from round
// to round and changed only where something changed (fetcher_request.go):
// every request's Changed and Forgotten turn the previous request's
// partitions into its own; rounds that append name the appended partition,
// an idle round names nothing, and a partition the broker stops following
// is forgotten.
func TestReplicaFetcherSendsDeltas(t *testing.T) {
	hdr := record.NewBuildHeader(0, time.Now().UnixMilli())
	hdr.PartitionLeaderEpoch = 1
	batch, err := record.Build(hdr, []record.Record{{Value: []byte("v")}}, record.CodecNone)
	if err != nil {
		t.Fatal(err)
	}
	src := &deltaSource{t: t, batch: batch, appends: 3, rounds: make(chan [2]int)}
	logs := &dirLogs{dir: t.TempDir(), logs: map[kafka.TopicPartition]*storage.Log{}}
	m, err := New(Config{BrokerID: 1, Logs: logs, Fetcher: FetcherConfig{Source: src, BackoffMs: 1000,
		MaxWaitMs: 500, MinBytes: 1, MaxBytes: 10 << 20, PartitionMaxBytes: 1 << 20},
		TopicConfig: func(string) (TopicConfig, error) {
			return TopicConfig{Log: storage.DefaultConfig(), MinInsyncReplicas: 1}, nil
		}})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { m.Close(); logs.closeAll() })
	follow := func(leaders map[kafka.TopicPartition]int32, epoch int32) {
		var states []PartitionState
		for tp, l := range leaders {
			states = append(states, PartitionState{TopicPartition: tp, Leader: l, LeaderEpoch: epoch, ISR: []int32{2, 1}, Replicas: []int32{2, 1}})
		}
		if _, err := m.BecomeLeaderOrFollower(context.Background(), LeaderAndIsr{ControllerEpoch: 1, Partitions: states}); err != nil {
			t.Fatal(err)
		}
	}
	follow(map[kafka.TopicPartition]int32{tp0: 2, tp1: 2}, 1)
	next := func() [2]int {
		t.Helper()
		select {
		case r := <-src.rounds:
			return r
		case <-time.After(10 * time.Second):
			t.Fatal("no fetch within 10 s")
			return [2]int{}
		}
	}
	// Rounds until the three appends are done and a round is idle.
	idle := false
	for i := 0; i < 20 && !idle; i++ {
		r := next()
		idle = r == [2]int{} && m.Partition(tp0).Log().LogEndOffset() == 3
	}
	if !idle {
		t.Fatal("no idle round after the appends")
	}
	if r := next(); r != [2]int{} {
		t.Fatalf("second idle round named %v", r)
	}
	// This broker becomes tp1's leader: the fetcher forgets it.
	follow(map[kafka.TopicPartition]int32{tp1: 1}, 2)
	forgot := false
	for i := 0; i < 20 && !forgot; i++ {
		forgot = next()[1] == 1
	}
	if !forgot {
		t.Fatal("tp1 never forgotten")
	}
}
