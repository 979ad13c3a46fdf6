package group

import (
	"errors"
	"fmt"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kerr"

	"samsa/internal/testwait"
	"samsa/kafka"
)

func tp(topic string, p int32) kafka.TopicPartition {
	return kafka.TopicPartition{Topic: topic, Partition: p}
}

func commit(off int64, topic string, p int32) CommitOffset {
	return CommitOffset{TopicPartition: tp(topic, p), Offset: off, LeaderEpoch: 3, Metadata: fmt.Sprintf("m%d", off)}
}

// Kafka: offsets commit to __consumer_offsets and survive a coordinator
// restart (the partition is replayed on becoming leader); a group's
// members come back Stable and must heartbeat within their session
// timeout. OffsetFetch for an unknown group answers -1 without error.
func TestGroupOffsetsCommitFetchReload(t *testing.T) {
	e := newEnv(t, testConfig())
	const g = "reload"
	ids, gen := e.joinStable(g, "c1", "c2")
	codes := e.c.CommitOffsets(bg, CommitRequest{Group: g, Generation: gen, MemberID: ids[1], RetentionMs: -1,
		Offsets: []CommitOffset{commit(10, "t1", 0), commit(20, "t1", 1)}})
	if codes[0] != 0 || codes[1] != 0 {
		t.Fatalf("commit = %v", codes)
	}
	// A simple (standalone) consumer group commits with generation -1.
	codes = e.c.CommitOffsets(bg, CommitRequest{Group: "simple", Generation: -1, RetentionMs: -1,
		Offsets: []CommitOffset{commit(7, "t2", 0)}})
	if codes[0] != 0 {
		t.Fatalf("simple commit = %v", codes)
	}
	// Too much metadata is refused per partition.
	big := commit(1, "t1", 2)
	big.Metadata = string(make([]byte, 5000))
	codes = e.c.CommitOffsets(bg, CommitRequest{Group: g, Generation: gen, MemberID: ids[0], RetentionMs: -1,
		Offsets: []CommitOffset{big, commit(11, "t1", 0)}})
	if codes[0] != kerr.OffsetMetadataTooLarge.Code || codes[1] != 0 {
		t.Fatalf("commit with big metadata = %v", codes)
	}
	// A commit for a group that no longer exists and a non-negative
	// generation is rejected.
	codes = e.c.CommitOffsets(bg, CommitRequest{Group: "gone", Generation: 4, MemberID: "x", RetentionMs: -1,
		Offsets: []CommitOffset{commit(1, "t", 0)}})
	if codes[0] != kerr.IllegalGeneration.Code {
		t.Fatalf("commit to unknown group = %v", codes)
	}

	check := func(when string) {
		t.Helper()
		code, offs := e.c.FetchOffsets(bg, g, []kafka.TopicPartition{tp("t1", 0), tp("t1", 1), tp("t1", 9)})
		if code != 0 || offs[0].Offset != 11 || offs[1].Offset != 20 || offs[1].Metadata != "m20" ||
			offs[1].LeaderEpoch != 3 || offs[2].Offset != -1 {
			t.Fatalf("%s: fetch = %d %+v", when, code, offs)
		}
		code, all := e.c.FetchOffsets(bg, g, nil)
		if code != 0 || len(all) != 2 || all[0].Partition != 0 || all[1].Partition != 1 {
			t.Fatalf("%s: fetch all = %d %+v", when, code, all)
		}
		if _, offs := e.c.FetchOffsets(bg, "simple", []kafka.TopicPartition{tp("t2", 0)}); offs[0].Offset != 7 {
			t.Fatalf("%s: simple fetch = %+v", when, offs)
		}
		code, offs = e.c.FetchOffsets(bg, "never-seen", []kafka.TopicPartition{tp("t1", 0)})
		if code != 0 || offs[0].Offset != -1 || offs[0].ErrorCode != 0 {
			t.Fatalf("%s: unknown group fetch = %d %+v", when, code, offs)
		}
	}
	check("before restart")

	e.restart()
	check("after restart")
	d := e.c.DescribeGroup(bg, g)
	if d.State != "Stable" || d.Protocol != "range" || len(d.Members) != 2 || d.Members[1].Assignment[0] != 1 {
		t.Fatalf("describe after restart = %+v", d)
	}
	if code := e.c.Heartbeat(bg, HeartbeatRequest{Group: g, Generation: gen, MemberID: ids[0]}); code != 0 {
		t.Fatalf("heartbeat after reload = %d", code)
	}
	// c2 never comes back: its session expires, c1 rejoins alone.
	e.advance(6*time.Second, g)
	e.c.Heartbeat(bg, HeartbeatRequest{Group: g, Generation: gen, MemberID: ids[0]})
	e.advance(5*time.Second, g)
	e.waitState(g, "PreparingRebalance")
	r := e.c.JoinGroup(bg, consumerJoin(g, ids[0], "c1"))
	if r.ErrorCode != 0 || r.Generation != gen+1 || len(r.Members) != 1 {
		t.Fatalf("rejoin after reload = %+v", r)
	}
	code2, list := e.c.ListGroups(nil)
	if code2 != 0 || len(list) != 2 || list[0].Group != g || list[0].State != "CompletingRebalance" || list[1].Group != "simple" || list[1].ProtocolType != "" {
		t.Fatalf("list = %d %+v", code2, list)
	}
	if _, list := e.c.ListGroups([]string{"Empty"}); len(list) != 1 || list[0].Group != "simple" {
		t.Fatalf("list Empty = %+v", list)
	}
}

// Kafka: requests for a partition this broker does not lead get
// NOT_COORDINATOR; while it loads, COORDINATOR_LOAD_IN_PROGRESS
// (Heartbeat answers blindly, SyncGroup says REBALANCE_IN_PROGRESS); on
// resignation, a waiting JoinGroup is answered NOT_COORDINATOR.
func TestGroupCoordinatorOwnership(t *testing.T) {
	e := newEnv(t, testConfig())
	const g = "owner"
	p := e.c.PartitionFor(g)
	j := e.joinAsync(consumerJoin(g, "", "c1"))
	e.waitMembers(g, 1)
	e.c.Resign(p, -1)
	if r := recv(t, j); r.ErrorCode != kerr.NotCoordinator.Code {
		t.Fatalf("pending join after resign = %+v", r)
	}
	if r := e.c.JoinGroup(bg, consumerJoin(g, "", "c1")); r.ErrorCode != kerr.NotCoordinator.Code {
		t.Fatalf("join after resign = %+v", r)
	}
	if code, _ := e.c.FetchOffsets(bg, g, nil); code != kerr.NotCoordinator.Code {
		t.Fatalf("fetch after resign = %d", code)
	}
	// Hold the load: the log fails reads until released.
	gate := make(chan struct{})
	e.c.Shutdown()
	e.c = NewCoordinator(Options{Config: e.cfg, Log: &gatedLog{OffsetLog: e.olog, gate: gate}, Clock: e.clock})
	e.c.BecomeLeader(p, 1)
	if r := e.c.JoinGroup(bg, consumerJoin(g, "", "c1")); r.ErrorCode != kerr.CoordinatorLoadInProgress.Code {
		t.Fatalf("join while loading = %+v", r)
	}
	if code := e.c.Heartbeat(bg, HeartbeatRequest{Group: g, Generation: 1, MemberID: "m"}); code != 0 {
		t.Fatalf("heartbeat while loading = %d", code)
	}
	if r := e.c.SyncGroup(bg, SyncRequest{Group: g, Generation: 1, MemberID: "m"}); r.ErrorCode != kerr.RebalanceInProgress.Code {
		t.Fatalf("sync while loading = %+v", r)
	}
	close(gate)
	testwait.For(t, 10*time.Second, func() error {
		if _, loading := e.c.Owned(p); loading {
			return errors.New("still loading")
		}
		return nil
	})
	// A stale resignation (older epoch) is ignored.
	e.c.Resign(p, 0)
	if owned, _ := e.c.Owned(p); !owned {
		t.Fatal("stale resignation unloaded the partition")
	}
	if code, _ := e.c.FetchOffsets(bg, g, nil); code != 0 {
		t.Fatalf("fetch after load = %d", code)
	}
	// Append failures map to Kafka's codes.
	e.olog.mu.Lock()
	e.olog.failNext = fmt.Errorf("wrapped: %w", ErrNotLeader)
	e.olog.mu.Unlock()
	codes := e.c.CommitOffsets(bg, CommitRequest{Group: g, Generation: -1, RetentionMs: -1, Offsets: []CommitOffset{commit(1, "t", 0)}})
	if codes[0] != kerr.NotCoordinator.Code {
		t.Fatalf("commit with not-leader log = %v", codes)
	}
	if _, offs := e.c.FetchOffsets(bg, g, []kafka.TopicPartition{tp("t", 0)}); offs[0].Offset != -1 {
		t.Fatalf("failed commit became visible: %+v", offs)
	}
}

// gatedLog blocks reads until gate is closed.
type gatedLog struct {
	OffsetLog
	gate chan struct{}
}

func (l *gatedLog) ReadFrom(p int32, off int64, max int) (ReadResult, error) {
	<-l.gate
	return l.OffsetLog.ReadFrom(p, off, max)
}

// Kafka (KIP-345): a static member that rejoins with a new member id
// while the group is Stable replaces its old id without a rebalance; the
// old id is fenced. LeaveGroup by instance id alone removes it.
func TestGroupStaticMembership(t *testing.T) {
	e := newEnv(t, testConfig())
	const g = "static"
	req := consumerJoin(g, "", "c1")
	req.GroupInstanceID = "instance-1"
	j := e.joinAsync(req)
	e.waitMembers(g, 1)
	e.advance(3*time.Second, g)
	r := recv(t, j)
	if r.ErrorCode != 0 {
		t.Fatalf("join = %+v", r)
	}
	s := e.c.SyncGroup(bg, SyncRequest{Group: g, Generation: r.Generation, MemberID: r.MemberID, GroupInstanceID: "instance-1",
		Assignments: map[string][]byte{r.MemberID: []byte("x")}})
	if s.ErrorCode != 0 {
		t.Fatalf("sync = %+v", s)
	}
	// Restarted client: same instance id, no member id.
	r2 := e.c.JoinGroup(bg, req)
	if r2.ErrorCode != 0 || r2.MemberID == r.MemberID || r2.Generation != r.Generation || r2.LeaderID != r.MemberID {
		t.Fatalf("static rejoin = %+v (old %+v)", r2, r)
	}
	if st := e.state(g); st != "Stable" {
		t.Fatalf("state after static rejoin = %s", st)
	}
	if code := e.c.Heartbeat(bg, HeartbeatRequest{Group: g, Generation: r.Generation, MemberID: r.MemberID, GroupInstanceID: "instance-1"}); code != kerr.FencedInstanceID.Code {
		t.Fatalf("old id heartbeat = %d", code)
	}
	sr := e.c.SyncGroup(bg, SyncRequest{Group: g, Generation: r2.Generation, MemberID: r2.MemberID, GroupInstanceID: "instance-1"})
	if sr.ErrorCode != 0 || string(sr.Assignment) != "x" {
		t.Fatalf("new id sync = %+v", sr)
	}
	top, codes := e.c.LeaveGroup(bg, g, []LeaveMember{{GroupInstanceID: "instance-1"}})
	if top != 0 || codes[0] != 0 {
		t.Fatalf("leave by instance id = %d %v", top, codes)
	}
	e.waitState(g, "Empty")
}

// Kafka: DeleteGroups refuses non-empty groups and deletes empty ones
// with tombstones; OffsetDelete refuses topics the group subscribes to.
// Both survive a reload.
func TestGroupDeleteGroupsAndOffsets(t *testing.T) {
	e := newEnv(t, testConfig())
	const g = "del"
	ids, gen := e.joinStable(g, "c1")
	codes := e.c.CommitOffsets(bg, CommitRequest{Group: g, Generation: gen, MemberID: ids[0], RetentionMs: -1,
		Offsets: []CommitOffset{commit(1, "t1", 0), commit(2, "other", 0)}})
	if codes[0] != 0 || codes[1] != 0 {
		t.Fatalf("commit = %v", codes)
	}
	if got := e.c.DeleteGroups(bg, []string{g, "missing"}); got[0] != kerr.NonEmptyGroup.Code || got[1] != kerr.GroupIDNotFound.Code {
		t.Fatalf("delete = %v", got)
	}
	res := e.c.DeleteOffsets(bg, g, []kafka.TopicPartition{tp("t1", 0), tp("other", 0)})
	if res.ErrorCode != 0 || res.Codes[0] != kerr.GroupSubscribedToTopic.Code || res.Codes[1] != 0 {
		t.Fatalf("offset delete = %+v", res)
	}
	e.restart()
	if _, offs := e.c.FetchOffsets(bg, g, []kafka.TopicPartition{tp("t1", 0), tp("other", 0)}); offs[0].Offset != 1 || offs[1].Offset != -1 {
		t.Fatalf("offsets after OffsetDelete and reload = %+v", offs)
	}
	top, lc := e.c.LeaveGroup(bg, g, []LeaveMember{{MemberID: ids[0]}})
	if top != 0 || lc[0] != 0 {
		t.Fatalf("leave = %d %v", top, lc)
	}
	e.waitState(g, "Empty")
	if got := e.c.DeleteGroups(bg, []string{g}); got[0] != 0 {
		t.Fatalf("delete empty = %v", got)
	}
	testwait.For(t, 10*time.Second, func() error {
		if _, list := e.c.ListGroups(nil); len(list) != 0 {
			return fmt.Errorf("groups listed after delete: %+v", list)
		}
		return nil
	})
	e.restart()
	if d := e.c.DescribeGroup(bg, g); d.State != "Dead" || d.ErrorCode != 0 {
		t.Fatalf("describe deleted group after reload = %+v", d)
	}
	if _, offs := e.c.FetchOffsets(bg, g, []kafka.TopicPartition{tp("t1", 0)}); offs[0].Offset != -1 {
		t.Fatalf("offsets of deleted group after reload = %+v", offs)
	}
}

// Kafka 2.8 (KIP-211): offsets of an Empty group expire
// offsets.retention.minutes after the group became empty; then the group
// itself is removed. Standalone groups expire per commit timestamp, and
// OffsetCommit v2-v4 retention_time_ms sets an explicit expiry.
func TestGroupOffsetExpiry(t *testing.T) {
	cfg := testConfig()
	cfg.OffsetsRetention = time.Hour
	cfg.OffsetsRetentionCheck = 10 * time.Minute
	e := newEnv(t, cfg)
	codes := e.c.CommitOffsets(bg, CommitRequest{Group: "a", Generation: -1, RetentionMs: -1, Offsets: []CommitOffset{commit(1, "t", 0)}})
	codes2 := e.c.CommitOffsets(bg, CommitRequest{Group: "b", Generation: -1, RetentionMs: int64((20 * time.Minute).Milliseconds()), Offsets: []CommitOffset{commit(1, "t", 0)}})
	if codes[0] != 0 || codes2[0] != 0 {
		t.Fatalf("commits = %v %v", codes, codes2)
	}
	e.advance(10*time.Minute, "a", "b")
	e.advance(10*time.Minute, "a", "b") // b's explicit 20 minutes passed
	testwait.For(t, 10*time.Second, func() error {
		if _, list := e.c.ListGroups(nil); len(list) != 1 || list[0].Group != "a" {
			return fmt.Errorf("groups = %+v", list)
		}
		return nil
	})
	for i := 0; i < 4; i++ {
		e.advance(10*time.Minute, "a")
	}
	testwait.For(t, 10*time.Second, func() error {
		if _, list := e.c.ListGroups(nil); len(list) != 0 {
			return fmt.Errorf("groups = %+v", list)
		}
		return nil
	})
	e.restart()
	if _, offs := e.c.FetchOffsets(bg, "a", []kafka.TopicPartition{tp("t", 0)}); offs[0].Offset != -1 {
		t.Fatalf("expired offset after reload = %+v", offs)
	}
}
