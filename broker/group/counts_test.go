package group

import (
	"fmt"
	"testing"
	"time"

	"github.com/sirupsen/logrus"
	logtest "github.com/sirupsen/logrus/hooks/test"

	"samsa/internal/testwait"
)

// TestGroupCounts: Counts reports the groups, their committed offsets and
// their states (Kafka's GroupMetadataManager NumGroups, NumOffsets,
// NumGroups<State>), also after a reload from __consumer_offsets.
func TestGroupCounts(t *testing.T) {
	e := newEnv(t, testConfig())
	if n := e.c.Counts(); n != (Counts{}) {
		t.Fatalf("counts of an idle coordinator %+v", n)
	}
	ids, gen := e.joinStable("members", "c1", "c2")
	if codes := e.c.CommitOffsets(bg, CommitRequest{Group: "members", Generation: gen, MemberID: ids[0], RetentionMs: -1,
		Offsets: []CommitOffset{commit(10, "t1", 0), commit(20, "t1", 1)}}); codes[0] != 0 || codes[1] != 0 {
		t.Fatalf("commit = %v", codes)
	}
	if codes := e.c.CommitOffsets(bg, CommitRequest{Group: "simple", Generation: -1, RetentionMs: -1,
		Offsets: []CommitOffset{commit(7, "t2", 0)}}); codes[0] != 0 {
		t.Fatalf("simple commit = %v", codes)
	}
	want := Counts{Groups: 2, Offsets: 3, Empty: 1, Stable: 1}
	check := func(when string) {
		t.Helper()
		// The count is published right after the commit's completion event.
		testwait.For(t, 10*time.Second, func() error {
			if n := e.c.Counts(); n != want {
				return fmt.Errorf("%s: counts %+v, want %+v", when, n, want)
			}
			return nil
		})
	}
	check("after the commits")
	e.restart()
	check("after the reload")
}

// TestGroupLeaveLogsReason: a member leaving through LeaveGroup is logged
// with a reason field, also when an admin removes a static member by its
// group.instance.id (KIP-345).
func TestGroupLeaveLogsReason(t *testing.T) {
	e := newEnv(t, testConfig())
	hook := logtest.NewLocal(e.c.log.(*logrus.Entry).Logger)
	e.c.log.(*logrus.Entry).Logger.SetLevel(logrus.InfoLevel)
	ids, _ := e.joinStable("leaving", "c1", "c2")
	code, codes := e.c.LeaveGroup(bg, "leaving", []LeaveMember{{MemberID: ids[1]}})
	if code != 0 || codes[0] != 0 {
		t.Fatalf("leave = %d %v", code, codes)
	}
	var reason string
	for _, en := range hook.AllEntries() {
		if en.Message == "group: member left the group through LeaveGroup" && en.Data["member"] == ids[1] {
			reason, _ = en.Data["reason"].(string)
		}
	}
	if reason != reasonLeaveGroup {
		t.Fatalf("leave reason %q, want %q", reason, reasonLeaveGroup)
	}
}
