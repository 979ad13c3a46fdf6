package group

import (
	"fmt"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kerr"

	"samsa/internal/testwait"
)

// lastRebalance returns the newest rebalance record of group.
func (e *env) lastRebalance(group string) Rebalance {
	e.t.Helper()
	for _, gr := range e.c.Rebalances() {
		if gr.Group == group && len(gr.History) > 0 {
			return gr.History[len(gr.History)-1]
		}
	}
	e.t.Fatalf("no rebalance recorded for %s", group)
	return Rebalance{}
}

// joinTwo has c1 and c2 join a new group through the initial delay and
// returns both join answers (c1 leads).
func (e *env) joinTwo(group string, reqs ...JoinRequest) (JoinResult, JoinResult) {
	e.t.Helper()
	r1, r2 := e.joinPair(group, reqs[0], reqs[1])
	if r1.ErrorCode != 0 || r2.ErrorCode != 0 || r1.LeaderID != r1.MemberID {
		e.t.Fatalf("joins = %+v / %+v", r1, r2)
	}
	return r1, r2
}

// joinTwoStaticLeaderSynced has static members inst-1 (c1, the leader)
// and inst-2 (c2) join group g and the leader sync: inst-2's join request
// and both join answers.
func (e *env) joinTwoStaticLeaderSynced(g string) (JoinRequest, JoinResult, JoinResult) {
	e.t.Helper()
	a, b := consumerJoin(g, "", "c1"), consumerJoin(g, "", "c2")
	a.GroupInstanceID, b.GroupInstanceID = "inst-1", "inst-2"
	r1, r2 := e.joinTwo(g, a, b)
	if s := e.c.SyncGroup(bg, SyncRequest{Group: g, Generation: r1.Generation, MemberID: r1.MemberID, GroupInstanceID: "inst-1",
		Assignments: map[string][]byte{r1.MemberID: {1}, r2.MemberID: {2}}}); s.ErrorCode != 0 {
		e.t.Fatalf("leader sync = %+v", s)
	}
	return b, r1, r2
}

// KAFKA-12890 (Kafka 2.8.1): a follower that never sends SyncGroup after
// the join completed is removed once the rebalance timeout (60 s here)
// passes, although the leader synced and the group is Stable; the group
// rebalances, and the removed member's SyncGroup and Heartbeat get
// UNKNOWN_MEMBER_ID. Heartbeats do not count as a sync.
func TestGroupPendingSyncFollowerRemoved(t *testing.T) {
	e := newEnv(t, testConfig())
	const g = "pending-sync"
	r1, r2 := e.joinTwo(g, consumerJoin(g, "", "c1"), consumerJoin(g, "", "c2"))
	s1 := e.c.SyncGroup(bg, SyncRequest{Group: g, Generation: r1.Generation, MemberID: r1.MemberID,
		Assignments: map[string][]byte{r1.MemberID: {1}, r2.MemberID: {2}}})
	if s1.ErrorCode != 0 {
		t.Fatalf("leader sync = %+v", s1)
	}
	e.waitState(g, "Stable")
	for i := 0; i < 6; i++ { // both heartbeat; c2 never syncs
		e.advance(9*time.Second, g)
		for _, id := range []string{r1.MemberID, r2.MemberID} {
			if code := e.c.Heartbeat(bg, HeartbeatRequest{Group: g, Generation: r1.Generation, MemberID: id}); code != 0 {
				t.Fatalf("heartbeat %d of %s = %d", i, id, code)
			}
		}
	}
	if s := e.state(g); s != "Stable" {
		t.Fatalf("state 54 s after the join = %s", s)
	}
	e.advance(6*time.Second, g) // 60 s since the join completed
	e.waitState(g, "PreparingRebalance")
	if d := e.c.DescribeGroup(bg, g); len(d.Members) != 1 || d.Members[0].MemberID != r1.MemberID {
		t.Fatalf("members after pending sync expiry = %+v", d.Members)
	}
	if code := e.c.Heartbeat(bg, HeartbeatRequest{Group: g, Generation: r1.Generation, MemberID: r2.MemberID}); code != kerr.UnknownMemberID.Code {
		t.Fatalf("removed member heartbeat = %d, want UNKNOWN_MEMBER_ID", code)
	}
	if s := e.c.SyncGroup(bg, SyncRequest{Group: g, Generation: r1.Generation, MemberID: r2.MemberID}); s.ErrorCode != kerr.UnknownMemberID.Code {
		t.Fatalf("removed member sync = %+v, want UNKNOWN_MEMBER_ID", s)
	}
	if code := e.c.Heartbeat(bg, HeartbeatRequest{Group: g, Generation: r1.Generation, MemberID: r1.MemberID}); code != kerr.RebalanceInProgress.Code {
		t.Fatalf("leader heartbeat = %d, want REBALANCE_IN_PROGRESS", code)
	}
	r := e.lastRebalance(g)
	if r.Kind != ReasonPendingSyncExpired || r.MemberID != r2.MemberID || r.ClientID != "c2" ||
		r.Reason != "Removing Set("+r2.MemberID+") on pending sync request expiration" || r.Generation != r1.Generation {
		t.Fatalf("rebalance record = %+v", r)
	}
	// The leader rejoins alone: generation+1 with one member.
	j := e.c.JoinGroup(bg, consumerJoin(g, r1.MemberID, "c1"))
	if j.ErrorCode != 0 || j.Generation != r1.Generation+1 || len(j.Members) != 1 {
		t.Fatalf("rejoin = %+v", j)
	}
}

// The leader's SyncGroup counts like any other: when the leader is the
// one that never syncs, it is removed, and the follower's parked
// SyncGroup is answered REBALANCE_IN_PROGRESS so it rejoins.
func TestGroupPendingSyncLeaderRemoved(t *testing.T) {
	e := newEnv(t, testConfig())
	const g = "pending-sync-leader"
	r1, r2 := e.joinTwo(g, consumerJoin(g, "", "c1"), consumerJoin(g, "", "c2"))
	s2 := e.syncAsync(SyncRequest{Group: g, Generation: r2.Generation, MemberID: r2.MemberID})
	testwait.For(t, 10*time.Second, func() error {
		var n int
		e.inspect(g, func(g *group) { n = len(g.pendingSync) })
		if n != 1 {
			return fmt.Errorf("%d members owe a sync, want 1", n)
		}
		return nil
	})
	pending(t, s2)
	// Both heartbeat (the leader too: it is not waiting for anything).
	for i := 0; i < 6; i++ {
		e.advance(9*time.Second, g)
		for _, id := range []string{r1.MemberID, r2.MemberID} {
			if code := e.c.Heartbeat(bg, HeartbeatRequest{Group: g, Generation: r1.Generation, MemberID: id}); code != 0 {
				t.Fatalf("heartbeat %d of %s = %d", i, id, code)
			}
		}
	}
	pending(t, s2)
	e.advance(6*time.Second, g)
	if s := recv(t, s2); s.ErrorCode != kerr.RebalanceInProgress.Code {
		t.Fatalf("follower sync = %+v, want REBALANCE_IN_PROGRESS", s)
	}
	d := e.c.DescribeGroup(bg, g)
	if d.State != "PreparingRebalance" || len(d.Members) != 1 || d.Members[0].MemberID != r2.MemberID {
		t.Fatalf("after expiry: %+v", d)
	}
	if code := e.c.Heartbeat(bg, HeartbeatRequest{Group: g, Generation: r1.Generation, MemberID: r1.MemberID}); code != kerr.UnknownMemberID.Code {
		t.Fatalf("removed leader heartbeat = %d", code)
	}
}

// When every member synced, the expiry removes nobody.
func TestGroupPendingSyncAllSynced(t *testing.T) {
	e := newEnv(t, testConfig())
	const g = "pending-sync-ok"
	ids, gen := e.joinStable(g, "c1", "c2")
	for i := 0; i < 8; i++ {
		e.advance(9*time.Second, g)
		for _, id := range ids {
			if code := e.c.Heartbeat(bg, HeartbeatRequest{Group: g, Generation: gen, MemberID: id}); code != 0 {
				t.Fatalf("heartbeat = %d", code)
			}
		}
	}
	if d := e.c.DescribeGroup(bg, g); d.State != "Stable" || len(d.Members) != 2 {
		t.Fatalf("after 72 s: %+v", d)
	}
}

// Static members owe a sync too (Kafka removes every pending member,
// static or not, unlike the join phase where static members stay): the
// silent static member is removed, and a later Heartbeat or SyncGroup
// with its instance id gets UNKNOWN_MEMBER_ID.
func TestGroupPendingSyncStaticMember(t *testing.T) {
	e := newEnv(t, testConfig())
	const g = "pending-sync-static"
	_, r1, r2 := e.joinTwoStaticLeaderSynced(g)
	for i := 0; i < 6; i++ {
		e.advance(9*time.Second, g)
		for j, id := range []string{r1.MemberID, r2.MemberID} {
			inst := []string{"inst-1", "inst-2"}[j]
			if code := e.c.Heartbeat(bg, HeartbeatRequest{Group: g, Generation: r1.Generation, MemberID: id, GroupInstanceID: inst}); code != 0 {
				t.Fatalf("heartbeat %d of %s = %d", i, id, code)
			}
		}
	}
	e.advance(6*time.Second, g)
	e.waitState(g, "PreparingRebalance")
	if code := e.c.Heartbeat(bg, HeartbeatRequest{Group: g, Generation: r2.Generation, MemberID: r2.MemberID, GroupInstanceID: "inst-2"}); code != kerr.UnknownMemberID.Code {
		t.Fatalf("removed static member heartbeat = %d", code)
	}
	if s := e.c.SyncGroup(bg, SyncRequest{Group: g, Generation: r2.Generation, MemberID: r2.MemberID, GroupInstanceID: "inst-2"}); s.ErrorCode != kerr.UnknownMemberID.Code {
		t.Fatalf("removed static member sync = %+v", s)
	}
	if r := e.lastRebalance(g); r.Kind != ReasonPendingSyncExpired || r.GroupInstanceID != "inst-2" {
		t.Fatalf("rebalance record = %+v", r)
	}
}

// InitialDelayedJoin's budget: with a 5 s rebalance timeout and the 3 s
// delay, a member joining during the first delay extends it by only
// min(delay, remaining) = 2 s; the join then completes with both members
// in generation 1 (Kafka's InitialDelayedJoin.onComplete).
func TestGroupInitialDelayBoundedByRebalanceTimeout(t *testing.T) {
	e := newEnv(t, testConfig())
	const g = "initial-bounded"
	a, b := consumerJoin(g, "", "c1"), consumerJoin(g, "", "c2")
	a.RebalanceTimeoutMs, b.RebalanceTimeoutMs = 5000, 5000
	j1 := e.joinAsync(a)
	e.waitMembers(g, 1)
	e.advance(1*time.Second, g)
	j2 := e.joinAsync(b)
	e.waitMembers(g, 2)
	e.advance(2*time.Second, g) // 3 s: c2 joined meanwhile, wait again
	pending(t, j1)
	e.advance(1*time.Second, g)
	pending(t, j1)
	e.advance(1*time.Second, g) // 5 s: the budget is spent
	r1, r2 := recv(t, j1), recv(t, j2)
	if r1.Generation != 1 || r2.Generation != 1 || len(r1.Members) != 2 {
		t.Fatalf("joins = %+v / %+v", r1, r2)
	}
}

// The symptom reported with librdkafka (the first consumer assigned alone,
// the second in a later generation) is what group.initial.rebalance.delay.ms=0
// gives; with Kafka's 3 s default two consumers starting 1 s apart land
// in generation 1, once each member's JoinGroup reached the group during
// the delay. A group that had generations before (generation > 0) waits
// the delay once, without extension, as Kafka's newMemberAdded is only
// set at generation 0.
func TestGroupInitialDelayGenerations(t *testing.T) {
	cfg := testConfig()
	cfg.InitialRebalanceDelay = 0
	e := newEnv(t, cfg)
	const g = "initial-zero"
	j1 := e.joinAsync(consumerJoin(g, "", "c1"))
	e.waitMembers(g, 1)
	e.advance(0, g)
	if r := recv(t, j1); r.Generation != 1 || len(r.Members) != 1 {
		t.Fatalf("delay 0: first join = %+v, want generation 1 alone", r)
	}

	e2 := newEnv(t, testConfig())
	const h = "initial-reused"
	ids, gen := e2.joinStable(h, "c1")
	if code, _ := e2.c.LeaveGroup(bg, h, []LeaveMember{{MemberID: ids[0]}}); code != 0 {
		t.Fatalf("leave = %d", code)
	}
	e2.waitState(h, "Empty")
	k1 := e2.joinAsync(consumerJoin(h, "", "c1"))
	e2.waitMembers(h, 1)
	k2 := e2.joinAsync(consumerJoin(h, "", "c2"))
	e2.waitMembers(h, 2)
	e2.advance(3*time.Second, h) // no extension at generation > 0
	r1, r2 := recv(t, k1), recv(t, k2)
	if r1.Generation != gen+2 || r2.Generation != gen+2 || len(r1.Members) != 2 {
		t.Fatalf("reused group joins = %+v / %+v (previous generation %d)", r1, r2, gen)
	}
}

// A static member that rejoins with a new member id in Stable, before its
// old id sent SyncGroup, is replaced without a rebalance (KIP-345); as in
// Kafka (replaceStaticMember leaves pendingSyncMembers alone) the old id
// still owes its sync, so the expiry rebalances the group, removing no
// member.
func TestGroupPendingSyncReplacedStaticMember(t *testing.T) {
	e := newEnv(t, testConfig())
	const g = "pending-sync-replaced"
	b, r1, r2 := e.joinTwoStaticLeaderSynced(g)
	e.waitState(g, "Stable")
	nb := e.c.JoinGroup(bg, b) // inst-2 restarts: new member id, same protocols
	if nb.ErrorCode != 0 || nb.MemberID == r2.MemberID || nb.Generation != r1.Generation {
		t.Fatalf("static rejoin = %+v", nb)
	}
	if s := e.c.SyncGroup(bg, SyncRequest{Group: g, Generation: nb.Generation, MemberID: nb.MemberID, GroupInstanceID: "inst-2"}); s.ErrorCode != 0 || len(s.Assignment) != 1 || s.Assignment[0] != 2 {
		t.Fatalf("replaced member sync = %+v", s)
	}
	for i := 0; i < 6; i++ {
		e.advance(9*time.Second, g)
		for j, id := range []string{r1.MemberID, nb.MemberID} {
			if code := e.c.Heartbeat(bg, HeartbeatRequest{Group: g, Generation: r1.Generation, MemberID: id,
				GroupInstanceID: []string{"inst-1", "inst-2"}[j]}); code != 0 {
				t.Fatalf("heartbeat %d of %s = %d", i, id, code)
			}
		}
	}
	e.advance(6*time.Second, g)
	e.waitState(g, "PreparingRebalance")
	if d := e.c.DescribeGroup(bg, g); len(d.Members) != 2 {
		t.Fatalf("members = %+v, want both kept", d.Members)
	}
	if r := e.lastRebalance(g); r.Kind != ReasonPendingSyncExpired || r.Reason != "Removing Set("+r2.MemberID+") on pending sync request expiration" {
		t.Fatalf("rebalance record = %+v", r)
	}
}
