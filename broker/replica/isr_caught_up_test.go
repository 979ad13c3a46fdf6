package replica

import (
	"slices"
	"testing"
	"time"

	"samsa/broker/storage"
	"samsa/kafka"
)

// TestReplicaIsrIdleFollowerStaysCaughtUp: replica.lag.time.max.ms 2 s on
// a manual clock. Follower 2 reads the idle partition once at its log end,
// then keeps sending session fetches that do not read it (a changed-only
// fetch session skips an unchanged partition) for 3 s. An append then
// leaves it behind the log end, and the ISR check that runs before it
// fetches the append must not drop it: it was caught up as of its last
// fetch, as Kafka's lastCaughtUpTimeMs says. Before, its caught-up time
// was that of its last read, 3 s old, and it was shrunk. A follower that
// stops fetching is still dropped once its last fetch is 2 s old.
func TestReplicaIsrIdleFollowerStaysCaughtUp(t *testing.T) {
	clock := newFakeClock()
	m, store := newIsrManager(t, 2*time.Second, clock)
	lead(t, m, 1, 0, []int32{1, 2}, []int32{1, 2})
	if _, err := m.Read(tp0, ReadParams{ReplicaID: 2, FetchOffset: 0, MaxBytes: 100, CurrentLeaderEpoch: 0}); err != nil {
		t.Fatal(err)
	}
	for range 6 { // 3 s of idle session fetches, none reading the partition
		clock.Advance(500 * time.Millisecond)
		m.FollowerFetched(2)
	}
	if _, err := m.AppendAsLeader(tp0, batch(t, "a"), 1); err != nil {
		t.Fatal(err)
	}
	p := m.Partition(tp0)
	p.maybeShrinkIsr() // the ISR loop's check, before follower 2 fetches the append
	if got := p.State().ISR; !slices.Equal(got, []int32{1, 2}) {
		t.Fatalf("ISR %v after an append to an idle partition, want [1 2]: follower 2 fetched 0 s ago", got)
	}
	if got := store.get(tp0); got != nil {
		t.Fatalf("ISR written %v", got)
	}
	// Follower 2 stops fetching: 2.5 s later it is out.
	clock.Advance(2500 * time.Millisecond)
	brokertestWait(t, func() bool { // the check, as the ISR loop runs it (maybe concurrently)
		p.maybeShrinkIsr()
		return slices.Equal(p.State().ISR, []int32{1})
	})
}

// BenchmarkReplicaCaughtUpUntil: the per-append cost of the caught-up
// refresh (two followers, both at the old log end), what every leader
// append now adds to its high-watermark check.
func BenchmarkReplicaCaughtUpUntil(b *testing.B) {
	logs := &dirLogs{dir: b.TempDir(), logs: map[kafka.TopicPartition]*storage.Log{}}
	m, err := New(Config{BrokerID: 1, Logs: logs, TopicConfig: func(string) (TopicConfig, error) {
		return TopicConfig{Log: storage.DefaultConfig(), MinInsyncReplicas: 1}, nil
	}})
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { m.Close(); logs.closeAll() })
	p := newPartition(m, tp0)
	p.mu.followers = map[int32]*followerState{2: {leo: 0}, 3: {leo: 0}}
	m.FollowerFetched(2)
	m.FollowerFetched(3)
	b.ReportAllocs()
	for i := 0; b.Loop(); i++ {
		p.progress.Lock()
		p.caughtUpUntilLocked(int64(i + 1))
		for _, fs := range p.mu.followers {
			fs.leo = int64(i + 1) // caught up again for the next round
		}
		p.progress.Unlock()
	}
}
