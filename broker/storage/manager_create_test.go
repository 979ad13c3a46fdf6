package storage

import (
	"errors"
	"io/fs"
	"math/rand/v2"
	"path/filepath"
	"sync"
	"testing"

	"samsa/kafka"
)

// logDirOf returns the base name of the log dir holding l.
func logDirOf(l *Log) string { return filepath.Base(filepath.Dir(l.Dir())) }

// TestStorageCreatePlannedLogsConcurrently: inside a wave, PlanNewLogs
// places a request's new logs in request order, so creating them
// concurrently, in any order, puts each in the log dir that creating them
// one after another gives (the fewest logs, config order breaking ties),
// with existing logs and logs already open left out of the plan; the plans
// are used up and nothing stays counted once the wave ends.
func TestStorageCreatePlannedLogsConcurrently(t *testing.T) {
	var tps []kafka.TopicPartition
	for p := range 60 {
		tps = append(tps, kafka.TopicPartition{Topic: "plan", Partition: int32((p * 37) % 60)})
	}
	existing := kafka.TopicPartition{Topic: "plan", Partition: int32((5 * 37) % 60)}
	setup := func(t *testing.T) *Manager {
		root := t.TempDir()
		dirs := []string{filepath.Join(root, "a"), filepath.Join(root, "b"), filepath.Join(root, "c")}
		m := newTestManager(t, dirs, newFakeClock(), nil)
		t.Cleanup(func() { m.Close() })
		for i, tp := range []kafka.TopicPartition{{Topic: "old", Partition: 0}, {Topic: "old", Partition: 1}, existing} {
			if _, err := m.GetOrCreateLog(tp, smallConfig()); err != nil {
				t.Fatal(i, err)
			}
		}
		return m
	}
	// One after another, in request order.
	seq := setup(t)
	end := seq.BeginCreateWave()
	want := map[kafka.TopicPartition]string{}
	for _, tp := range tps {
		l, err := seq.GetOrCreateLog(tp, smallConfig())
		if err != nil {
			t.Fatal(err)
		}
		want[tp] = logDirOf(l)
	}
	if failed := end(); len(failed) != 0 {
		t.Fatal(failed)
	}

	m := setup(t)
	end = m.BeginCreateWave()
	m.PlanNewLogs(tps)
	order := rand.New(rand.NewPCG(3, 18)).Perm(len(tps))
	got := make([]string, len(tps))
	var wg sync.WaitGroup
	for _, i := range order {
		wg.Add(1)
		go func() {
			defer wg.Done()
			l, err := m.GetOrCreateLog(tps[i], smallConfig())
			if err != nil {
				t.Error(err)
				return
			}
			got[i] = logDirOf(l)
		}()
	}
	wg.Wait()
	if failed := end(); len(failed) != 0 {
		t.Fatal(failed)
	}
	for i, tp := range tps {
		if got[i] != want[tp] {
			t.Fatalf("%s in %s, one-by-one creation puts it in %s", tp, got[i], want[tp])
		}
	}
	m.create.Lock()
	defer m.create.Unlock()
	for d, n := range m.create.pending {
		if n != 0 {
			t.Fatalf("log dir %s still counts %d planned or pending creations", d, n)
		}
	}
	if len(m.create.planned) != 0 || len(m.create.inFlight) != 0 {
		t.Fatalf("left over: plans %v, creations %v", m.create.planned, m.create.inFlight)
	}
}

// TestStorageCreatePlansOutsideWaveAndUnused: PlanNewLogs outside a wave
// plans nothing; plans a wave never used are dropped when it ends, so they
// do not skew later placement; and a plan for a log dir that went offline
// meanwhile is not followed: the log goes to an online dir.
func TestStorageCreatePlansOutsideWaveAndUnused(t *testing.T) {
	root := t.TempDir()
	dirs := []string{filepath.Join(root, "a"), filepath.Join(root, "b")}
	m := newTestManager(t, dirs, newFakeClock(), nil)
	t.Cleanup(func() { m.Close() })
	tp := func(p int32) kafka.TopicPartition { return kafka.TopicPartition{Topic: "u", Partition: p} }

	m.PlanNewLogs([]kafka.TopicPartition{tp(0)})
	if len(m.create.planned) != 0 {
		t.Fatalf("planned outside a wave: %v", m.create.planned)
	}
	end := m.BeginCreateWave()
	m.PlanNewLogs([]kafka.TopicPartition{tp(0), tp(1), tp(2)}) // a, b, a
	end()
	if l, err := m.GetOrCreateLog(tp(2), smallConfig()); err != nil || logDirOf(l) != "a" {
		t.Fatalf("after the unused plans were dropped: %v %v, want log dir a", l, err)
	}

	end = m.BeginCreateWave()
	defer end()
	m.PlanNewLogs([]kafka.TopicPartition{tp(3)}) // b: a holds one log
	if m.create.planned[tp(3)] != dirs[1] {
		t.Fatalf("plan %v, want %s", m.create.planned, dirs[1])
	}
	m.markOffline(dirs[1], errInjected)
	l, err := m.GetOrCreateLog(tp(3), smallConfig())
	if err != nil || logDirOf(l) != "a" {
		t.Fatalf("planned in an offline dir: %v %v, want log dir a", l, err)
	}
}

// blockingFS blocks the MkdirAll of one path until release is closed,
// telling entered when it starts waiting.
type blockingFS struct {
	FS
	path    string
	entered chan struct{}
	release chan struct{}
}

func (b *blockingFS) MkdirAll(name string, perm fs.FileMode) error {
	if name == b.path {
		close(b.entered)
		<-b.release
	}
	return b.FS.MkdirAll(name, perm)
}

// TestStorageCreateConcurrentWithSameLogDeleteAndClose: while a log's
// creation is blocked in its mkdir, other partitions are still created,
// a second GetOrCreateLog of the same partition returns the same log once
// the first finishes, a DeleteLog of a partition being created waits for
// the creation and then deletes it, and Close waits for a creation under
// way and closes its log.
func TestStorageCreateConcurrentWithSameLogDeleteAndClose(t *testing.T) {
	root := t.TempDir()
	slow := kafka.TopicPartition{Topic: "slow", Partition: 0}
	bfs := &blockingFS{FS: OSFS{}, path: filepath.Join(root, slow.String()),
		entered: make(chan struct{}), release: make(chan struct{})}
	m := newTestManager(t, []string{root}, newFakeClock(), func(c *ManagerConfig) { c.FS = bfs })

	type result struct {
		l   *Log
		err error
	}
	results := make(chan result, 2)
	for range 2 {
		go func() {
			l, err := m.GetOrCreateLog(slow, smallConfig())
			results <- result{l, err}
		}()
	}
	<-bfs.entered
	if _, err := m.GetOrCreateLog(kafka.TopicPartition{Topic: "fast", Partition: 0}, smallConfig()); err != nil {
		t.Fatalf("another partition while one creation is blocked: %v", err)
	}
	close(bfs.release)
	a, b := <-results, <-results
	if a.err != nil || b.err != nil || a.l != b.l {
		t.Fatalf("two GetOrCreateLog of one partition: %v %v / %v %v", a.l, a.err, b.l, b.err)
	}

	// DeleteLog while the creation is blocked.
	block := func(tp kafka.TopicPartition) {
		bfs.path, bfs.entered, bfs.release = filepath.Join(root, tp.String()), make(chan struct{}), make(chan struct{})
		go func() {
			l, err := m.GetOrCreateLog(tp, smallConfig())
			results <- result{l, err}
		}()
		<-bfs.entered
	}
	doomed := kafka.TopicPartition{Topic: "slow", Partition: 1}
	block(doomed)
	deleted := make(chan error, 1)
	go func() { deleted <- m.DeleteLog(doomed) }()
	close(bfs.release)
	if r := <-results; r.err != nil {
		t.Fatal(r.err)
	}
	if err := <-deleted; err != nil {
		t.Fatal(err)
	}
	if _, ok := m.Log(doomed); ok {
		t.Fatal("the log is still there after DeleteLog")
	}

	// Close while a creation is blocked.
	block(kafka.TopicPartition{Topic: "slow", Partition: 2})
	closed := make(chan error, 1)
	go func() { closed <- m.Close() }()
	close(bfs.release)
	r := <-results
	if err := <-closed; err != nil {
		t.Fatal(err)
	}
	if r.err != nil {
		t.Fatalf("the creation under way when Close began: %v", r.err)
	}
	r.l.mu.Lock()
	isClosed := r.l.mu.closed
	r.l.mu.Unlock()
	if !isClosed {
		t.Fatal("a log created while Close waited was left open")
	}
	if _, err := m.GetOrCreateLog(kafka.TopicPartition{Topic: "late", Partition: 0}, smallConfig()); !errors.Is(err, ErrClosed) {
		t.Fatalf("GetOrCreateLog after Close: %v, want ErrClosed", err)
	}
}
