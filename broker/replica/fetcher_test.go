package replica

import (
	"context"
	"errors"
	"slices"
	"testing"
	"time"

	"samsa/broker/storage"
	"samsa/kafka"
)

var tp1 = kafka.TopicPartition{Topic: "t", Partition: 1}

// scriptedSource is a FetchSource driven by the test: each Fetch hands
// the partitions asked for to reqs and answers with the errors the test
// sends to answers (no records; nil error = an empty answer). The leader
// knows no epochs, so truncation keeps the (empty) logs.
type scriptedSource struct {
	reqs    chan []kafka.TopicPartition
	answers chan map[kafka.TopicPartition]error
}

func newScriptedSource() *scriptedSource {
	return &scriptedSource{reqs: make(chan []kafka.TopicPartition), answers: make(chan map[kafka.TopicPartition]error)}
}

func (s *scriptedSource) Fetch(ctx context.Context, _ LeaderEndpoint, req FollowerFetch, resp *FollowerFetchResponse) error {
	var tps []kafka.TopicPartition
	for _, p := range req.Partitions {
		tps = append(tps, p.TopicPartition)
	}
	slices.SortFunc(tps, func(a, b kafka.TopicPartition) int { return int(a.Partition - b.Partition) })
	select {
	case s.reqs <- tps:
	case <-ctx.Done():
		return ctx.Err()
	}
	var errs map[kafka.TopicPartition]error
	select {
	case errs = <-s.answers:
	case <-ctx.Done():
		return ctx.Err()
	}
	resp.Partitions = resp.Partitions[:0]
	for _, tp := range tps {
		resp.Partitions = append(resp.Partitions, FollowerFetchResult{TopicPartition: tp, Err: errs[tp]})
	}
	return nil
}

func (s *scriptedSource) EndOffsetsForEpoch(_ context.Context, _ LeaderEndpoint, q map[kafka.TopicPartition]EpochQuery) (map[kafka.TopicPartition]EpochEndOffset, error) {
	out := make(map[kafka.TopicPartition]EpochEndOffset, len(q))
	for tp := range q {
		out[tp] = EpochEndOffset{LeaderEpoch: -1, EndOffset: -1}
	}
	return out, nil
}

func (s *scriptedSource) LogRange(context.Context, LeaderEndpoint, kafka.TopicPartition) (int64, int64, error) {
	return 0, 0, errors.New("scriptedSource: no LogRange")
}

// next returns the partitions of the next fetch, failing after 10 s.
func (s *scriptedSource) next(t *testing.T) []kafka.TopicPartition {
	t.Helper()
	select {
	case tps := <-s.reqs:
		return tps
	case <-time.After(10 * time.Second):
		t.Fatal("no fetch within 10 s")
		return nil
	}
}

// TestReplicaFetcherDelaysOnlyTheFailedPartition: an error of one
// partition keeps that partition out of the fetches for
// replica.fetch.backoff.ms of clock time while the leader's other
// partitions keep fetching with no pause (Kafka's
// AbstractFetcherThread.delayPartitions); when every partition is delayed
// the fetcher waits for the first delay to end.
func TestReplicaFetcherDelaysOnlyTheFailedPartition(t *testing.T) {
	clock := newFakeClock()
	src := newScriptedSource()
	logs := &dirLogs{dir: t.TempDir(), logs: map[kafka.TopicPartition]*storage.Log{}}
	m, err := New(Config{BrokerID: 1, Logs: logs, Now: clock.Now, After: clock.After,
		Fetcher: FetcherConfig{Source: src, BackoffMs: 1000},
		TopicConfig: func(string) (TopicConfig, error) {
			return TopicConfig{Log: storage.DefaultConfig(), MinInsyncReplicas: 1}, nil
		}})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { m.Close(); logs.closeAll() })
	var states []PartitionState
	for _, tp := range []kafka.TopicPartition{tp0, tp1} {
		states = append(states, PartitionState{TopicPartition: tp, Leader: 2, LeaderEpoch: 1, ISR: []int32{2, 1}, Replicas: []int32{2, 1}})
	}
	if _, err := m.BecomeLeaderOrFollower(context.Background(), LeaderAndIsr{ControllerEpoch: 1, Partitions: states}); err != nil {
		t.Fatal(err)
	}
	both, only1 := []kafka.TopicPartition{tp0, tp1}, []kafka.TopicPartition{tp1}
	expect := func(want []kafka.TopicPartition) {
		t.Helper()
		if got := src.next(t); !slices.Equal(got, want) {
			t.Fatalf("fetch of %v, want %v", got, want)
		}
	}
	// Both partitions might be asked for in the first fetch only after
	// both were added; skip a first fetch with one.
	first := src.next(t)
	if !slices.Equal(first, both) {
		src.answers <- nil
		expect(both)
	}
	src.answers <- map[kafka.TopicPartition]error{tp0: ErrNotLeader}
	armed := clock.armedCount()
	expect(only1)
	src.answers <- nil
	expect(only1)
	clock.Advance(999 * time.Millisecond)
	src.answers <- nil
	expect(only1)
	clock.Advance(time.Millisecond)
	src.answers <- nil
	expect(both)
	if n := clock.armedCount(); n != armed {
		t.Fatalf("the fetcher waited on the clock %d times while a partition could fetch", n-armed)
	}

	// Every partition delayed: no fetch until the clock reaches the end of
	// the delay.
	src.answers <- map[kafka.TopicPartition]error{tp0: ErrNotLeader, tp1: ErrNotLeader}
	// (A wake-up left by the partitions being added may cost one extra wait.)
	brokertestWait(t, func() bool { return clock.armedCount() > armed })
	select {
	case tps := <-src.reqs:
		t.Fatalf("fetch of %v while every partition is delayed", tps)
	default:
	}
	clock.Advance(time.Second)
	expect(both)
	src.answers <- nil
	expect(both)
}

// TestReplicaFetcherIDMatchesKafka: partitions spread over
// num.replica.fetchers as Kafka's getFetcherId (Java String.hashCode).
func TestReplicaFetcherIDMatchesKafka(t *testing.T) {
	// "topic".hashCode() = 110546223; 31*110546223+3 = 3426932916 as an
	// int overflows to -868034380, & 0x7fffffff = 1279449268, % 4 = 0.
	cases := []struct {
		tp   kafka.TopicPartition
		n    int
		want int
	}{
		{kafka.TopicPartition{Topic: "topic", Partition: 3}, 4, 0},
		{kafka.TopicPartition{Topic: "topic", Partition: 4}, 4, 1},
		{kafka.TopicPartition{Topic: "a", Partition: 0}, 3, (31 * 97) % 3},
		{kafka.TopicPartition{Topic: "anything", Partition: 7}, 1, 0},
	}
	for _, c := range cases {
		if got := fetcherID(c.tp, c.n); got != c.want {
			t.Errorf("fetcherID(%v, %d) = %d, want %d", c.tp, c.n, got, c.want)
		}
	}
}
