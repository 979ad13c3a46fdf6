package replica

import (
	"errors"
	"testing"
	"time"

	"samsa/kafka"
)

// TestReplicaReadBeforeLeaderAndIsrApplied: a consumer read that any
// replica may serve (Fetch v11+, KIP-392) answers NOT_LEADER_OR_FOLLOWER
// while the partition's log is open but its LeaderAndIsr state is not
// applied yet (between applyWave's two stages). Served there, it showed a
// restarted leader's checkpointed high watermark (0 after a SIGKILL) as
// the high watermark and last stable offset, just before makeLeader moved
// both up to the log end: TestClusterTxnPartitionHardKill's "lso 0".
func TestReplicaReadBeforeLeaderAndIsrApplied(t *testing.T) {
	m, _ := newTestManager(t, 1, 1)
	tp := kafka.TopicPartition{Topic: "t", Partition: 0}
	p, err := m.getOrCreatePartition(tp)
	if err != nil {
		t.Fatal(err)
	}
	ps := PartitionState{TopicPartition: tp, ControllerEpoch: 1, Leader: 1, LeaderEpoch: 0,
		ISR: []int32{1}, Replicas: []int32{1}}
	tc := func(string) (TopicConfig, error) { return m.cfg.TopicConfig("") }
	if _, err := p.applyLeaderAndIsrUpTo(ps, time.Now(), tc, true); err != nil {
		t.Fatal(err)
	}
	if p.Log() == nil {
		t.Fatal("the log-opening stage left no log")
	}
	for _, committed := range []bool{false, true} {
		rp := ReadParams{ReplicaID: -1, MaxBytes: 1 << 20, CurrentLeaderEpoch: -1, FollowerLogStartOffset: -1,
			AnyReplica: true, ReadCommitted: committed}
		if res, err := m.Read(tp, rp); !errors.Is(err, ErrNotLeader) {
			t.Fatalf("read_committed=%v before the state is applied: %+v, %v; want ErrNotLeader", committed, res, err)
		}
	}
	if _, err := p.applyLeaderAndIsr(ps, time.Now(), tc); err != nil {
		t.Fatal(err)
	}
	if _, err := m.AppendAsLeader(tp, batch(t, "v0", "v1"), -1); err != nil {
		t.Fatal(err)
	}
	res, err := m.Read(tp, ReadParams{ReplicaID: -1, MaxBytes: 1 << 20, CurrentLeaderEpoch: -1,
		FollowerLogStartOffset: -1, AnyReplica: true, ReadCommitted: true})
	if err != nil || res.HighWatermark != 2 || res.LastStableOffset != 2 {
		t.Fatalf("read as leader: %+v, %v; want hw and lso 2", res, err)
	}
}
