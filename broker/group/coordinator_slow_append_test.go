package group

import (
	"context"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kerr"

	"samsa/kafka"
)

// holdLog passes appends through to its OffsetLog until hold is called;
// from then on each Append reports itself on started and waits for
// release (then writes) or for its ctx to end (then fails with the ctx
// error, as the broker's acks=all wait does).
type holdLog struct {
	OffsetLog
	started chan appendCall

	mu      sync.Mutex
	release chan struct{} // guarded by mu; nil = pass through
}

// appendCall is one held Append: its ctx deadline (ok false if none).
type appendCall struct {
	deadline time.Time
	ok       bool
}

func newHoldLog(l OffsetLog) *holdLog {
	return &holdLog{OffsetLog: l, started: make(chan appendCall, 16)}
}

func (l *holdLog) hold() {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.release = make(chan struct{})
}

// unhold releases the held appends and lets later ones through.
func (l *holdLog) unhold() {
	l.mu.Lock()
	defer l.mu.Unlock()
	close(l.release)
	l.release = nil
}

func (l *holdLog) Append(ctx context.Context, p int32, batch []byte) (int64, error) {
	l.mu.Lock()
	rel := l.release
	l.mu.Unlock()
	if rel != nil {
		dl, ok := ctx.Deadline()
		l.started <- appendCall{deadline: dl, ok: ok}
		select {
		case <-rel:
		case <-ctx.Done():
			return 0, fmt.Errorf("held: %w", ctx.Err())
		}
	}
	return l.OffsetLog.Append(ctx, p, batch)
}

// newHeldEnv is newEnv with the coordinator writing through a holdLog.
func newHeldEnv(t *testing.T, cfg Config) (*env, *holdLog) {
	t.Helper()
	var hl *holdLog
	e := newEnvWrapped(t, cfg, func(l OffsetLog) OffsetLog { hl = newHoldLog(l); return hl })
	return e, hl
}

// commitAsync sends member's commit of offset off for t1-p in generation
// gen of group g in a goroutine; the answer arrives on the channel.
func (e *env) commitAsync(g string, gen int32, member string, off int64, p int32) <-chan []int16 {
	ch := make(chan []int16, 1)
	go func() {
		ch <- e.c.CommitOffsets(bg, CommitRequest{Group: g, Generation: gen, MemberID: member, RetentionMs: -1,
			Offsets: []CommitOffset{commit(off, "t1", p)}})
	}()
	return ch
}

// waitAppendsQueued waits until n of group g's appends wait behind the
// one in flight.
func (e *env) waitAppendsQueued(g string, n int) {
	e.t.Helper()
	e.waitFor(func() error {
		var queued int
		e.inspect(g, func(gr *group) { queued = len(gr.appendQ) })
		if queued != n {
			return fmt.Errorf("%d appends queued, want %d", queued, n)
		}
		return nil
	})
}

// The chaos suspicion: while a commit's write to __consumer_offsets is
// stuck (acks=all waiting for a dead follower still in the ISR), are
// heartbeats still served and do they keep members alive? In Kafka 2.8
// the append is asynchronous (appendRecords with a callback, the group
// lock not held while replication is awaited), so heartbeats keep being
// answered and each one refreshes the member's session deadline
// (completeAndScheduleNextHeartbeatExpiration); the commit itself
// refreshes the committer's deadline when it is accepted, and its answer
// comes from the append's outcome without a second membership check.
func TestGroupHeartbeatsDuringBlockedCommit(t *testing.T) {
	cfg := testConfig()
	// Longer than the test runs, so the held append ends by release only.
	cfg.OffsetsCommitTimeout = time.Minute
	e, hl := newHeldEnv(t, cfg)
	const g = "slow-commit"
	ids, gen := e.joinStable(g, "c1", "c2")
	rebalancesBefore := len(e.hooks())

	hl.hold()
	commits := []<-chan []int16{e.commitAsync(g, gen, ids[0], 10, 0)}
	recv(t, (<-chan appendCall)(hl.started))
	// A second commit queues behind the held one (one append in flight).
	commits = append(commits, e.commitAsync(g, gen, ids[1], 20, 1))
	e.waitAppendsQueued(g, 1)

	// Three session timeouts (10 s each) pass in 2 s steps, both members
	// heartbeating at every step: each heartbeat is answered, no member
	// expires, no rebalance starts.
	for step := 0; step < 15; step++ {
		e.advance(2*time.Second, g)
		for _, id := range ids {
			if code := e.c.Heartbeat(bg, HeartbeatRequest{Group: g, Generation: gen, MemberID: id}); code != 0 {
				t.Fatalf("step %d: heartbeat of %s while the commit is held = %s", step, id, kerr.ErrorForCode(code))
			}
		}
		for _, ch := range commits {
			pending(t, ch)
		}
	}
	if d := e.c.DescribeGroup(bg, g); d.State != "Stable" || len(d.Members) != 2 {
		t.Fatalf("after 30 s of held commit: %s with %d members, want Stable with 2", d.State, len(d.Members))
	}
	if n := len(e.hooks()); n != rebalancesBefore {
		t.Fatalf("hook events while the commit was held: %q", e.hooks()[rebalancesBefore:])
	}
	// Not visible before it is written.
	if _, offs := e.c.FetchOffsets(bg, g, []kafka.TopicPartition{tp("t1", 0)}); offs[0].Offset != -1 {
		t.Fatalf("held commit visible: %+v", offs)
	}

	hl.unhold()
	for _, ch := range commits {
		if codes := recv(t, ch); codes[0] != 0 {
			t.Fatalf("commit after release = %s", kerr.ErrorForCode(codes[0]))
		}
	}
	code, offs := e.c.FetchOffsets(bg, g, []kafka.TopicPartition{tp("t1", 0), tp("t1", 1)})
	if code != 0 || offs[0].Offset != 10 || offs[1].Offset != 20 {
		t.Fatalf("fetch after release = %d %+v", code, offs)
	}
	e.waitState(g, "Stable")
}

// Without heartbeats (the client's heartbeat queued behind its own commit
// on one connection, which Kafka and Samsa both serve one request at a
// time), only the commit's acceptance refreshed the member's session: a
// member whose commit is held longer than its session timeout expires,
// in Kafka as in Samsa, and a commit answered after that keeps the code
// of its append (Kafka's putCacheCallback does not look at membership).
func TestGroupSessionExpiresBehindHeldCommit(t *testing.T) {
	cfg := testConfig()
	cfg.OffsetsCommitTimeout = time.Minute
	e, hl := newHeldEnv(t, cfg)
	const g = "silent"
	ids, gen := e.joinStable(g, "c1", "c2")
	e.advance(5*time.Second, g)
	if code := e.c.Heartbeat(bg, HeartbeatRequest{Group: g, Generation: gen, MemberID: ids[1]}); code != 0 {
		t.Fatalf("c2 heartbeat = %s", kerr.ErrorForCode(code))
	}
	hl.hold()
	done := e.commitAsync(g, gen, ids[0], 10, 0)
	recv(t, (<-chan appendCall)(hl.started))
	// c2 heartbeats; c1 is silent behind its commit. c1's deadline was
	// refreshed by the commit 5 s after the sync, so 9 s later it is
	// still in; at 10 s it is gone.
	e.advance(9*time.Second, g)
	if code := e.c.Heartbeat(bg, HeartbeatRequest{Group: g, Generation: gen, MemberID: ids[1]}); code != 0 {
		t.Fatalf("c2 heartbeat = %s", kerr.ErrorForCode(code))
	}
	e.waitMembers(g, 2)
	e.advance(time.Second, g)
	e.waitMembers(g, 1)
	if code := e.c.Heartbeat(bg, HeartbeatRequest{Group: g, Generation: gen, MemberID: ids[0]}); code != kerr.UnknownMemberID.Code {
		t.Fatalf("expired member's heartbeat = %s, want UNKNOWN_MEMBER_ID", kerr.ErrorForCode(code))
	}
	hl.unhold()
	if codes := recv(t, done); codes[0] != 0 {
		t.Fatalf("held commit of the expired member = %s, want its append's outcome (none)", kerr.ErrorForCode(codes[0]))
	}
}

// Kafka writes each commit to the log at once and lets its acks=all wait
// run beside the others, so every commit is answered within
// offsets.commit.timeout.ms of its arrival. Samsa writes one append at a
// time per group (decision order); a commit queued behind a stuck one
// must not add its own full timeout to its predecessor's, or a client
// whose heartbeat waits behind the commit on the same connection (franz-go
// sends OffsetCommit and Heartbeat on one) is silent for a multiple of the
// timeout and its session expires. The queued commit's deadline runs from
// when it was accepted.
func TestGroupQueuedCommitBoundedByCommitTimeout(t *testing.T) {
	cfg := testConfig()
	const timeout = 1500 * time.Millisecond
	cfg.OffsetsCommitTimeout = timeout
	e, hl := newHeldEnv(t, cfg)
	const g = "queued"
	ids, gen := e.joinStable(g, "c1", "c2")
	hl.hold()
	first := e.commitAsync(g, gen, ids[0], 10, 0)
	a := recv(t, (<-chan appendCall)(hl.started))
	if !a.ok {
		t.Fatal("held append has no deadline")
	}
	second := e.commitAsync(g, gen, ids[1], 20, 1)
	e.waitAppendsQueued(g, 1)
	accepted := time.Now() // the second commit was accepted before this

	if codes := recv(t, first); codes[0] != kerr.RequestTimedOut.Code {
		t.Fatalf("held commit = %s, want REQUEST_TIMED_OUT", kerr.ErrorForCode(codes[0]))
	}
	// The second either is not attempted (its time is up) or is given only
	// what is left of its own timeout.
	codes := recv(t, second)
	select {
	case b := <-hl.started:
		if !b.ok || b.deadline.After(accepted.Add(timeout)) {
			t.Fatalf("queued commit's append deadline %v is past its acceptance + offsets.commit.timeout.ms (%v)",
				b.deadline, accepted.Add(timeout))
		}
	default:
	}
	if codes[0] != kerr.RequestTimedOut.Code {
		t.Fatalf("queued commit = %s, want REQUEST_TIMED_OUT", kerr.ErrorForCode(codes[0]))
	}
	// Members are unharmed and the next commit goes through.
	hl.unhold()
	for _, id := range ids {
		if code := e.c.Heartbeat(bg, HeartbeatRequest{Group: g, Generation: gen, MemberID: id}); code != 0 {
			t.Fatalf("heartbeat of %s = %s", id, kerr.ErrorForCode(code))
		}
	}
	if codes := e.c.CommitOffsets(bg, CommitRequest{Group: g, Generation: gen, MemberID: ids[1], RetentionMs: -1,
		Offsets: []CommitOffset{commit(21, "t1", 1)}}); codes[0] != 0 {
		t.Fatalf("commit after release = %s", kerr.ErrorForCode(codes[0]))
	}
	if _, offs := e.c.FetchOffsets(bg, g, []kafka.TopicPartition{tp("t1", 0), tp("t1", 1)}); offs[0].Offset != -1 || offs[1].Offset != 21 {
		t.Fatalf("fetch = %+v, want t1-0 uncommitted and t1-1 at 21", offs)
	}
}

// Kafka's storeGroup answers a timed-out group metadata write with
// REBALANCE_IN_PROGRESS (not REQUEST_TIMED_OUT): the leader's and the
// waiting followers' SyncGroup get it and the group rebalances.
func TestGroupSyncStoreTimeout(t *testing.T) {
	cfg := testConfig()
	cfg.OffsetsCommitTimeout = 300 * time.Millisecond
	e, hl := newHeldEnv(t, cfg)
	const g = "synctimeout"
	leader, follower, sf := e.followerWaitingInSync(g)
	hl.hold()
	defer hl.unhold()
	sl := e.leaderSync(g, leader, follower)
	if sl.ErrorCode != kerr.RebalanceInProgress.Code {
		t.Fatalf("leader sync after a timed-out store = %s, want REBALANCE_IN_PROGRESS", kerr.ErrorForCode(sl.ErrorCode))
	}
	if r := recv(t, sf); r.ErrorCode != kerr.RebalanceInProgress.Code {
		t.Fatalf("follower sync after a timed-out store = %s, want REBALANCE_IN_PROGRESS", kerr.ErrorForCode(r.ErrorCode))
	}
	e.waitState(g, "PreparingRebalance")
}
