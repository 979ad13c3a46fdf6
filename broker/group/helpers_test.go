package group

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"sort"
	"sync"
	"testing"
	"time"

	"github.com/sirupsen/logrus"
	logtest "github.com/sirupsen/logrus/hooks/test"
	"github.com/twmb/franz-go/pkg/kbin"

	"samsa/broker/record"
	"samsa/broker/storage"
	"samsa/internal/testwait"
	"samsa/kafka"
)

// manualClock is a Clock that moves only when a test calls Advance. Due
// timers fire in deadline order on the caller's goroutine.
type manualClock struct {
	mu     sync.Mutex
	now    time.Time
	timers []*manualTimer
}

type manualTimer struct {
	c    *manualClock
	when time.Time
	f    func()
	done bool // guarded by c.mu
}

func newManualClock() *manualClock {
	return &manualClock{now: time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)}
}

func (c *manualClock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.now
}

func (c *manualClock) AfterFunc(d time.Duration, f func()) Timer {
	c.mu.Lock()
	defer c.mu.Unlock()
	t := &manualTimer{c: c, when: c.now.Add(d), f: f}
	c.timers = append(c.timers, t)
	return t
}

func (t *manualTimer) Stop() bool {
	t.c.mu.Lock()
	defer t.c.mu.Unlock()
	was := !t.done
	t.done = true
	return was
}

// Advance moves time forward by d and fires every timer now due.
func (c *manualClock) Advance(d time.Duration) {
	c.mu.Lock()
	c.now = c.now.Add(d)
	var due []*manualTimer
	keep := c.timers[:0]
	for _, t := range c.timers {
		switch {
		case t.done:
		case !t.when.After(c.now):
			t.done = true
			due = append(due, t)
		default:
			keep = append(keep, t)
		}
	}
	c.timers = keep
	c.mu.Unlock()
	sort.SliceStable(due, func(i, j int) bool { return due[i].when.Before(due[j].when) })
	// Run synchronously, in deadline order, so that a test knows every
	// due timer has handed its work over when Advance returns.
	for _, t := range due {
		t.f()
	}
}

// storageOffsetLog is an OffsetLog over real storage.Logs in a directory,
// one per offsets partition, with a high watermark that follows the log
// end (a single replica).
type storageOffsetLog struct {
	dir string
	mu  sync.Mutex
	// guarded by mu
	logs     map[int32]*storage.Log
	failNext error
}

func newStorageOffsetLog(dir string) *storageOffsetLog {
	return &storageOffsetLog{dir: dir, logs: map[int32]*storage.Log{}}
}

func (s *storageOffsetLog) log(p int32) (*storage.Log, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if l := s.logs[p]; l != nil {
		return l, nil
	}
	cfg := storage.DefaultConfig()
	cfg.CleanupPolicy = storage.CleanupCompact
	cfg.SegmentBytes = 1 << 20
	tp := kafka.TopicPartition{Topic: "__consumer_offsets", Partition: p}
	l, err := storage.OpenLog(storage.LogOptions{Dir: filepath.Join(s.dir, fmt.Sprintf("__consumer_offsets-%d", p)), TP: tp, Config: cfg})
	if err != nil {
		return nil, err
	}
	s.logs[p] = l
	return l, nil
}

// appendMarker writes a COMMIT or ABORT marker for pid the way a partition leader's
// WriteTxnMarkers does (coordinator epoch 1) and moves the high watermark over it.
func (s *storageOffsetLog) appendMarker(p int32, pid int64, epoch int16, commit bool) error {
	l, err := s.log(p)
	if err != nil {
		return err
	}
	if _, err := l.AppendEndTxnMarker(pid, epoch, record.EndTxnMarker{Commit: commit, CoordinatorEpoch: 1}, 0); err != nil {
		return err
	}
	l.SetHighWatermark(l.LogEndOffset())
	return nil
}

func (s *storageOffsetLog) Append(ctx context.Context, p int32, batch []byte) (int64, error) {
	s.mu.Lock()
	fail := s.failNext
	s.failNext = nil
	s.mu.Unlock()
	if fail != nil {
		return 0, fail
	}
	l, err := s.log(p)
	if err != nil {
		return 0, err
	}
	info, err := l.AppendAsLeader(batch, 0)
	if err != nil {
		return 0, err
	}
	l.SetHighWatermark(l.LogEndOffset())
	return info.FirstOffset, nil
}

func (s *storageOffsetLog) ReadFrom(p int32, off int64, maxBytes int) (ReadResult, error) {
	l, err := s.log(p)
	if err != nil {
		return ReadResult{}, err
	}
	off = max(off, l.LogStartOffset())
	end := l.LogEndOffset()
	if off >= end {
		return ReadResult{End: end}, nil
	}
	res, err := l.Read(off, maxBytes, end, true)
	if err != nil {
		return ReadResult{}, err
	}
	var buf bytes.Buffer
	if _, err := res.WriteTo(&buf); err != nil {
		return ReadResult{}, err
	}
	return ReadResult{Batches: buf.Bytes(), End: end}, nil
}

func (s *storageOffsetLog) Close() {
	s.mu.Lock()
	defer s.mu.Unlock()
	for p, l := range s.logs {
		_ = l.Close()
		delete(s.logs, p)
	}
}

// testConfig is DefaultConfig with 10 partitions.
func testConfig() Config {
	cfg := DefaultConfig()
	cfg.NumPartitions = 10
	return cfg
}

// env is a coordinator under test with its clock and log.
type env struct {
	t    testing.TB
	logs *logtest.Hook // every entry the coordinator logged (all levels)

	hookMu     sync.Mutex
	hookEvents []string // "rebalance <group> <kind>", "gone <group>" from the Options hooks
	clock      *manualClock
	olog       *storageOffsetLog
	c          *Coordinator
	cfg        Config
	// wrap, when set before start, wraps olog in what the coordinator
	// writes through (newEnvWrapped).
	wrap func(OffsetLog) OffsetLog
}

func newEnv(t *testing.T, cfg Config) *env {
	t.Helper()
	return newEnvWrapped(t, cfg, nil)
}

// newEnvWrapped is newEnv with the coordinator writing through
// wrap(olog) when wrap is not nil.
func newEnvWrapped(t *testing.T, cfg Config, wrap func(OffsetLog) OffsetLog) *env {
	t.Helper()
	e := &env{t: t, clock: newManualClock(), olog: newStorageOffsetLog(t.TempDir()), cfg: cfg, wrap: wrap}
	e.start()
	t.Cleanup(func() {
		e.c.Shutdown()
		e.olog.Close()
	})
	return e
}

// start creates the coordinator and loads every partition.
func (e *env) start() {
	e.t.Helper()
	l := logrus.New()
	l.SetLevel(logrus.InfoLevel)
	l.SetOutput(io.Discard)
	if testing.Verbose() {
		l.SetLevel(logrus.DebugLevel)
		l.SetOutput(os.Stderr)
	}
	if e.logs == nil {
		e.logs = logtest.NewLocal(l)
	} else {
		l.AddHook(e.logs)
	}
	var olog OffsetLog = e.olog
	if e.wrap != nil {
		olog = e.wrap(e.olog)
	}
	e.c = NewCoordinator(Options{Config: e.cfg, Log: olog, Clock: e.clock, Logger: l,
		OnRebalance: func(g string, r Rebalance) { e.hook("rebalance " + g + " " + string(r.Kind)) },
		OnGroupGone: func(g string) { e.hook("gone " + g) }})
	for p := int32(0); p < e.cfg.NumPartitions; p++ {
		e.c.BecomeLeader(p, 0)
	}
	testwait.For(e.t, 10*time.Second, func() error {
		for p := int32(0); p < e.cfg.NumPartitions; p++ {
			if _, loading := e.c.Owned(p); loading {
				return fmt.Errorf("partition %d still loading", p)
			}
		}
		return nil
	})
}

// restart shuts the coordinator down, closes and reopens the logs, and
// loads everything again.
func (e *env) restart() {
	e.t.Helper()
	e.c.Shutdown()
	e.olog.Close()
	e.start()
}

// joinAsync sends JoinGroup in a goroutine.
func (e *env) joinAsync(req JoinRequest) <-chan JoinResult {
	ch := make(chan JoinResult, 1)
	go func() { ch <- e.c.JoinGroup(context.Background(), req) }()
	return ch
}

// syncAsync sends SyncGroup in a goroutine.
func (e *env) syncAsync(req SyncRequest) <-chan SyncResult {
	ch := make(chan SyncResult, 1)
	go func() { ch <- e.c.SyncGroup(context.Background(), req) }()
	return ch
}

// joinPair joins two members to group g (req1 first, then req2, each
// waited in) and completes the rebalance: their join results, in order.
func (e *env) joinPair(g string, req1, req2 JoinRequest) (r1, r2 JoinResult) {
	e.t.Helper()
	j1 := e.joinAsync(req1)
	e.waitMembers(g, 1)
	j2 := e.joinAsync(req2)
	e.waitMembers(g, 2)
	e.advance(3*time.Second, g)
	e.advance(3*time.Second, g)
	return recv(e.t, j1), recv(e.t, j2)
}

// leaderFirst orders two join results of one generation as leader,
// follower.
func leaderFirst(r1, r2 JoinResult) (leader, follower JoinResult) {
	if r2.LeaderID == r2.MemberID {
		return r2, r1
	}
	return r1, r2
}

// followerWaitingInSync joins consumers c1 and c2 to group g and sends the
// follower's SyncGroup; it returns once the follower waits there for the
// leader's assignment, with the follower's pending answer.
func (e *env) followerWaitingInSync(g string) (leader, follower JoinResult, sf <-chan SyncResult) {
	e.t.Helper()
	leader, follower = leaderFirst(e.joinPair(g, consumerJoin(g, "", "c1"), consumerJoin(g, "", "c2")))
	sf = e.syncAsync(SyncRequest{Group: g, Generation: follower.Generation, MemberID: follower.MemberID})
	e.waitFor(func() error {
		var waiting bool
		e.inspect(g, func(gr *group) { waiting = gr.members[follower.MemberID].syncReply != nil })
		if !waiting {
			return fmt.Errorf("follower not waiting in SyncGroup yet")
		}
		return nil
	})
	return leader, follower, sf
}

// leaderSync sends the leader's SyncGroup with an assignment for both
// members.
func (e *env) leaderSync(g string, leader, follower JoinResult) SyncResult {
	return e.c.SyncGroup(bg, SyncRequest{Group: g, Generation: leader.Generation, MemberID: leader.MemberID,
		Assignments: map[string][]byte{leader.MemberID: {1}, follower.MemberID: {2}}})
}

// recv waits for a result on ch (test deadline 10 s).
func recv[T any](t testing.TB, ch <-chan T) T {
	t.Helper()
	select {
	case v := <-ch:
		return v
	case <-time.After(10 * time.Second):
		t.Fatal("no answer within 10s")
		panic("unreachable")
	}
}

// pending fails if ch already has a value.
func pending[T any](t testing.TB, ch <-chan T) {
	t.Helper()
	select {
	case v := <-ch:
		t.Fatalf("unexpected early answer %+v", v)
	default:
	}
}

// state returns the group's state as DescribeGroups reports it.
func (e *env) state(group string) string {
	return e.c.DescribeGroup(context.Background(), group).State
}

// waitState polls until group is in state.
func (e *env) waitState(group, state string) {
	e.t.Helper()
	testwait.For(e.t, 10*time.Second, func() error {
		if s := e.state(group); s != state {
			return fmt.Errorf("group %s is %s, want %s", group, s, state)
		}
		return nil
	})
}

// waitMembers polls until DescribeGroups lists n members.
func (e *env) waitMembers(group string, n int) {
	e.t.Helper()
	testwait.For(e.t, 10*time.Second, func() error {
		if d := e.c.DescribeGroup(context.Background(), group); len(d.Members) != n {
			return fmt.Errorf("group %s has %d members, want %d", group, len(d.Members), n)
		}
		return nil
	})
}

// advance moves the clock and then waits until group has handled every
// timer that fired: Advance runs the timer functions (which hand work to
// the group's control channel) before returning, and the group serves its
// control channel before any request, so a DescribeGroups answer is a
// barrier.
func (e *env) advance(d time.Duration, groups ...string) {
	e.clock.Advance(d)
	for _, g := range groups {
		e.c.DescribeGroup(context.Background(), g)
	}
}

func consumerJoin(group, member, client string) JoinRequest {
	return JoinRequest{
		Group: group, MemberID: member, ClientID: client, ClientHost: "/127.0.0.1",
		SessionTimeoutMs: 10000, RebalanceTimeoutMs: 60000, ProtocolType: "consumer",
		Protocols: []Protocol{{Name: "range", Metadata: subscription("t1")}, {Name: "roundrobin", Metadata: subscription("t1")}},
	}
}

// subscription encodes a consumer protocol subscription v0 of topics.
func subscription(topics ...string) []byte {
	b := kbin.AppendInt16(nil, 0)
	b = kbin.AppendArrayLen(b, len(topics))
	for _, t := range topics {
		b = kbin.AppendString(b, t)
	}
	return kbin.AppendBytes(b, nil)
}

// inspect runs f on the group's goroutine (white-box checks).
func (e *env) inspect(id string, f func(g *group)) {
	e.t.Helper()
	g, code := e.c.lookup(id, false)
	if g == nil {
		e.t.Fatalf("group %s not found (code %d)", id, code)
	}
	call(context.Background(), g, func(int16) bool { return false }, func(reply chan<- bool) {
		f(g)
		reply <- true
	})
}

// waitAwaiting polls until n members of group await a JoinGroup answer.
func (e *env) waitAwaiting(id string, n int) {
	e.t.Helper()
	testwait.For(e.t, 10*time.Second, func() error {
		var got int
		e.inspect(id, func(g *group) { got = g.numAwaiting })
		if got != n {
			return fmt.Errorf("%d members awaiting join, want %d", got, n)
		}
		return nil
	})
}

func (e *env) hook(ev string) {
	e.hookMu.Lock()
	defer e.hookMu.Unlock()
	e.hookEvents = append(e.hookEvents, ev)
}

// hooks returns the Options hook events so far.
func (e *env) hooks() []string {
	e.hookMu.Lock()
	defer e.hookMu.Unlock()
	return append([]string(nil), e.hookEvents...)
}
