package group

import (
	"fmt"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kerr"

	"samsa/internal/testwait"
)

// Kafka (doSyncGroup): when storing the leader's assignment fails, every
// waiting member gets the mapped error and the group rebalances.
func TestGroupSyncStoreFailure(t *testing.T) {
	e := newEnv(t, testConfig())
	const g = "syncfail"
	leader, follower, sf := e.followerWaitingInSync(g)
	e.olog.mu.Lock()
	e.olog.failNext = fmt.Errorf("isr too small: %w", ErrNotEnoughReplicas)
	e.olog.mu.Unlock()
	sl := e.leaderSync(g, leader, follower)
	if sl.ErrorCode != kerr.CoordinatorNotAvailable.Code {
		t.Fatalf("leader sync = %+v", sl)
	}
	if r := recv(t, sf); r.ErrorCode != kerr.CoordinatorNotAvailable.Code {
		t.Fatalf("follower sync = %+v", r)
	}
	e.waitState(g, "PreparingRebalance")
}

// A commit waiting for replication when the partition moves is answered
// NOT_COORDINATOR and never becomes visible.
func TestGroupCommitInFlightDuringResign(t *testing.T) {
	e, hl := newHeldEnv(t, testConfig())
	p := e.c.PartitionFor("inflight")
	hl.hold() // never released: the append waits until its context ends
	done := make(chan []int16, 1)
	go func() {
		done <- e.c.CommitOffsets(bg, CommitRequest{Group: "inflight", Generation: -1, RetentionMs: -1,
			Offsets: []CommitOffset{commit(5, "t", 0)}})
	}()
	recv(t, (<-chan appendCall)(hl.started))
	e.c.Resign(p, -1)
	if codes := recv(t, (<-chan []int16)(done)); codes[0] != kerr.NotCoordinator.Code {
		t.Fatalf("in-flight commit after resign = %v", codes)
	}
}

func (e *env) waitFor(cond func() error) {
	e.t.Helper()
	testwait.For(e.t, 10*time.Second, cond)
}
