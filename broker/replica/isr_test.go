package replica

import (
	"context"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/sirupsen/logrus"
	logtest "github.com/sirupsen/logrus/hooks/test"

	"samsa/broker/storage"
	"samsa/kafka"
)

// recordingIsr is an IsrStore that keeps the last written ISR per
// partition and checks the zkVersion like ZooKeeper would.
type recordingIsr struct {
	mu      sync.Mutex
	isr     map[kafka.TopicPartition][]int32
	version map[kafka.TopicPartition]int32
	notes   [][]kafka.TopicPartition
}

func (r *recordingIsr) UpdateIsr(tp kafka.TopicPartition, _, _ int32, isr []int32, _, expected int32) (int32, error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.isr[tp] = slices.Clone(isr)
	r.version[tp] = expected + 1
	return expected + 1, nil
}

func (r *recordingIsr) NotifyIsrChanges(tps []kafka.TopicPartition) error {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.notes = append(r.notes, tps)
	return nil
}

func (r *recordingIsr) get(tp kafka.TopicPartition) []int32 {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.isr[tp]
}

// newIsrManager returns broker 1's manager with a recording IsrStore and
// replica.lag.time.max.ms lag, on clock (nil: the real one).
func newIsrManager(t *testing.T, lag time.Duration, clock *fakeClock) (*Manager, *recordingIsr) {
	t.Helper()
	store := &recordingIsr{isr: map[kafka.TopicPartition][]int32{}, version: map[kafka.TopicPartition]int32{}}
	logs := &dirLogs{dir: t.TempDir(), logs: map[kafka.TopicPartition]*storage.Log{}}
	cfg := Config{BrokerID: 1, Logs: logs, Isr: store, ReplicaLagTimeMax: lag,
		TopicConfig: func(string) (TopicConfig, error) {
			return TopicConfig{Log: storage.DefaultConfig(), MinInsyncReplicas: 1}, nil
		}}
	if clock != nil {
		cfg.Now, cfg.After = clock.Now, clock.After
	}
	m, err := New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { m.Close(); logs.closeAll() })
	return m, store
}

// TestReplicaIsrShrinkAndExpand: Kafka's rules — a follower that has not
// caught up for replica.lag.time.max.ms leaves the ISR (and the HW then
// advances without it); it rejoins once it fetches up to the HW.
func TestReplicaIsrShrinkAndExpand(t *testing.T) {
	m, store := newIsrManager(t, 100*time.Millisecond, nil)
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
	// The expansion is written off the fetch path (isr_expand.go).
	brokertestWait(t, func() bool { return slices.Equal(store.get(tp0), []int32{1, 2}) })
	if isr := m.Partition(tp0).State().ISR; !slices.Equal(isr, []int32{1, 2}) {
		t.Fatalf("partition ISR %v", isr)
	}
	brokertestWait(t, func() bool {
		store.mu.Lock()
		defer store.mu.Unlock()
		return len(store.notes) > 0
	})
}

// countingIsrListener counts the ISR changes it is told of.
type countingIsrListener struct{ shrinks, expands atomic.Int64 }

func (c *countingIsrListener) IsrShrunk(kafka.TopicPartition)   { c.shrinks.Add(1) }
func (c *countingIsrListener) IsrExpanded(kafka.TopicPartition) { c.expands.Add(1) }

// TestReplicaIsrChangeReported: a shrink and an expansion reach the
// IsrListener and are logged with Kafka's wording, naming the replicas
// that left or joined with their end offsets and the reason; the
// UnderMinIsrCount sees the shrunk ISR.
func TestReplicaIsrChangeReported(t *testing.T) {
	store := &recordingIsr{isr: map[kafka.TopicPartition][]int32{}, version: map[kafka.TopicPartition]int32{}}
	logs := &dirLogs{dir: t.TempDir(), logs: map[kafka.TopicPartition]*storage.Log{}}
	logger, hook := logtest.NewNullLogger()
	m, err := New(Config{BrokerID: 1, Logs: logs, Isr: store, ReplicaLagTimeMax: 100 * time.Millisecond,
		Logger: logger,
		TopicConfig: func(string) (TopicConfig, error) {
			return TopicConfig{Log: storage.DefaultConfig(), MinInsyncReplicas: 2}, nil
		}})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { m.Close(); logs.closeAll() })
	counts := &countingIsrListener{}
	m.SetIsrListener(counts)
	lead(t, m, 1, 0, []int32{1, 2}, []int32{1, 2})
	if _, err := m.AppendAsLeader(tp0, batch(t, "a"), 1); err != nil {
		t.Fatal(err)
	}
	brokertestWait(t, func() bool { return counts.shrinks.Load() == 1 })
	if n := m.UnderMinIsrCount(); n != 1 {
		t.Fatalf("UnderMinIsrCount %d after the shrink, want 1", n)
	}
	if _, err := m.Read(tp0, ReadParams{ReplicaID: 2, FetchOffset: 1, MaxBytes: 100, CurrentLeaderEpoch: 0}); err != nil {
		t.Fatal(err)
	}
	// The expansion is written off the fetch path (isr_expand.go).
	brokertestWait(t, func() bool { return counts.expands.Load() == 1 })
	if n := m.UnderMinIsrCount(); n != 0 {
		t.Fatalf("UnderMinIsrCount %d after the expansion, want 0", n)
	}
	var shrink, expand *logrus.Entry
	for _, e := range hook.AllEntries() {
		switch {
		case strings.HasPrefix(e.Message, "Shrinking ISR"):
			shrink = e
		case strings.HasPrefix(e.Message, "Expanding ISR"):
			expand = e
		}
	}
	if shrink == nil || expand == nil {
		t.Fatalf("no shrink or expand line in %d entries", len(hook.AllEntries()))
	}
	// The leader is shown as it was when the ISR changed (the HW moves
	// right after the shrink).
	wantShrink := "Shrinking ISR from 1,2 to 1. Leader: (highWatermark: 0, endOffset: 1). " +
		"Out of sync replicas: (brokerId: 2, endOffset: -1, lastCaughtUp: "
	if !strings.HasPrefix(shrink.Message, wantShrink) {
		t.Fatalf("shrink line %q, want prefix %q", shrink.Message, wantShrink)
	}
	if r, _ := shrink.Data["reason"].(string); !strings.Contains(r, "replica.lag.time.max.ms") {
		t.Fatalf("shrink reason %q", r)
	}
	if got := shrink.Data["out_of_sync_replicas"]; !slices.Equal(got.([]int32), []int32{2}) {
		t.Fatalf("out_of_sync_replicas %v", got)
	}
	wantExpand := "Expanding ISR from 1 to 1,2. Leader: (highWatermark: 1, endOffset: 1). " +
		"Caught-up replicas: (brokerId: 2, endOffset: 1, lastCaughtUp: "
	if !strings.HasPrefix(expand.Message, wantExpand) || !strings.HasSuffix(expand.Message, " ago).") {
		t.Fatalf("expand line %q, want prefix %q", expand.Message, wantExpand)
	}
}
