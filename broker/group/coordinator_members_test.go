package group

import (
	"bytes"
	"fmt"
	"runtime"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kerr"

	"samsa/internal/testwait"
)

// Kafka: group.max.size refuses new members once the group is full
// (GROUP_MAX_SIZE_REACHED); existing members still rejoin.
func TestGroupMaxSize(t *testing.T) {
	cfg := testConfig()
	cfg.MaxSize = 2
	e := newEnv(t, cfg)
	ids, gen := e.joinStable("full", "c1", "c2")
	if r := e.c.JoinGroup(bg, consumerJoin("full", "", "c3")); r.ErrorCode != kerr.GroupMaxSizeReached.Code {
		t.Fatalf("third member = %+v", r)
	}
	// The leader rejoining (a rebalance) is accepted.
	j := e.joinAsync(consumerJoin("full", ids[0], "c1"))
	e.waitState("full", "PreparingRebalance")
	if r := e.c.JoinGroup(bg, consumerJoin("full", ids[1], "c2")); r.ErrorCode != 0 || r.Generation != gen+1 {
		t.Fatalf("rejoin = %+v", r)
	}
	if r := recv(t, j); r.ErrorCode != 0 {
		t.Fatalf("leader rejoin = %+v", r)
	}
}

// Kafka (KIP-394): a pending member id that never comes back does not hold
// the rebalance past its session timeout; LeaveGroup of a pending id
// succeeds.
func TestGroupPendingMembers(t *testing.T) {
	e := newEnv(t, testConfig())
	ids, gen := e.joinStable("pend", "c1")
	req := consumerJoin("pend", "", "c2")
	req.RequireKnownMember = true
	r := e.c.JoinGroup(bg, req)
	if r.ErrorCode != kerr.MemberIDRequired.Code {
		t.Fatalf("join = %+v", r)
	}
	// c1 rejoins (leader rejoin triggers a rebalance), but the pending id
	// keeps the join open until it expires after c2's session timeout.
	j := e.joinAsync(consumerJoin("pend", ids[0], "c1"))
	e.waitAwaiting("pend", 1)
	pending(t, j)
	e.advance(10*time.Second, "pend")
	if r := recv(t, j); r.ErrorCode != 0 || r.Generation != gen+1 || len(r.Members) != 1 {
		t.Fatalf("join after pending expiry = %+v", r)
	}
	// A second pending id leaves explicitly.
	r = e.c.JoinGroup(bg, req)
	top, codes := e.c.LeaveGroup(bg, "pend", []LeaveMember{{MemberID: r.MemberID}})
	if top != 0 || codes[0] != 0 {
		t.Fatalf("leave pending = %d %v", top, codes)
	}
	if r2 := e.c.JoinGroup(bg, func() JoinRequest { q := req; q.MemberID = r.MemberID; return q }()); r2.ErrorCode != kerr.UnknownMemberID.Code {
		t.Fatalf("join with id after leaving = %+v", r2)
	}
}

// Kafka (KIP-345): a static member rejoining with a new id while the group
// is CompletingRebalance forces another rebalance, so the assignment never
// names the replaced id.
func TestGroupStaticRejoinDuringCompletingRebalance(t *testing.T) {
	e := newEnv(t, testConfig())
	const g = "static-cr"
	a := consumerJoin(g, "", "c1")
	a.GroupInstanceID = "ia"
	b := consumerJoin(g, "", "c2")
	b.GroupInstanceID = "ib"
	ra, rb := e.joinPair(g, a, b)
	if ra.ErrorCode != 0 || rb.ErrorCode != 0 || e.state(g) != "CompletingRebalance" {
		t.Fatalf("joins = %+v %+v", ra, rb)
	}
	// b restarts before the leader syncs.
	jb2 := e.joinAsync(b)
	e.waitState(g, "PreparingRebalance")
	if s := e.c.SyncGroup(bg, SyncRequest{Group: g, Generation: ra.Generation, MemberID: rb.MemberID, GroupInstanceID: "ib"}); s.ErrorCode != kerr.FencedInstanceID.Code {
		t.Fatalf("sync by replaced id = %+v", s)
	}
	ra2 := e.c.JoinGroup(bg, func() JoinRequest { q := a; q.MemberID = ra.MemberID; return q }())
	rb2 := recv(t, jb2)
	if ra2.ErrorCode != 0 || rb2.ErrorCode != 0 || ra2.Generation != ra.Generation+1 || len(ra2.Members) != 2 {
		t.Fatalf("rejoins = %+v / %+v", ra2, rb2)
	}
	for _, m := range ra2.Members {
		if m.MemberID == rb.MemberID {
			t.Fatal("replaced member id still in the group")
		}
	}
}

// Assignor metadata and assignments are opaque bytes (range, roundrobin,
// sticky and cooperative-sticky all run client-side); the leader sees each
// member's metadata for the chosen protocol exactly as sent.
func TestGroupOpaqueProtocolMetadata(t *testing.T) {
	e := newEnv(t, testConfig())
	const g = "opaque"
	mk := func(client string, meta []byte) JoinRequest {
		r := consumerJoin(g, "", client)
		r.Protocols = []Protocol{{Name: "cooperative-sticky", Metadata: meta}, {Name: "range", Metadata: []byte("r")}}
		return r
	}
	m1, m2 := []byte{0, 1, 0xff, 0, 'x'}, []byte{}
	r1, r2 := e.joinPair(g, mk("c1", m1), mk("c2", m2))
	leader, _ := leaderFirst(r1, r2)
	if leader.Protocol != "cooperative-sticky" || len(leader.Members) != 2 {
		t.Fatalf("leader = %+v", leader)
	}
	got := map[string][]byte{}
	for _, m := range leader.Members {
		got[m.MemberID] = m.Metadata
	}
	if !bytes.Equal(got[r1.MemberID], m1) || !bytes.Equal(got[r2.MemberID], m2) {
		t.Fatalf("metadata = %x / %x", got[r1.MemberID], got[r2.MemberID])
	}
}

// Many members join at once, half leave, the rest rebalance; Shutdown
// then leaves no goroutine behind.
func TestGroupManyMembersAndShutdown(t *testing.T) {
	before := runtime.NumGoroutine()
	e := &env{t: t, clock: newManualClock(), olog: newStorageOffsetLog(t.TempDir()), cfg: testConfig()}
	e.start()
	defer e.olog.Close()
	const g, n = "many", 20
	clients := make([]string, n)
	for i := range clients {
		clients[i] = fmt.Sprintf("c%d", i)
	}
	ids, gen := e.joinStable(g, clients...)
	var leave []LeaveMember
	for _, id := range ids[n/2:] {
		leave = append(leave, LeaveMember{MemberID: id})
	}
	top, codes := e.c.LeaveGroup(bg, g, leave)
	if top != 0 || len(codes) != n/2 {
		t.Fatalf("leave = %d %v", top, codes)
	}
	chs := make([]<-chan JoinResult, n/2)
	for i, id := range ids[:n/2] {
		chs[i] = e.joinAsync(consumerJoin(g, id, clients[i]))
	}
	for i, ch := range chs {
		if r := recv(t, ch); r.ErrorCode != 0 || r.Generation != gen+1 {
			t.Fatalf("rejoin %d = %+v", i, r)
		}
	}
	// Other groups in other partitions, one parked in a JoinGroup.
	for i := 0; i < 10; i++ {
		e.c.CommitOffsets(bg, CommitRequest{Group: fmt.Sprintf("o%d", i), Generation: -1, RetentionMs: -1,
			Offsets: []CommitOffset{commit(1, "t", 0)}})
	}
	parked := e.joinAsync(consumerJoin("parked", "", "p"))
	e.waitMembers("parked", 1)
	e.c.Shutdown()
	if r := recv(t, parked); r.ErrorCode != kerr.NotCoordinator.Code {
		t.Fatalf("parked join after shutdown = %+v", r)
	}
	if r := e.c.JoinGroup(bg, consumerJoin(g, "", "late")); r.ErrorCode != kerr.CoordinatorNotAvailable.Code {
		t.Fatalf("join after shutdown = %+v", r)
	}
	testwait.For(t, 10*time.Second, func() error {
		if now := runtime.NumGoroutine(); now > before {
			return fmt.Errorf("%d goroutines, %d before", now, before)
		}
		return nil
	})
}
