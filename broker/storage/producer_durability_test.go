package storage

import (
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"samsa/kafka"
)

// syncTraceFS records, in order, the fsyncs of files and directories and
// the renames made through it, and fails the fsyncs of the names
// failSync (if set) selects.
type syncTraceFS struct {
	FS
	mu       sync.Mutex
	events   []string
	failSync func(base string) bool
}

func (s *syncTraceFS) syncFails(name string) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.failSync != nil && s.failSync(filepath.Base(name))
}

func (s *syncTraceFS) note(e string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.events = append(s.events, e)
}

func (s *syncTraceFS) trace() []string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]string(nil), s.events...)
}

func (s *syncTraceFS) OpenFile(name string, flag int, perm fs.FileMode) (File, error) {
	f, err := s.FS.OpenFile(name, flag, perm)
	if err != nil {
		return nil, err
	}
	return &syncTraceFile{File: f, fs: s}, nil
}

func (s *syncTraceFS) Rename(oldpath, newpath string) error {
	s.note("rename " + filepath.Base(oldpath) + " " + filepath.Base(newpath))
	return s.FS.Rename(oldpath, newpath)
}

func (s *syncTraceFS) SyncDir(name string) error {
	s.note("syncdir " + filepath.Base(name))
	if s.syncFails(name) {
		return errInjected
	}
	return s.FS.SyncDir(name)
}

type syncTraceFile struct {
	File
	fs *syncTraceFS
}

func (f *syncTraceFile) Sync() error {
	f.fs.note("sync " + filepath.Base(f.File.Name()))
	if f.fs.syncFails(f.File.Name()) {
		return errInjected
	}
	return f.File.Sync()
}

// indexOf returns the index of the first event equal to e at or after
// from, or -1.
func indexOf(events []string, from int, e string) int {
	for i := from; i < len(events); i++ {
		if events[i] == e {
			return i
		}
	}
	return -1
}

// A producer snapshot is durable before anyone relies on it, as Kafka's
// ProducerStateManager.writeSnapshot makes it: at close the snapshot's
// bytes are fsynced under a temporary name, renamed into place and the
// directory fsynced, all before Close returns (the Manager writes
// .kafka_cleanshutdown only afterwards). At a roll the file is fsynced
// before its rename, and the name is made durable by the next flush.
func TestStorageProducerSnapshotIsDurable(t *testing.T) {
	clock := newFakeClock()
	dir := filepath.Join(t.TempDir(), "t-0")
	tfs := &syncTraceFS{FS: OSFS{}}
	cfg := smallConfig()
	l := openTestLog(t, dir, cfg, clock, func(o *LogOptions) { o.FS = tfs })
	ts := clock.Now().UnixMilli()
	seq := int32(0)
	for ; l.NumSegments() < 2; seq += 2 {
		appendLeader(t, l, idemBatch(t, 4, 0, seq, 2, ts))
	}
	rolled := (*l.segments.Load())[1].base
	name := filepath.Base(producerSnapshotPath(dir, rolled))
	ev := tfs.trace()
	s := indexOf(ev, 0, "sync "+name+TmpFileSuffix)
	r := indexOf(ev, 0, "rename "+name+TmpFileSuffix+" "+name)
	if s < 0 || r < s {
		t.Fatalf("roll snapshot: fsync at %d, rename at %d in %q", s, r, ev)
	}
	if err := l.Flush(); err != nil {
		t.Fatal(err)
	}
	if ev = tfs.trace(); indexOf(ev, r, "syncdir t-0") < 0 {
		t.Fatalf("the flush after the roll did not sync the directory: %q", ev[r:])
	}

	appendLeader(t, l, idemBatch(t, 4, 0, seq, 2, ts))
	leo := l.LogEndOffset()
	from := len(tfs.trace())
	if err := l.Close(); err != nil {
		t.Fatal(err)
	}
	name = filepath.Base(producerSnapshotPath(dir, leo))
	ev = tfs.trace()
	s = indexOf(ev, from, "sync "+name+TmpFileSuffix)
	r = indexOf(ev, from, "rename "+name+TmpFileSuffix+" "+name)
	d := indexOf(ev, max(r, 0), "syncdir t-0")
	if s < 0 || r < s || d < r {
		t.Fatalf("close snapshot: fsync at %d, rename at %d, dir sync at %d in %q", s, r, d, ev[from:])
	}
	if _, err := os.Stat(producerSnapshotPath(dir, leo) + TmpFileSuffix); !errors.Is(err, fs.ErrNotExist) {
		t.Fatalf("temporary snapshot left behind: %v", err)
	}
}

// A snapshot that cannot be made durable (here: its fsync fails) never
// takes the log offline: not at a roll (appends go on), not at load
// (OpenLog succeeds, so the Manager keeps the log dir online). At close the
// failure is reported by Close, so that the Manager writes no
// clean-shutdown marker and the next start replays the producers from the
// log. No snapshot is left under its final name unless it was fsynced.
func TestStorageProducerSnapshotFailureKeepsLogOnline(t *testing.T) {
	clock := newFakeClock()
	dir := filepath.Join(t.TempDir(), "t-0")
	tfs := &syncTraceFS{FS: OSFS{}}
	failing := func(on bool) {
		tfs.mu.Lock()
		defer tfs.mu.Unlock()
		tfs.failSync = nil
		if on {
			tfs.failSync = func(base string) bool { return strings.Contains(base, ProducerSnapshotFileSuffix) }
		}
	}
	cfg := smallConfig()
	open := func(clean bool) *Log {
		return openTestLog(t, dir, cfg, clock, func(o *LogOptions) { o.FS, o.CleanShutdown = tfs, clean })
	}
	failing(true)
	l := open(true)
	ts := clock.Now().UnixMilli()
	seq := int32(0)
	for ; l.NumSegments() < 3; seq += 2 {
		appendLeader(t, l, idemBatch(t, 6, 0, seq, 2, ts))
	}
	if err := l.Failed(); err != nil {
		t.Fatalf("a failed roll snapshot took the log offline: %v", err)
	}
	checkNoSnapshots := func(when string) {
		t.Helper()
		entries, _ := os.ReadDir(dir)
		for _, e := range entries {
			if strings.Contains(e.Name(), ProducerSnapshotFileSuffix) {
				t.Fatalf("%s: %s exists although its fsync failed", when, e.Name())
			}
		}
	}
	checkNoSnapshots("after rolls")
	if err := l.Close(); !errors.Is(err, ErrStorage) {
		t.Fatalf("close with a failed snapshot: %v, want ErrStorage", err)
	}
	checkNoSnapshots("after close")

	// Unclean start (no marker was written): the producers are replayed
	// from the log; the snapshot taken after the replay fails too, which
	// must not fail the load.
	l = open(false)
	if err := l.Failed(); err != nil {
		t.Fatalf("log failed at load: %v", err)
	}
	checkNoSnapshots("after load")
	dup := appendLeader(t, l, idemBatch(t, 6, 0, seq-2, 2, ts))
	if !dup.Duplicate {
		t.Fatalf("retry of the last batch after reload: %+v, want a duplicate", dup)
	}
	failing(false)
	appendLeader(t, l, idemBatch(t, 6, 0, seq, 2, ts))
	leo := l.LogEndOffset()
	if err := l.Close(); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(producerSnapshotPath(dir, leo)); err != nil {
		t.Fatalf("healed close wrote no snapshot: %v", err)
	}
}

// Through the Manager: a clean Close makes each log's producer snapshot
// durable before it writes .kafka_cleanshutdown, and DeleteLog writes no
// snapshot for a log it is about to remove.
func TestStorageManagerProducerSnapshotBeforeMarker(t *testing.T) {
	root := t.TempDir()
	clock := newFakeClock()
	tfs := &syncTraceFS{FS: OSFS{}}
	m := newTestManager(t, []string{root}, clock, func(c *ManagerConfig) { c.FS = tfs })
	ts := clock.Now().UnixMilli()
	for _, topic := range []string{"kept", "gone"} {
		l, err := m.GetOrCreateLog(kafka.TopicPartition{Topic: topic, Partition: 0}, smallConfig())
		if err != nil {
			t.Fatal(err)
		}
		appendLeader(t, l, idemBatch(t, 9, 0, 0, 2, ts))
	}
	if err := m.DeleteLog(kafka.TopicPartition{Topic: "gone", Partition: 0}); err != nil {
		t.Fatal(err)
	}
	if err := m.Close(); err != nil {
		t.Fatal(err)
	}
	name := filepath.Base(producerSnapshotPath("", 2))
	ev := tfs.trace()
	s := indexOf(ev, 0, "sync "+name+TmpFileSuffix)
	if s < 0 || indexOf(ev, s+1, "sync "+name+TmpFileSuffix) >= 0 {
		t.Fatalf("want exactly one snapshot fsync (the kept log's), events %q", ev)
	}
	d := indexOf(ev, s, "syncdir kept-0")
	marker := indexOf(ev, s, "syncdir "+filepath.Base(root)) // the marker's directory sync
	if d < 0 || marker < d {
		t.Fatalf("snapshot fsync at %d, its dir sync at %d, marker dir sync at %d: %q", s, d, marker, ev)
	}
	if _, err := os.Stat(filepath.Join(root, CleanShutdownFile)); err != nil {
		t.Fatal(err)
	}
}
