package group

import (
	"context"
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
	j1 := e.joinAsync(consumerJoin(g, "", "c1"))
	e.waitMembers(g, 1)
	j2 := e.joinAsync(consumerJoin(g, "", "c2"))
	e.waitMembers(g, 2)
	e.advance(3*time.Second, g)
	e.advance(3*time.Second, g)
	r1, r2 := recv(t, j1), recv(t, j2)
	leader, follower := r1, r2
	if r2.LeaderID == r2.MemberID {
		leader, follower = r2, r1
	}
	sf := e.syncAsync(SyncRequest{Group: g, Generation: follower.Generation, MemberID: follower.MemberID})
	e.waitFor(func() error {
		var waiting bool
		e.inspect(g, func(gr *group) { waiting = gr.members[follower.MemberID].syncReply != nil })
		if !waiting {
			return fmt.Errorf("follower not waiting in SyncGroup yet")
		}
		return nil
	})
	e.olog.mu.Lock()
	e.olog.failNext = fmt.Errorf("isr too small: %w", ErrNotEnoughReplicas)
	e.olog.mu.Unlock()
	sl := e.c.SyncGroup(bg, SyncRequest{Group: g, Generation: leader.Generation, MemberID: leader.MemberID,
		Assignments: map[string][]byte{leader.MemberID: {1}, follower.MemberID: {2}}})
	if sl.ErrorCode != kerr.CoordinatorNotAvailable.Code {
		t.Fatalf("leader sync = %+v", sl)
	}
	if r := recv(t, sf); r.ErrorCode != kerr.CoordinatorNotAvailable.Code {
		t.Fatalf("follower sync = %+v", r)
	}
	e.waitState(g, "PreparingRebalance")
}

// blockingLog holds every Append until its context ends.
type blockingLog struct {
	OffsetLog
	started chan struct{}
}

func (l *blockingLog) Append(ctx context.Context, p int32, batch []byte) (int64, error) {
	l.started <- struct{}{}
	<-ctx.Done()
	return 0, ctx.Err()
}

// A commit waiting for replication when the partition moves is answered
// NOT_COORDINATOR and never becomes visible.
func TestGroupCommitInFlightDuringResign(t *testing.T) {
	e := newEnv(t, testConfig())
	e.c.Shutdown()
	bl := &blockingLog{OffsetLog: e.olog, started: make(chan struct{}, 1)}
	e.c = NewCoordinator(Options{Config: e.cfg, Log: bl, Clock: e.clock})
	p := e.c.PartitionFor("inflight")
	e.c.BecomeLeader(p, 0)
	testwait.For(t, 10*time.Second, func() error {
		if _, loading := e.c.Owned(p); loading {
			return fmt.Errorf("loading")
		}
		return nil
	})
	done := make(chan []int16, 1)
	go func() {
		done <- e.c.CommitOffsets(bg, CommitRequest{Group: "inflight", Generation: -1, RetentionMs: -1,
			Offsets: []CommitOffset{commit(5, "t", 0)}})
	}()
	recv(t, (<-chan struct{})(bl.started))
	e.c.Resign(p, -1)
	if codes := recv(t, (<-chan []int16)(done)); codes[0] != kerr.NotCoordinator.Code {
		t.Fatalf("in-flight commit after resign = %v", codes)
	}
}

func (e *env) waitFor(cond func() error) {
	e.t.Helper()
	testwait.For(e.t, 10*time.Second, cond)
}
