package replica

import (
	"slices"
	"testing"
	"time"

	"samsa/broker/storage"
	"samsa/kafka"
)

// blockingIsr is a recordingIsr whose UpdateIsr announces itself on
// entered and then waits for release, like a slow ZooKeeper round trip.
type blockingIsr struct {
	*recordingIsr
	entered chan struct{}
	release chan struct{}
}

func (b *blockingIsr) UpdateIsr(tp kafka.TopicPartition, leader, epoch int32, isr []int32, cepoch, expected int32) (int32, error) {
	select {
	case b.entered <- struct{}{}:
	default:
	}
	<-b.release
	return b.recordingIsr.UpdateIsr(tp, leader, epoch, isr, cepoch, expected)
}

func newBlockingIsrManager(t *testing.T, lag time.Duration) (*Manager, *blockingIsr) {
	t.Helper()
	store := &blockingIsr{recordingIsr: &recordingIsr{isr: map[kafka.TopicPartition][]int32{}, version: map[kafka.TopicPartition]int32{}},
		entered: make(chan struct{}, 1), release: make(chan struct{})}
	logs := &dirLogs{dir: t.TempDir(), logs: map[kafka.TopicPartition]*storage.Log{}}
	m, err := New(Config{BrokerID: 1, Logs: logs, Isr: store, ReplicaLagTimeMax: lag,
		TopicConfig: func(string) (TopicConfig, error) {
			return TopicConfig{Log: storage.DefaultConfig(), MinInsyncReplicas: 1}, nil
		}})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { m.Close(); logs.closeAll() })
	return m, store
}

func waitEntered(t *testing.T, store *blockingIsr) {
	t.Helper()
	select {
	case <-store.entered:
	case <-time.After(30 * time.Second):
		t.Fatal("the ISR shrink never wrote to the store")
	}
}

// TestReplicaIsrShrinkWriteDoesNotBlockAppends: while the ZooKeeper write
// of an ISR shrink is in flight, appends to the partition still complete
// and the partition keeps the old ISR; the new ISR applies once the write
// returns.
func TestReplicaIsrShrinkWriteDoesNotBlockAppends(t *testing.T) {
	m, store := newBlockingIsrManager(t, 100*time.Millisecond)
	lead(t, m, 1, 0, []int32{1, 2}, []int32{1, 2})
	if _, err := m.AppendAsLeader(tp0, batch(t, "a"), 1); err != nil {
		t.Fatal(err)
	}
	waitEntered(t, store) // follower 2 never fetches: the shrink starts
	done := make(chan error, 1)
	go func() {
		_, err := m.AppendAsLeader(tp0, batch(t, "b"), 1)
		done <- err
	}()
	select {
	case err := <-done:
		if err != nil {
			t.Fatal(err)
		}
	case <-time.After(30 * time.Second):
		close(store.release)
		t.Fatal("an append waited for the ISR write")
	}
	p := m.Partition(tp0)
	if got := p.State().ISR; !slices.Equal(got, []int32{1, 2}) {
		t.Fatalf("ISR during the write %v, want the old [1 2]", got)
	}
	close(store.release)
	brokertestWait(t, func() bool { return slices.Equal(p.State().ISR, []int32{1}) })
	if got := store.get(tp0); !slices.Equal(got, []int32{1}) {
		t.Fatalf("ISR written %v, want [1]", got)
	}
}

// TestReplicaIsrShrinkSupersededByLeaderAndIsr: a LeaderAndIsr applied
// while a shrink's write is in flight wins; the shrink's result is
// dropped.
func TestReplicaIsrShrinkSupersededByLeaderAndIsr(t *testing.T) {
	m, store := newBlockingIsrManager(t, time.Second)
	lead(t, m, 1, 0, []int32{1, 2, 3}, []int32{1, 2, 3})
	waitEntered(t, store)                             // neither 2 nor 3 fetched: a shrink to [1] is in flight
	lead(t, m, 1, 1, []int32{1, 3}, []int32{1, 2, 3}) // the controller moved on: epoch 1
	// 3 fetches at the log end, so it stays in sync in epoch 1.
	if _, err := m.Read(tp0, ReadParams{ReplicaID: 3, FetchOffset: 0, MaxBytes: 100, CurrentLeaderEpoch: 1}); err != nil {
		t.Fatal(err)
	}
	p := m.Partition(tp0)
	close(store.release)
	brokertestWait(t, func() bool { return len(store.get(tp0)) > 0 }) // the stale write returned
	brokertestWait(t, func() bool {
		p.mu.RLock()
		defer p.mu.RUnlock()
		return !p.mu.isrShrinking
	})
	if st := p.State(); st.LeaderEpoch != 1 || !slices.Equal(st.ISR, []int32{1, 3}) {
		t.Fatalf("state after the superseded shrink: epoch %d, ISR %v, want epoch 1's [1 3]", st.LeaderEpoch, st.ISR)
	}
}

// TestReplicaIsrExpansionDeferredByShrink: a follower that qualifies for
// the ISR while a shrink's write is in flight rejoins once the shrink
// ends, without fetching again. Before, the expansion waited for the
// follower's next fetch to read the partition, which a changed-only fetch
// session never does for an idle partition: the follower stayed out of
// the ISR until the next append or the 5 s sweep.
func TestReplicaIsrExpansionDeferredByShrink(t *testing.T) {
	m, store := newBlockingIsrManager(t, 100*time.Millisecond)
	lead(t, m, 1, 0, []int32{1, 2}, []int32{1, 2, 3})
	if _, err := m.AppendAsLeader(tp0, batch(t, "a"), 1); err != nil {
		t.Fatal(err)
	}
	waitEntered(t, store) // follower 2 never fetches: its shrink is in flight
	// Follower 3, out of the ISR, fetches at the log end: it qualifies,
	// and its expansion finds the shrink in flight.
	if _, err := m.Read(tp0, ReadParams{ReplicaID: 3, FetchOffset: 1, MaxBytes: 100, CurrentLeaderEpoch: 0}); err != nil {
		t.Fatal(err)
	}
	p := m.Partition(tp0)
	brokertestWait(t, func() bool { // the expansion worker has tried it
		m.expander.mu.Lock()
		defer m.expander.mu.Unlock()
		return len(m.expander.mu.pending) == 0
	})
	if got := p.State().ISR; !slices.Equal(got, []int32{1, 2}) {
		t.Fatalf("ISR during the shrink's write %v, want the old [1 2]", got)
	}
	close(store.release)
	brokertestWait(t, func() bool { return slices.Equal(p.State().ISR, []int32{1, 3}) })
	if got := store.get(tp0); !slices.Equal(got, []int32{1, 3}) {
		t.Fatalf("ISR written %v, want [1 3]", got)
	}
}
