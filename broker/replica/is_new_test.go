package replica

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"testing"

	"samsa/broker/storage"
	"samsa/kafka"
)

// isNewLogs is a LogProvider over real storage logs (dirLogs) that records
// the isNew it is given and, for the partitions in refuse, refuses to
// create a missing log when isNew is false, with a storage error (what the
// broker's provider does while a log dir is offline).
type isNewLogs struct {
	*dirLogs
	refuse map[kafka.TopicPartition]bool

	mu  sync.Mutex
	got map[kafka.TopicPartition][]bool
}

func (p *isNewLogs) GetOrCreateLog(tp kafka.TopicPartition, cfg storage.Config, isNew bool) (*storage.Log, error) {
	p.mu.Lock()
	p.got[tp] = append(p.got[tp], isNew)
	p.mu.Unlock()
	p.dirLogs.mu.Lock()
	_, exists := p.dirLogs.logs[tp]
	p.dirLogs.mu.Unlock()
	if !exists && !isNew && p.refuse[tp] {
		return nil, fmt.Errorf("test: cannot create log for %s: a log dir is offline: %w", tp, storage.ErrStorage)
	}
	return p.dirLogs.GetOrCreateLog(tp, cfg, isNew)
}

func (p *isNewLogs) calls(tp kafka.TopicPartition) []bool {
	p.mu.Lock()
	defer p.mu.Unlock()
	return append([]bool(nil), p.got[tp]...)
}

// TestReplicaLeaderAndIsrIsNewReachesLogProvider: LeaderAndIsr's IsNew
// reaches the LogProvider with each partition; a provider refusing to
// create a log for a replica that is not new answers a storage error,
// which takes that partition (only that one) offline, and a later
// LeaderAndIsr with IsNew leaves it offline (it is never created again
// on this broker), while a new replica and an existing log are served.
func TestReplicaLeaderAndIsrIsNewReachesLogProvider(t *testing.T) {
	lost, fresh, kept := kafka.TopicPartition{Topic: "lost", Partition: 0}, kafka.TopicPartition{Topic: "fresh", Partition: 0}, kafka.TopicPartition{Topic: "kept", Partition: 0}
	base := &dirLogs{dir: t.TempDir(), logs: map[kafka.TopicPartition]*storage.Log{}}
	t.Cleanup(base.closeAll)
	logs := &isNewLogs{dirLogs: base, refuse: map[kafka.TopicPartition]bool{lost: true, fresh: true, kept: true},
		got: map[kafka.TopicPartition][]bool{}}
	// kept's log exists already (loaded at start, say).
	if _, err := base.GetOrCreateLog(kept, storage.DefaultConfig(), true); err != nil {
		t.Fatal(err)
	}
	m, err := New(Config{BrokerID: 1, Logs: logs, TopicConfig: func(string) (TopicConfig, error) {
		return TopicConfig{Log: storage.DefaultConfig(), MinInsyncReplicas: 1}, nil
	}})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(m.Close)
	one := []int32{1}
	newState := state(fresh, 1, 0, one, one)
	newState.IsNew = true
	res, err := m.BecomeLeaderOrFollower(context.Background(), LeaderAndIsr{ControllerEpoch: 1, Partitions: []PartitionState{
		state(lost, 1, 0, one, one), newState, state(kept, 1, 0, one, one)}})
	if err != nil {
		t.Fatal(err)
	}
	if !errors.Is(res[lost], storage.ErrStorage) {
		t.Errorf("lost-0: %v, want a storage error", res[lost])
	}
	if !m.IsOffline(lost) || m.Partition(lost) != nil {
		t.Errorf("lost-0 not offline")
	}
	for _, tp := range []kafka.TopicPartition{fresh, kept} {
		if res[tp] != nil || m.IsOffline(tp) {
			t.Errorf("%s: %v, offline %v", tp, res[tp], m.IsOffline(tp))
		}
		if p := m.Partition(tp); p == nil || p.Log() == nil || !p.State().IsLeader {
			t.Errorf("%s not led here", tp)
		}
	}
	for tp, want := range map[kafka.TopicPartition]bool{lost: false, fresh: true, kept: false} {
		if got := logs.calls(tp); len(got) != 1 || got[0] != want {
			t.Errorf("%s: provider told isNew %v, want [%v]", tp, got, want)
		}
	}
	// Offline stays offline: the provider is not asked again, even with IsNew.
	again := state(lost, 1, 1, one, one)
	again.IsNew = true
	res, err = m.BecomeLeaderOrFollower(context.Background(), LeaderAndIsr{ControllerEpoch: 1, Partitions: []PartitionState{again}})
	if err != nil {
		t.Fatal(err)
	}
	if !errors.Is(res[lost], ErrOffline) || len(logs.calls(lost)) != 1 {
		t.Errorf("lost-0 again: %v, provider calls %v", res[lost], logs.calls(lost))
	}
}
