package group

import (
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/sirupsen/logrus"
	"github.com/twmb/franz-go/pkg/kerr"

	"samsa/internal/testwait"
)

// syncAll sends every member's SyncGroup (the leader's with an
// assignment) and waits for Stable.
func (e *env) syncAll(group string, gen int32, leader string, ids ...string) {
	e.t.Helper()
	assign := map[string][]byte{}
	for _, id := range ids {
		assign[id] = []byte(id)
	}
	var chs []<-chan SyncResult
	for _, id := range ids {
		req := SyncRequest{Group: group, Generation: gen, MemberID: id}
		if id == leader {
			req.Assignments = assign
		}
		chs = append(chs, e.syncAsync(req))
	}
	for _, ch := range chs {
		if r := recv(e.t, ch); r.ErrorCode != 0 {
			e.t.Fatalf("sync: %+v", r)
		}
	}
	e.waitState(group, "Stable")
}

// A client that keeps missing the rebalance timeout while it heartbeats
// (a consumer processing slower than max.poll.interval.ms) is dropped
// from each join and rejoins with a new member id, starting the next
// rebalance: every rebalance is recorded with its reason, and once more
// than StormCount start within the window the coordinator logs one WARN
// naming the client and the likely cause.
func TestGroupRebalanceStormMaxPoll(t *testing.T) {
	cfg := testConfig()
	cfg.StormCount = 4
	e := newEnv(t, cfg)
	const g = "storm"
	fastReq, slowReq := consumerJoin(g, "", "fast"), consumerJoin(g, "", "slow")
	fastReq.RebalanceTimeoutMs, slowReq.RebalanceTimeoutMs = 5000, 5000
	rf, rs := e.joinTwo(g, fastReq, slowReq)
	fast, slow, gen := rf.MemberID, rs.MemberID, rf.Generation
	e.syncAll(g, gen, fast, fast, slow)
	var slowIDs []string
	for cycle := 0; cycle < 3; cycle++ {
		var slowID string
		slowID, slow, gen = e.stormCycle(cycle, fastReq, slowReq, fast, slow, gen)
		slowIDs = append(slowIDs, slowID)
	}
	var gr GroupRebalances
	for _, x := range e.c.Rebalances() {
		if x.Group == g {
			gr = x
		}
	}
	if gr.Counts[ReasonMaxPollExpired] != 3 || gr.Counts[ReasonMetadataChanged] != 3 || gr.Counts[ReasonMemberJoined] != 1 {
		t.Fatalf("counts = %v", gr.Counts)
	}
	if gr.Storm == nil || gr.Storm.ClientID != "slow" || gr.Storm.Kind != ReasonMaxPollExpired || gr.Storm.Times != 3 {
		t.Fatalf("storm = %+v", gr.Storm)
	}
	if len(gr.History) != cfg.HistorySize && len(gr.History) != 7 {
		t.Fatalf("history has %d entries", len(gr.History))
	}
	e.checkStormLogs(g, slowIDs[1])
	// The storm ends once the window has no more than StormCount starts.
	e.advance(cfg.StormWindow, g)
	for _, x := range e.c.Rebalances() {
		if x.Group == g && x.Storm != nil {
			t.Fatalf("storm still reported after the window: %+v", x.Storm)
		}
	}
}

// Options.OnRebalance sees every rebalance with its kind as it starts, and
// Options.OnGroupGone the group once it is deleted.
func TestGroupRebalanceHooks(t *testing.T) {
	e := newEnv(t, testConfig())
	const g = "hooks"
	ids, _ := e.joinStable(g, "c1")
	if code, _ := e.c.LeaveGroup(bg, g, []LeaveMember{{MemberID: ids[0]}}); code != 0 {
		t.Fatalf("leave = %d", code)
	}
	e.waitState(g, "Empty")
	if got := e.c.DeleteGroups(bg, []string{g}); got[0] != 0 {
		t.Fatalf("delete = %d", got[0])
	}
	testwait.For(t, 10*time.Second, func() error {
		h := e.hooks()
		want := []string{"rebalance hooks member_joined", "rebalance hooks member_left", "gone hooks"}
		if strings.Join(h, "|") != strings.Join(want, "|") {
			return fmt.Errorf("hook events %q, want %q", h, want)
		}
		return nil
	})
}

// Each trigger gets its KIP-800 kind and Kafka's sentence: a changed
// subscription (metadata_changed), the leader rejoining a Stable group
// (metadata_changed), LeaveGroup (member_left), a session expiry
// (session_expired), a static member replaced with other protocols
// (static_member_replaced).
func TestGroupRebalanceReasons(t *testing.T) {
	e := newEnv(t, testConfig())
	const g = "reasons"
	ids, gen := e.joinStable(g, "c1", "c2")
	check := func(kind ReasonKind, member, text string) {
		t.Helper()
		r := e.lastRebalance(g)
		if r.Kind != kind || r.MemberID != member || r.Reason != text {
			t.Fatalf("rebalance = %+v, want %s by %s: %q", r, kind, member, text)
		}
	}
	// c2 changes its subscription.
	c2 := consumerJoin(g, ids[1], "c2")
	c2.Protocols = []Protocol{{Name: "range", Metadata: subscription("t1", "t2")}}
	j2 := e.joinAsync(c2)
	e.waitState(g, "PreparingRebalance")
	check(ReasonMetadataChanged, ids[1], "Updating metadata for member "+ids[1]+" during Stable")
	j1 := e.joinAsync(consumerJoin(g, ids[0], "c1"))
	r1, r2 := recv(t, j1), recv(t, j2)
	gen = r1.Generation
	e.syncAll(g, gen, r1.LeaderID, r1.MemberID, r2.MemberID)
	// The leader rejoins with the same metadata.
	j1 = e.joinAsync(consumerJoin(g, ids[0], "c1"))
	e.waitState(g, "PreparingRebalance")
	check(ReasonMetadataChanged, ids[0], "Leader "+ids[0]+" re-joining group during Stable")
	j2 = e.joinAsync(c2)
	r1, r2 = recv(t, j1), recv(t, j2)
	gen = r1.Generation
	e.syncAll(g, gen, r1.LeaderID, r1.MemberID, r2.MemberID)
	// c2 leaves.
	if code, _ := e.c.LeaveGroup(bg, g, []LeaveMember{{MemberID: ids[1]}}); code != 0 {
		t.Fatalf("leave = %d", code)
	}
	check(ReasonMemberLeft, ids[1], "Removing member "+ids[1]+" on LeaveGroup")
	r1 = e.c.JoinGroup(bg, consumerJoin(g, ids[0], "c1"))
	e.syncAll(g, r1.Generation, ids[0], ids[0])
	// c3 joins and never heartbeats: its session (10 s) expires while
	// c1 keeps heartbeating.
	j3 := e.joinAsync(consumerJoin(g, "", "c3"))
	e.waitState(g, "PreparingRebalance")
	j1 = e.joinAsync(consumerJoin(g, ids[0], "c1"))
	r1, r3 := recv(t, j1), recv(t, j3)
	e.syncAll(g, r1.Generation, ids[0], ids[0], r3.MemberID)
	for i := 0; i < 3; i++ {
		e.advance(4*time.Second, g)
		if code := e.c.Heartbeat(bg, HeartbeatRequest{Group: g, Generation: r1.Generation, MemberID: ids[0]}); code != 0 && i < 2 {
			t.Fatalf("heartbeat = %d", code)
		}
	}
	e.waitState(g, "PreparingRebalance")
	check(ReasonSessionExpired, r3.MemberID, "removing member "+r3.MemberID+" on heartbeat expiration")

	// A static member rejoining with a new id and other protocols.
	const h = "reasons-static"
	s1 := consumerJoin(h, "", "s1")
	s1.GroupInstanceID = "i-1"
	js := e.joinAsync(s1)
	e.waitMembers(h, 1)
	e.advance(3*time.Second, h)
	rs := recv(t, js)
	e.syncAll(h, rs.Generation, rs.MemberID, rs.MemberID)
	s1.Protocols = []Protocol{{Name: "roundrobin", Metadata: subscription("t1")}}
	if r := recv(t, e.joinAsync(s1)); r.ErrorCode != 0 || r.Protocol != "roundrobin" {
		t.Fatalf("static rejoin = %+v", r)
	}
	var last Rebalance
	for _, x := range e.c.Rebalances() {
		if x.Group == h {
			last = x.History[len(x.History)-1]
		}
	}
	if last.Kind != ReasonStaticReplaced || last.GroupInstanceID != "i-1" ||
		!strings.HasPrefix(last.Reason, "Group's selectedProtocol will change because static member ") {
		t.Fatalf("static rebalance = %+v", last)
	}
}

// stormCycle is one round of TestGroupRebalanceStormMaxPoll on group
// "storm": the leader fast rejoins, slow misses the 5 s rebalance timeout
// while heartbeating and is dropped, then rejoins with a new member id.
// It returns slow's dropped and new member ids and the new generation.
func (e *env) stormCycle(cycle int, fastReq, slowReq JoinRequest, fast, slow string, gen int32) (dropped, newSlow string, newGen int32) {
	e.t.Helper()
	const g = "storm"
	// The leader rejoins (a metadata refresh); slow is busy: it
	// heartbeats but does not rejoin within 5 s.
	fr := fastReq
	fr.MemberID = fast
	jf := e.joinAsync(fr)
	e.waitState(g, "PreparingRebalance")
	for i := 0; i < 2; i++ {
		e.advance(2*time.Second, g)
		if code := e.c.Heartbeat(bg, HeartbeatRequest{Group: g, Generation: gen, MemberID: slow}); code != kerr.RebalanceInProgress.Code {
			e.t.Fatalf("cycle %d: slow heartbeat = %d", cycle, code)
		}
	}
	e.advance(time.Second, g)
	r := recv(e.t, jf)
	if r.ErrorCode != 0 || len(r.Members) != 1 {
		e.t.Fatalf("cycle %d: join without slow = %+v", cycle, r)
	}
	gen = r.Generation
	e.syncAll(g, gen, fast, fast)
	if code := e.c.Heartbeat(bg, HeartbeatRequest{Group: g, Generation: gen - 1, MemberID: slow}); code != kerr.UnknownMemberID.Code {
		e.t.Fatalf("cycle %d: dropped member heartbeat = %d", cycle, code)
	}
	dropped = slow
	// slow comes back as a new member: the rebalance it starts is
	// blamed on the poll interval.
	js := e.joinAsync(slowReq)
	e.waitState(g, "PreparingRebalance")
	if last := e.lastRebalance(g); last.Kind != ReasonMaxPollExpired || last.ClientID != "slow" {
		e.t.Fatalf("cycle %d: rebalance record = %+v", cycle, last)
	}
	jf = e.joinAsync(fr)
	r, r2 := recv(e.t, jf), recv(e.t, js)
	if r.ErrorCode != 0 || r2.ErrorCode != 0 {
		e.t.Fatalf("cycle %d: rejoin %+v / %+v", cycle, r, r2)
	}
	slow, gen = r2.MemberID, r.Generation
	e.syncAll(g, gen, fast, fast, slow)
	return dropped, slow, gen
}

// checkStormLogs checks the storm test's log: one WARN for group g's storm
// naming slow's member id slowID, and every rebalance logged once at INFO.
func (e *env) checkStormLogs(g, slowID string) {
	e.t.Helper()
	var warns []string
	for _, en := range e.logs.AllEntries() {
		if en.Level == logrus.WarnLevel && strings.Contains(en.Message, "rebalance storm") {
			warns = append(warns, en.Message)
			if en.Data["group"] != g || en.Data["client_id"] != "slow" || en.Data["component"] != "group" {
				e.t.Fatalf("storm WARN fields = %v", en.Data)
			}
		}
	}
	// Logged once, at the fifth rebalance (the one slow's second rejoin
	// started), naming the member id it had before that removal.
	want := "5 rebalances within 10m0s; member " + slowID + " (client.id slow, host /127.0.0.1) " +
		"exceeded max.poll.interval.ms (the rebalance timeout) while still heartbeating 2 times: processing slower than the poll interval"
	if len(warns) != 1 || !strings.Contains(warns[0], want) {
		e.t.Fatalf("storm WARNs = %q, want one containing %q", warns, want)
	}
	// Every rebalance was logged once at INFO with its generation and reason.
	n := 0
	for _, en := range e.logs.AllEntries() {
		if en.Message == "group: preparing to rebalance" && en.Data["group"] == g {
			if en.Data["reason"] == "" || en.Data["generation"] == nil {
				e.t.Fatalf("INFO without reason: %v", en.Data)
			}
			n++
		}
	}
	if n != 7 {
		e.t.Fatalf("%d rebalance INFO lines, want 7", n)
	}
}
