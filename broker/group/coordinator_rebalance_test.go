package group

import (
	"context"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kerr"

	"samsa/kafka"
)

var bg = context.Background()

// joinStable drives members (client ids) of a new group through the
// initial delayed join and SyncGroup and returns their member ids (leader
// first in join order) and the generation.
func (e *env) joinStable(group string, clients ...string) ([]string, int32) {
	e.t.Helper()
	chs := make([]<-chan JoinResult, len(clients))
	for i, cl := range clients {
		chs[i] = e.joinAsync(consumerJoin(group, "", cl))
		e.waitMembers(group, i+1)
	}
	// group.initial.rebalance.delay.ms, extended once because members
	// joined during the first delay (InitialDelayedJoin).
	e.advance(3*time.Second, group)
	e.advance(3*time.Second, group)
	ids := make([]string, len(clients))
	var leader string
	var gen int32
	for i, ch := range chs {
		r := recv(e.t, ch)
		if r.ErrorCode != 0 {
			e.t.Fatalf("join %d: %s", i, kerr.ErrorForCode(r.ErrorCode))
		}
		ids[i], leader, gen = r.MemberID, r.LeaderID, r.Generation
	}
	assign := map[string][]byte{}
	for i, id := range ids {
		assign[id] = []byte{byte(i)}
	}
	syncs := make([]<-chan SyncResult, len(ids))
	for i, id := range ids {
		req := SyncRequest{Group: group, Generation: gen, MemberID: id}
		if id == leader {
			req.Assignments = assign
		}
		syncs[i] = e.syncAsync(req)
	}
	for i, ch := range syncs {
		r := recv(e.t, ch)
		if r.ErrorCode != 0 || len(r.Assignment) != 1 || r.Assignment[0] != byte(i) {
			e.t.Fatalf("sync %d: %+v", i, r)
		}
	}
	e.waitState(group, "Stable")
	return ids, gen
}

// Kafka: a new group waits group.initial.rebalance.delay.ms (extended
// while members keep joining), the leader receives every member's
// metadata, SyncGroup hands out the leader's assignment once it is stored,
// and a new member makes everyone rejoin (REBALANCE_IN_PROGRESS in
// heartbeats), completing as soon as all known members rejoined.
func TestGroupRebalanceLifecycle(t *testing.T) {
	e := newEnv(t, testConfig())
	const g = "lifecycle"

	// KIP-394: JoinGroup v4+ without a member id gets one first.
	req := consumerJoin(g, "", "c1")
	req.RequireKnownMember = true
	r := e.c.JoinGroup(bg, req)
	if r.ErrorCode != kerr.MemberIDRequired.Code || r.MemberID == "" {
		t.Fatalf("first join = %+v, want MEMBER_ID_REQUIRED with an id", r)
	}
	req.MemberID = r.MemberID
	j1 := e.joinAsync(req)
	e.waitMembers(g, 1)
	j2 := e.joinAsync(consumerJoin(g, "", "c2"))
	e.waitMembers(g, 2)
	e.advance(3*time.Second, g) // c2 joined during the delay: wait once more
	pending(t, j1)
	e.advance(3*time.Second, g)
	r1, r2 := recv(t, j1), recv(t, j2)
	if r1.ErrorCode != 0 || r2.ErrorCode != 0 || r1.Generation != 1 || r2.Generation != 1 {
		t.Fatalf("joins = %+v / %+v", r1, r2)
	}
	if r1.LeaderID != r1.MemberID || len(r1.Members) != 2 || len(r2.Members) != 0 || r2.LeaderID != r1.MemberID {
		t.Fatalf("leader view %+v, follower view %+v", r1, r2)
	}
	if r1.Protocol != "range" || r1.ProtocolType != "consumer" {
		t.Fatalf("protocol = %q/%q", r1.ProtocolType, r1.Protocol)
	}
	if s := e.state(g); s != "CompletingRebalance" {
		t.Fatalf("state after join = %s", s)
	}
	// Heartbeats are fine while the leader computes the assignment.
	if code := e.c.Heartbeat(bg, HeartbeatRequest{Group: g, Generation: 1, MemberID: r2.MemberID}); code != 0 {
		t.Fatalf("heartbeat in CompletingRebalance = %d", code)
	}
	s2 := e.syncAsync(SyncRequest{Group: g, Generation: 1, MemberID: r2.MemberID})
	s1 := e.syncAsync(SyncRequest{Group: g, Generation: 1, MemberID: r1.MemberID,
		Assignments: map[string][]byte{r1.MemberID: []byte("a1"), r2.MemberID: []byte("a2")}})
	if a, b := recv(t, s1), recv(t, s2); string(a.Assignment) != "a1" || string(b.Assignment) != "a2" || a.Protocol != "range" {
		t.Fatalf("syncs = %+v / %+v", a, b)
	}
	if s := e.state(g); s != "Stable" {
		t.Fatalf("state after sync = %s", s)
	}
	d := e.c.DescribeGroup(bg, g)
	if d.Protocol != "range" || len(d.Members) != 2 || string(d.Members[1].Assignment) != "a2" || d.Members[0].ClientID != "c1" {
		t.Fatalf("describe = %+v", d)
	}

	// A third member triggers a rebalance.
	j3 := e.joinAsync(consumerJoin(g, "", "c3"))
	e.waitState(g, "PreparingRebalance")
	for _, id := range []string{r1.MemberID, r2.MemberID} {
		if code := e.c.Heartbeat(bg, HeartbeatRequest{Group: g, Generation: 1, MemberID: id}); code != kerr.RebalanceInProgress.Code {
			t.Fatalf("heartbeat during rebalance = %d", code)
		}
	}
	// Old generation commits are still accepted while preparing.
	codes := e.c.CommitOffsets(bg, CommitRequest{Group: g, Generation: 1, MemberID: r1.MemberID, RetentionMs: -1,
		Offsets: []CommitOffset{{TopicPartition: kafka.TopicPartition{Topic: "t1", Partition: 0}, Offset: 5, LeaderEpoch: -1}}})
	if codes[0] != 0 {
		t.Fatalf("commit during PreparingRebalance = %d", codes[0])
	}
	j1 = e.joinAsync(consumerJoin(g, r1.MemberID, "c1"))
	pending(t, j3)
	j2 = e.joinAsync(consumerJoin(g, r2.MemberID, "c2"))
	r1, r2, r3 := recv(t, j1), recv(t, j2), recv(t, j3) // no clock needed: everyone rejoined
	if r1.Generation != 2 || r2.Generation != 2 || r3.Generation != 2 || len(r1.Members) != 3 {
		t.Fatalf("gen 2 joins = %+v / %+v / %+v", r1, r2, r3)
	}
	// Old generation is now illegal.
	if code := e.c.Heartbeat(bg, HeartbeatRequest{Group: g, Generation: 1, MemberID: r1.MemberID}); code != kerr.IllegalGeneration.Code {
		t.Fatalf("old generation heartbeat = %d", code)
	}
	if res := e.c.SyncGroup(bg, SyncRequest{Group: g, Generation: 1, MemberID: r1.MemberID}); res.ErrorCode != kerr.IllegalGeneration.Code {
		t.Fatalf("old generation sync = %+v", res)
	}
}

// Kafka: SyncGroup, Heartbeat, LeaveGroup and OffsetCommit from ids the
// group does not know give UNKNOWN_MEMBER_ID (kafka-go TestConn).
func TestGroupUnknownMember(t *testing.T) {
	e := newEnv(t, testConfig())
	ids, gen := e.joinStable("u", "c1")
	if r := e.c.SyncGroup(bg, SyncRequest{Group: "u", Generation: gen, MemberID: "nobody"}); r.ErrorCode != kerr.UnknownMemberID.Code {
		t.Fatalf("sync = %+v", r)
	}
	if r := e.c.SyncGroup(bg, SyncRequest{Group: "no-such-group", Generation: 1, MemberID: "nobody"}); r.ErrorCode != kerr.UnknownMemberID.Code {
		t.Fatalf("sync unknown group = %+v", r)
	}
	if code := e.c.Heartbeat(bg, HeartbeatRequest{Group: "u", Generation: gen, MemberID: "nobody"}); code != kerr.UnknownMemberID.Code {
		t.Fatalf("heartbeat = %d", code)
	}
	top, codes := e.c.LeaveGroup(bg, "u", []LeaveMember{{MemberID: "nobody"}, {MemberID: ids[0]}})
	if top != 0 || codes[0] != kerr.UnknownMemberID.Code || codes[1] != 0 {
		t.Fatalf("leave = %d %v", top, codes)
	}
	top, codes = e.c.LeaveGroup(bg, "no-such-group", []LeaveMember{{MemberID: "x"}})
	if top != 0 || codes[0] != kerr.UnknownMemberID.Code {
		t.Fatalf("leave unknown group = %d %v", top, codes)
	}
	// The last member left: the group is Empty at the next generation.
	e.waitState("u", "Empty")
	if c := e.c.CommitOffsets(bg, CommitRequest{Group: "u", Generation: gen, MemberID: ids[0], RetentionMs: -1,
		Offsets: []CommitOffset{{TopicPartition: kafka.TopicPartition{Topic: "t", Partition: 0}, Offset: 1}}}); c[0] != kerr.UnknownMemberID.Code {
		t.Fatalf("commit by departed member = %v", c)
	}
	if r := e.c.JoinGroup(bg, consumerJoin("u", "stale-id", "c1")); r.ErrorCode != kerr.UnknownMemberID.Code {
		t.Fatalf("join with unknown id = %+v", r)
	}
	bad := consumerJoin("u", "", "c1")
	bad.SessionTimeoutMs = 1000
	if r := e.c.JoinGroup(bg, bad); r.ErrorCode != kerr.InvalidSessionTimeout.Code {
		t.Fatalf("short session timeout = %+v", r)
	}
	if r := e.c.JoinGroup(bg, consumerJoin("", "", "c1")); r.ErrorCode != kerr.InvalidGroupID.Code {
		t.Fatalf("empty group id = %+v", r)
	}
	other := consumerJoin("u2", "", "c1")
	e.joinAsync(other)
	e.waitMembers("u2", 1)
	other.ProtocolType = "connect"
	if r := e.c.JoinGroup(bg, other); r.ErrorCode != kerr.InconsistentGroupProtocol.Code {
		t.Fatalf("mismatched protocol type = %+v", r)
	}
}

// Kafka: a member that stops heartbeating is removed after its session
// timeout and the others rebalance; one that does not rejoin within the
// rebalance timeout is removed when the join completes.
func TestGroupSessionAndRebalanceTimeouts(t *testing.T) {
	e := newEnv(t, testConfig())
	const g = "timeouts"
	ids, gen := e.joinStable(g, "c1", "c2", "c3")

	// c1 and c2 heartbeat every 4s; c3 is silent. Session timeout is 10s.
	for i := 0; i < 2; i++ {
		e.advance(4*time.Second, g)
		for _, id := range ids[:2] {
			if code := e.c.Heartbeat(bg, HeartbeatRequest{Group: g, Generation: gen, MemberID: id}); code != 0 {
				t.Fatalf("heartbeat %d = %d", i, code)
			}
		}
	}
	e.advance(4*time.Second, g) // 12s since c3's last contact
	e.waitState(g, "PreparingRebalance")
	if d := e.c.DescribeGroup(bg, g); len(d.Members) != 2 {
		t.Fatalf("members after session expiry = %d", len(d.Members))
	}
	if code := e.c.Heartbeat(bg, HeartbeatRequest{Group: g, Generation: gen, MemberID: ids[2]}); code != kerr.UnknownMemberID.Code {
		t.Fatalf("expired member heartbeat = %d", code)
	}
	// Only c1 rejoins. c2 does not await a join, so its session timer
	// keeps running and removes it, which completes the join.
	j1 := e.joinAsync(consumerJoin(g, ids[0], "c1"))
	e.waitAwaiting(g, 1)
	pending(t, j1)
	e.advance(11*time.Second, g) // c2's session expires first
	r1 := recv(t, j1)
	if r1.ErrorCode != 0 || r1.Generation != gen+1 || len(r1.Members) != 1 {
		t.Fatalf("join after c2 expired = %+v", r1)
	}

	// Rebalance timeout: c1 keeps heartbeating but never rejoins after a
	// new member triggers a rebalance; the join completes after 60s
	// without it.
	res := e.c.SyncGroup(bg, SyncRequest{Group: g, Generation: r1.Generation, MemberID: ids[0],
		Assignments: map[string][]byte{ids[0]: {1}}})
	if res.ErrorCode != 0 {
		t.Fatalf("sync = %+v", res)
	}
	j4 := e.joinAsync(consumerJoin(g, "", "c4"))
	e.waitState(g, "PreparingRebalance")
	for i := 0; i < 7; i++ {
		e.advance(9*time.Second, g)
		code := e.c.Heartbeat(bg, HeartbeatRequest{Group: g, Generation: r1.Generation, MemberID: ids[0]})
		if i < 6 && code != kerr.RebalanceInProgress.Code {
			t.Fatalf("heartbeat %d during rebalance = %d", i, code)
		}
	}
	r4 := recv(t, j4)
	if r4.ErrorCode != 0 || len(r4.Members) != 1 || r4.LeaderID != r4.MemberID {
		t.Fatalf("join after rebalance timeout = %+v", r4)
	}
	if code := e.c.Heartbeat(bg, HeartbeatRequest{Group: g, Generation: r4.Generation, MemberID: ids[0]}); code != kerr.UnknownMemberID.Code {
		t.Fatalf("member dropped by rebalance timeout heartbeat = %d", code)
	}
}
