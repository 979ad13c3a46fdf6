package replica

import (
	"context"
	"slices"
	"sync"
	"testing"
	"time"

	"samsa/broker/storage"
)

// recordingIsr is an IsrStore that keeps the last written ISR per
// partition and checks the zkVersion like ZooKeeper would.
type recordingIsr struct {
	mu      sync.Mutex
	isr     map[TopicPartition][]int32
	version map[TopicPartition]int32
	notes   [][]TopicPartition
}

func (r *recordingIsr) UpdateIsr(tp TopicPartition, _, _ int32, isr []int32, _, expected int32) (int32, error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.isr[tp] = slices.Clone(isr)
	r.version[tp] = expected + 1
	return expected + 1, nil
}

func (r *recordingIsr) NotifyIsrChanges(tps []TopicPartition) error {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.notes = append(r.notes, tps)
	return nil
}

func (r *recordingIsr) get(tp TopicPartition) []int32 {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.isr[tp]
}

// TestReplicaIsrShrinkAndExpand: Kafka's rules — a follower that has not
// caught up for replica.lag.time.max.ms leaves the ISR (and the HW then
// advances without it); it rejoins once it fetches up to the HW.
func TestReplicaIsrShrinkAndExpand(t *testing.T) {
	store := &recordingIsr{isr: map[TopicPartition][]int32{}, version: map[TopicPartition]int32{}}
	logs := &dirLogs{dir: t.TempDir(), logs: map[TopicPartition]*storage.Log{}}
	m, err := New(Config{BrokerID: 1, Logs: logs, Isr: store, ReplicaLagTimeMax: 100 * time.Millisecond,
		TopicConfig: func(string) (TopicConfig, error) {
			return TopicConfig{Log: storage.DefaultConfig(), MinInsyncReplicas: 1}, nil
		}})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { m.Close(); logs.closeAll() })
	lead(t, m, 1, 0, []int32{1, 2}, []int32{1, 2})
	res, err := m.AppendAsLeader(tp0, batch(t, "a"), -1)
	if err != nil {
		t.Fatal(err)
	}
	// Follower 2 never fetches: it is dropped and the acks=all wait ends.
	if err := m.WaitReplicated(context.Background(), tp0, res.LastOffset+1, time.Now().Add(10*time.Second)); err != nil {
		t.Fatalf("acks=all after shrink: %v", err)
	}
	if got := store.get(tp0); !slices.Equal(got, []int32{1}) {
		t.Fatalf("ISR written %v, want [1]", got)
	}
	// It fetches up to the HW and rejoins.
	if _, err := m.Read(tp0, ReadParams{ReplicaID: 2, FetchOffset: 1, MaxBytes: 100, CurrentLeaderEpoch: 0}); err != nil {
		t.Fatal(err)
	}
	if got := store.get(tp0); !slices.Equal(got, []int32{1, 2}) {
		t.Fatalf("ISR written %v, want [1 2]", got)
	}
	if isr := m.Partition(tp0).State().ISR; !slices.Equal(isr, []int32{1, 2}) {
		t.Fatalf("partition ISR %v", isr)
	}
	brokertestWait(t, func() bool {
		store.mu.Lock()
		defer store.mu.Unlock()
		return len(store.notes) > 0
	})
}
