package storage

import (
	"errors"
	"path/filepath"
	"testing"

	"samsa/kafka"
)

// countSyncDirs counts the events "syncdir <base>" in ev.
func countSyncDirs(ev []string, base string) int {
	n := 0
	for _, e := range ev {
		if e == "syncdir "+base {
			n++
		}
	}
	return n
}

// Outside a wave each new log fsyncs its log dir; inside one the log
// dirs are fsynced once each, by end and not before, whatever the number
// of logs, and placement is what one-by-one creation gives.
func TestStorageCreateWaveSyncsEachLogDirOnce(t *testing.T) {
	root := t.TempDir()
	dirs := []string{filepath.Join(root, "a"), filepath.Join(root, "b")}
	tfs := &syncTraceFS{FS: OSFS{}}
	m := newTestManager(t, dirs, newFakeClock(), func(c *ManagerConfig) { c.FS = tfs })
	t.Cleanup(func() { m.Close() })

	if _, err := m.GetOrCreateLog(kafka.TopicPartition{Topic: "one", Partition: 0}, smallConfig()); err != nil {
		t.Fatal(err)
	}
	if n := countSyncDirs(tfs.trace(), "a"); n != 1 {
		t.Fatalf("a log created outside a wave: %d fsyncs of its log dir, want 1", n)
	}

	before := len(tfs.trace())
	end := m.BeginCreateWave()
	var placed []string
	for p := int32(0); p < 7; p++ {
		l, err := m.GetOrCreateLog(kafka.TopicPartition{Topic: "wave", Partition: p}, smallConfig())
		if err != nil {
			t.Fatal(err)
		}
		placed = append(placed, filepath.Base(filepath.Dir(l.Dir())))
	}
	inWave := tfs.trace()[before:]
	if countSyncDirs(inWave, "a")+countSyncDirs(inWave, "b") != 0 {
		t.Fatalf("log dirs fsynced before the wave ended: %q", inWave)
	}
	// "one" is in a, so the fewest-logs rule alternates from b.
	want := []string{"b", "a", "b", "a", "b", "a", "b"}
	for i := range want {
		if placed[i] != want[i] {
			t.Fatalf("placement %v, want %v", placed, want)
		}
	}
	if failed := end(); len(failed) != 0 {
		t.Fatalf("end: %v", failed)
	}
	ended := tfs.trace()[before:]
	if a, b := countSyncDirs(ended, "a"), countSyncDirs(ended, "b"); a != 1 || b != 1 {
		t.Fatalf("after the wave: %d fsyncs of a and %d of b, want 1 each", a, b)
	}
	if failed := end(); failed != nil {
		t.Fatalf("a second end: %v", failed)
	}
	if n := len(tfs.trace()) - len(ended) - before; n != 0 {
		t.Fatalf("a second end did %d more operations", n)
	}
}

// Waves overlap: a log created while two are open is synced by whichever
// ends first, and the other end has nothing left to do.
func TestStorageCreateWaveOverlapping(t *testing.T) {
	root := t.TempDir()
	tfs := &syncTraceFS{FS: OSFS{}}
	m := newTestManager(t, []string{root}, newFakeClock(), func(c *ManagerConfig) { c.FS = tfs })
	t.Cleanup(func() { m.Close() })
	base := filepath.Base(root)
	end1 := m.BeginCreateWave()
	end2 := m.BeginCreateWave()
	if _, err := m.GetOrCreateLog(kafka.TopicPartition{Topic: "x", Partition: 0}, smallConfig()); err != nil {
		t.Fatal(err)
	}
	end2()
	if n := countSyncDirs(tfs.trace(), base); n != 1 {
		t.Fatalf("%d fsyncs of the log dir after the first end, want 1", n)
	}
	end1()
	if n := countSyncDirs(tfs.trace(), base); n != 1 {
		t.Fatalf("%d fsyncs of the log dir after both ends, want 1", n)
	}
	// With no wave open, creation fsyncs at once again.
	if _, err := m.GetOrCreateLog(kafka.TopicPartition{Topic: "x", Partition: 1}, smallConfig()); err != nil {
		t.Fatal(err)
	}
	if n := countSyncDirs(tfs.trace(), base); n != 2 {
		t.Fatalf("%d fsyncs of the log dir, want 2", n)
	}
}

// A log dir whose fsync fails at the end of a wave goes offline (KIP-112)
// and the logs created there are reported with a storage error; the other
// log dir's logs are fine.
func TestStorageCreateWaveSyncFailure(t *testing.T) {
	root := t.TempDir()
	dirs := []string{filepath.Join(root, "a"), filepath.Join(root, "b")}
	tfs := &syncTraceFS{FS: OSFS{}}
	var offline []string
	m := newTestManager(t, dirs, newFakeClock(), func(c *ManagerConfig) {
		c.FS = tfs
		c.OnDirOffline = func(dir string, _ error, _ int) { offline = append(offline, dir) }
	})
	t.Cleanup(func() { m.Close() })
	end := m.BeginCreateWave()
	inA := map[kafka.TopicPartition]bool{}
	for p := int32(0); p < 4; p++ {
		tp := kafka.TopicPartition{Topic: "f", Partition: p}
		l, err := m.GetOrCreateLog(tp, smallConfig())
		if err != nil {
			t.Fatal(err)
		}
		if filepath.Dir(l.Dir()) == dirs[0] {
			inA[tp] = true
		}
	}
	tfs.mu.Lock()
	tfs.failSync = func(base string) bool { return base == "a" }
	tfs.mu.Unlock()
	failed := end()
	if len(failed) != len(inA) || len(inA) != 2 {
		t.Fatalf("failed %v, want the %d logs in a", failed, len(inA))
	}
	for tp, err := range failed {
		if !inA[tp] || !errors.Is(err, ErrStorage) {
			t.Fatalf("%s: %v (in a: %v)", tp, err, inA[tp])
		}
	}
	if _, ok := m.OfflineDirs()[dirs[0]]; !ok || len(offline) != 1 || offline[0] != dirs[0] {
		t.Fatalf("offline dirs %v, callbacks %v; want %s", m.OfflineDirs(), offline, dirs[0])
	}
}
