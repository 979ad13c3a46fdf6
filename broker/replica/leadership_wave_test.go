package replica

import (
	"context"
	"errors"
	"fmt"
	"path/filepath"
	"testing"
	"time"

	"samsa/broker/storage"
	"samsa/kafka"
)

// TestReplicaLeadershipWaveOutcomes: a LeaderAndIsr of many partitions,
// applied in parallel, gives each partition its own outcome: a stale
// epoch among them fails alone, leaders record their new epoch, followers
// follow.
func TestReplicaLeadershipWaveOutcomes(t *testing.T) {
	m, _ := newTestManager(t, 1, 1)
	stale := kafka.TopicPartition{Topic: "w", Partition: 7}
	if res, err := m.BecomeLeaderOrFollower(context.Background(), LeaderAndIsr{ControllerEpoch: 1,
		Partitions: []PartitionState{{TopicPartition: stale, ControllerEpoch: 1, Leader: 1, LeaderEpoch: 9,
			ISR: []int32{1}, Replicas: []int32{1, 2}}}}); err != nil || res[stale] != nil {
		t.Fatalf("setup: %v %v", err, res)
	}
	req := LeaderAndIsr{ControllerEpoch: 1}
	for i := int32(0); i < 200; i++ {
		leader := int32(1)
		if i%2 == 1 {
			leader = 2
		}
		req.Partitions = append(req.Partitions, PartitionState{TopicPartition: kafka.TopicPartition{Topic: "w", Partition: i},
			ControllerEpoch: 1, Leader: leader, LeaderEpoch: 3, ISR: []int32{1, 2}, Replicas: []int32{1, 2}})
	}
	res, err := m.BecomeLeaderOrFollower(context.Background(), req)
	if err != nil {
		t.Fatal(err)
	}
	for i := int32(0); i < 200; i++ {
		tp := kafka.TopicPartition{Topic: "w", Partition: i}
		err := res[tp]
		if tp == stale {
			if !errors.Is(err, ErrStaleLeaderEpoch) {
				t.Fatalf("%s: %v, want a stale epoch", tp, err)
			}
			continue
		}
		if err != nil {
			t.Fatalf("%s: %v", tp, err)
		}
		st := m.Partition(tp).State()
		wantLeader := i%2 == 0
		if st.IsLeader != wantLeader || st.LeaderEpoch != 3 {
			t.Fatalf("%s: state %+v, want leader=%v epoch 3", tp, st, wantLeader)
		}
		if wantLeader {
			if e, _ := m.Partition(tp).Log().EndOffsetForEpoch(3); e != 3 {
				t.Fatalf("%s: epoch cache lacks epoch 3 (%d)", tp, e)
			}
		}
	}
	if len(res) != 200 {
		t.Fatal(fmt.Sprint("results for ", len(res), " partitions"))
	}
}

// TestReplicaApplyWaveOutcomes: applyWave reports each item's own outcome
// (leader or follower, or its error) in the caller's slice, with and
// without items failing at the log-opening stage.
func TestReplicaApplyWaveOutcomes(t *testing.T) {
	m, _ := newTestManager(t, 1, 1)
	tc := func(string) (TopicConfig, error) { return m.cfg.TopicConfig("") }
	for _, withStale := range []bool{false, true} {
		var items []waveItem
		for i := int32(0); i < 50; i++ {
			tp := kafka.TopicPartition{Topic: fmt.Sprintf("o%v", withStale), Partition: i}
			p, err := m.getOrCreatePartition(tp)
			if err != nil {
				t.Fatal(err)
			}
			leader := int32(1 + i%2)
			epoch := int32(1)
			if withStale && i == 7 {
				p.mu.Lock()
				p.mu.leaderEpoch = 5 // newer than the wave's: stale
				p.mu.Unlock()
			}
			items = append(items, waveItem{p: p, ps: PartitionState{TopicPartition: tp, ControllerEpoch: 1, Leader: leader,
				LeaderEpoch: epoch, ISR: []int32{1, 2}, Replicas: []int32{1, 2}}})
		}
		applyWave(items, time.Now(), tc)
		for i, it := range items {
			if withStale && i == 7 {
				if !errors.Is(it.err, ErrStaleLeaderEpoch) {
					t.Fatalf("stale item: %v", it.err)
				}
				continue
			}
			if it.err != nil || it.isLeader != (i%2 == 0) {
				t.Fatalf("withStale=%v item %d: leader %v err %v, want leader %v", withStale, i, it.isLeader, it.err, i%2 == 0)
			}
		}
	}
}

// plannedLogs adapts a storage.Manager to LogProvider and LogPlanner, as
// the broker does; managerLogs (offline_test.go) is the same without
// planning.
type plannedLogs struct{ managerLogs }

func (p plannedLogs) PlanNewLogs(logs []NewLog) {
	tps := make([]kafka.TopicPartition, len(logs))
	for i, l := range logs {
		tps[i] = l.TP
	}
	p.m.PlanNewLogs(tps)
}

// TestReplicaLeadershipWaveCreatesLogsInRequestOrderPlacement: a
// LeaderAndIsr creating 90 logs over three log dirs creates them in
// parallel when the LogProvider plans, and each lands in the log dir that
// creating them one after another in request order gives (without a
// planner); a partition whose epoch is stale creates nothing and is left
// out of the plan.
func TestReplicaLeadershipWaveCreatesLogsInRequestOrderPlacement(t *testing.T) {
	place := func(t *testing.T, plan bool) map[kafka.TopicPartition]string {
		root := t.TempDir()
		dirs := []string{filepath.Join(root, "a"), filepath.Join(root, "b"), filepath.Join(root, "c")}
		logs, err := storage.NewManager(storage.ManagerConfig{Dirs: dirs})
		if err != nil {
			t.Fatal(err)
		}
		if err := logs.Load(context.Background()); err != nil {
			t.Fatal(err)
		}
		var provider LogProvider = managerLogs{logs}
		if plan {
			provider = plannedLogs{managerLogs{logs}}
		}
		m, err := New(Config{BrokerID: 1, Logs: provider, TopicConfig: func(string) (TopicConfig, error) {
			return TopicConfig{Log: storage.DefaultConfig(), MinInsyncReplicas: 1}, nil
		}})
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { m.Close(); _ = logs.Close() })
		stale := kafka.TopicPartition{Topic: "p", Partition: 3}
		p, err := m.getOrCreatePartition(stale)
		if err != nil {
			t.Fatal(err)
		}
		p.mu.Lock()
		p.mu.leaderEpoch = 9
		p.mu.Unlock()
		req := LeaderAndIsr{ControllerEpoch: 1}
		for i := range 90 {
			tp := kafka.TopicPartition{Topic: "p", Partition: int32((i * 7) % 90)}
			req.Partitions = append(req.Partitions, PartitionState{TopicPartition: tp, ControllerEpoch: 1,
				Leader: int32(1 + i%2), LeaderEpoch: 1, ISR: []int32{1, 2}, Replicas: []int32{1, 2}, IsNew: true})
		}
		end := logs.BeginCreateWave()
		res, err := m.BecomeLeaderOrFollower(context.Background(), req)
		if failed := end(); err != nil || len(failed) != 0 {
			t.Fatal(err, failed)
		}
		out := map[kafka.TopicPartition]string{}
		for _, ps := range req.Partitions {
			if ps.TopicPartition == stale {
				if !errors.Is(res[stale], ErrStaleLeaderEpoch) {
					t.Fatalf("stale partition: %v", res[stale])
				}
				continue
			}
			if res[ps.TopicPartition] != nil {
				t.Fatalf("%s: %v", ps.TopicPartition, res[ps.TopicPartition])
			}
			l, ok := logs.Log(ps.TopicPartition)
			if !ok {
				t.Fatalf("%s: no log", ps.TopicPartition)
			}
			out[ps.TopicPartition] = filepath.Base(filepath.Dir(l.Dir()))
		}
		if _, ok := logs.Log(stale); ok {
			t.Fatal("the stale partition got a log")
		}
		return out
	}
	want, got := place(t, false), place(t, true)
	if len(got) != 89 {
		t.Fatalf("%d logs placed, want 89", len(got))
	}
	for tp, d := range want {
		if got[tp] != d {
			t.Fatalf("%s: in log dir %s with planning, %s one after another", tp, got[tp], d)
		}
	}
}
