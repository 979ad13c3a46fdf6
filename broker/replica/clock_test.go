package replica

import (
	"context"
	"errors"
	"slices"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"samsa/broker/storage"
	"samsa/kafka"
)

// fakeClock is a manual clock for Config.Now and Config.After: time moves
// only in Advance, which fires the After channels that have come due.
type fakeClock struct {
	mu      sync.Mutex
	now     time.Time
	waiters []fakeWaiter
	armed   int // After calls so far
}

type fakeWaiter struct {
	at time.Time
	ch chan time.Time
}

func newFakeClock() *fakeClock { return &fakeClock{now: time.Unix(1_700_000_000, 0)} }

func (c *fakeClock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.now
}

func (c *fakeClock) After(d time.Duration) <-chan time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.armed++
	ch := make(chan time.Time, 1)
	if d <= 0 {
		ch <- c.now
		return ch
	}
	c.waiters = append(c.waiters, fakeWaiter{at: c.now.Add(d), ch: ch})
	return ch
}

// Advance moves the clock by d and fires every After that came due.
func (c *fakeClock) Advance(d time.Duration) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.now = c.now.Add(d)
	keep := c.waiters[:0]
	for _, w := range c.waiters {
		if w.at.After(c.now) {
			keep = append(keep, w)
			continue
		}
		w.ch <- c.now
	}
	c.waiters = keep
}

// armedCount returns how many After channels were asked for so far.
func (c *fakeClock) armedCount() int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.armed
}

// TestReplicaIsrLoopUsesInjectedClock: with replica.lag.time.max.ms = 30 s
// on a manual clock, a follower that never fetches stays in the ISR at
// 15 s of clock time and is dropped once the clock passes 30 s; the ISR
// change notification follows on the clock's next propagation tick. No
// real time needs to pass (S6.11).
func TestReplicaIsrLoopUsesInjectedClock(t *testing.T) {
	clock := newFakeClock()
	m, store := newIsrManager(t, 30*time.Second, clock)
	lead(t, m, 1, 0, []int32{1, 2}, []int32{1, 2})
	if _, err := m.AppendAsLeader(tp0, batch(t, "a"), 1); err != nil {
		t.Fatal(err)
	}
	// The loop has armed its shrink (15 s) and propagation (2.5 s) timers.
	brokertestWait(t, func() bool { return clock.armedCount() == 2 })

	// 15 s: both fire and are re-armed after their work; 15 s < 30 s of lag.
	clock.Advance(15 * time.Second)
	brokertestWait(t, func() bool { return clock.armedCount() == 4 })
	if isr := m.Partition(tp0).State().ISR; !slices.Equal(isr, []int32{1, 2}) {
		t.Fatalf("ISR %v after 15 s of clock time, want [1 2]", isr)
	}
	if got := store.get(tp0); got != nil {
		t.Fatalf("ISR written %v after 15 s of clock time", got)
	}

	// 31 s: the follower has not caught up for longer than 30 s.
	clock.Advance(16 * time.Second)
	brokertestWait(t, func() bool { return slices.Equal(store.get(tp0), []int32{1}) })
	brokertestWait(t, func() bool { return clock.armedCount() == 6 })

	// The notification goes out on the next propagation tick of the clock.
	clock.Advance(3 * time.Second)
	brokertestWait(t, func() bool {
		store.mu.Lock()
		defer store.mu.Unlock()
		return len(store.notes) == 1 && slices.Equal(store.notes[0], []kafka.TopicPartition{tp0})
	})
}

// failingSource is a FetchSource whose every call fails, counting them.
type failingSource struct{ calls atomic.Int64 }

var errLeaderDown = errors.New("leader down")

func (s *failingSource) Fetch(context.Context, LeaderEndpoint, FollowerFetch, *FollowerFetchResponse) error {
	s.calls.Add(1)
	return errLeaderDown
}

func (s *failingSource) EndOffsetsForEpoch(context.Context, LeaderEndpoint, map[kafka.TopicPartition]EpochQuery) (map[kafka.TopicPartition]EpochEndOffset, error) {
	s.calls.Add(1)
	return nil, errLeaderDown
}

func (s *failingSource) LogRange(context.Context, LeaderEndpoint, kafka.TopicPartition) (int64, int64, error) {
	s.calls.Add(1)
	return 0, 0, errLeaderDown
}

// TestReplicaFetcherBackoffUsesInjectedClock: after a failed fetch the
// follower waits replica.fetch.backoff.ms (here 60 s) of clock time, and
// retries exactly when the clock has moved that far.
func TestReplicaFetcherBackoffUsesInjectedClock(t *testing.T) {
	clock := newFakeClock()
	src := &failingSource{}
	logs := &dirLogs{dir: t.TempDir(), logs: map[kafka.TopicPartition]*storage.Log{}}
	m, err := New(Config{BrokerID: 1, Logs: logs, Now: clock.Now, After: clock.After,
		Fetcher: FetcherConfig{Source: src, BackoffMs: 60_000},
		TopicConfig: func(string) (TopicConfig, error) {
			return TopicConfig{Log: storage.DefaultConfig(), MinInsyncReplicas: 1}, nil
		}})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { m.Close(); logs.closeAll() })
	res, err := m.BecomeLeaderOrFollower(context.Background(), LeaderAndIsr{ControllerEpoch: 1,
		Partitions: []PartitionState{{TopicPartition: tp0, Leader: 2, LeaderEpoch: 1, ISR: []int32{2, 1}, Replicas: []int32{2, 1}}}})
	if err != nil || res[tp0] != nil {
		t.Fatal(err, res)
	}
	// First attempt fails; the fetcher parks on a 60 s clock backoff.
	brokertestWait(t, func() bool { return src.calls.Load() == 1 && clock.armedCount() == 1 })
	clock.Advance(59 * time.Second)
	if n := src.calls.Load(); n != 1 {
		t.Fatalf("%d attempts before the backoff ended, want 1", n)
	}
	clock.Advance(time.Second)
	brokertestWait(t, func() bool { return src.calls.Load() == 2 && clock.armedCount() == 2 })
}
