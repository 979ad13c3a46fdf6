package storage

import (
	"context"
	"os"
	"path/filepath"
	"sync"
	"testing"
	"time"

	"samsa/internal/testwait"
	"samsa/kafka"
)

func newTestManager(t *testing.T, dirs []string, clock *fakeClock, mod func(*ManagerConfig)) *Manager {
	t.Helper()
	cfg := ManagerConfig{Dirs: dirs, Logger: testLogger(t), Now: clock.Now, LogConfig: smallConfig(), RecoveryThreadsPerDataDir: 2}
	if mod != nil {
		mod(&cfg)
	}
	m, err := NewManager(cfg)
	if err != nil {
		t.Fatal(err)
	}
	if err := m.Load(context.Background()); err != nil {
		t.Fatal(err)
	}
	return m
}

// crash stops the manager's goroutines and drops its file handles without
// flushing, checkpointing or writing the clean shutdown marker: the state
// a kill -9 leaves (minus the page cache, which the OS keeps).
func (m *Manager) crashForTest() {
	m.mu.Lock()
	m.mu.closed = true
	m.mu.Unlock()
	close(m.quit)
	m.wg.Wait()
	for _, ml := range m.managedLogs() {
		ml.log.mu.Lock()
		ml.log.mu.closed = true
		for _, s := range *ml.log.segments.Load() {
			s.closeHandles()
		}
		ml.log.mu.Unlock()
	}
}

func TestStorageManagerSpreadsAndReloads(t *testing.T) {
	root := t.TempDir()
	dirs := []string{filepath.Join(root, "a"), filepath.Join(root, "b")}
	clock := newFakeClock()
	m := newTestManager(t, dirs, clock, nil)
	leos := map[kafka.TopicPartition]int64{}
	for p := int32(0); p < 6; p++ {
		tp := kafka.TopicPartition{Topic: "orders", Partition: p}
		l, err := m.GetOrCreateLog(tp, smallConfig())
		if err != nil {
			t.Fatal(err)
		}
		for i := 0; i < int(p)+1; i++ {
			if _, err := l.AppendAsLeader(testBatch(t, 3, 500, clock.Now().UnixMilli()), 1); err != nil {
				t.Fatal(err)
			}
		}
		l.SetHighWatermark(l.LogEndOffset() - 1)
		leos[tp] = l.LogEndOffset()
	}
	perDir := map[string]int{}
	for _, ml := range m.managedLogs() {
		perDir[ml.root]++
	}
	if perDir[dirs[0]] != 3 || perDir[dirs[1]] != 3 {
		t.Fatalf("partitions per dir %v, want 3 and 3", perDir)
	}
	if err := m.Close(); err != nil {
		t.Fatal(err)
	}
	for _, d := range dirs {
		if _, err := os.Stat(filepath.Join(d, CleanShutdownFile)); err != nil {
			t.Fatalf("no clean shutdown marker in %s: %v", d, err)
		}
	}
	m2 := newTestManager(t, dirs, clock, nil)
	defer m2.Close()
	for tp, leo := range leos {
		l, ok := m2.Log(tp)
		if !ok {
			t.Fatalf("%s not reloaded", tp)
		}
		if l.LogEndOffset() != leo || l.HighWatermark() != leo-1 || l.RecoveryPoint() != leo {
			t.Fatalf("%s: LEO %d HW %d RP %d, want %d %d %d", tp, l.LogEndOffset(), l.HighWatermark(), l.RecoveryPoint(), leo, leo-1, leo)
		}
	}
	for _, d := range dirs {
		if _, err := os.Stat(filepath.Join(d, CleanShutdownFile)); !os.IsNotExist(err) {
			t.Fatalf("clean shutdown marker still in %s after load", d)
		}
	}
}

func TestStorageManagerDeleteLog(t *testing.T) {
	root := t.TempDir()
	clock := newFakeClock()
	m := newTestManager(t, []string{root}, clock, nil)
	defer m.Close()
	tp := kafka.TopicPartition{Topic: "gone", Partition: 0}
	l, err := m.GetOrCreateLog(tp, smallConfig())
	if err != nil {
		t.Fatal(err)
	}
	if _, err := l.AppendAsLeader(testBatch(t, 1, 10, 0), 0); err != nil {
		t.Fatal(err)
	}
	if err := m.DeleteLog(tp); err != nil {
		t.Fatal(err)
	}
	if _, ok := m.Log(tp); ok {
		t.Fatal("log still known")
	}
	ents, _ := os.ReadDir(root)
	for _, e := range ents {
		if e.IsDir() {
			t.Fatalf("directory %s left behind", e.Name())
		}
	}
}

func TestStorageManagerRetentionLoop(t *testing.T) {
	root := t.TempDir()
	clock := newFakeClock()
	m := newTestManager(t, []string{root}, clock, func(c *ManagerConfig) { c.RetentionCheckInterval = 10 * time.Millisecond })
	defer m.Close()
	cfg := smallConfig()
	cfg.RetentionBytes = 8192
	l, err := m.GetOrCreateLog(kafka.TopicPartition{Topic: "r", Partition: 0}, cfg)
	if err != nil {
		t.Fatal(err)
	}
	for i := 0; i < 40; i++ {
		if _, err := l.AppendAsLeader(testBatch(t, 2, 400, clock.Now().UnixMilli()), 0); err != nil {
			t.Fatal(err)
		}
	}
	l.SetHighWatermark(l.LogEndOffset())
	testwait.For(t, 5*time.Second, func() error {
		if l.LogStartOffset() == 0 || l.Size() > 8192+4096 {
			return errorf("log start %d size %d", l.LogStartOffset(), l.Size())
		}
		return nil
	})
}

// After a crash (no marker), Load recovers every log from its recovery
// point: a torn tail appended to an active segment is cut, and every
// acknowledged batch before it is there.
func TestStorageManagerRecoversAfterCrash(t *testing.T) {
	root := t.TempDir()
	clock := newFakeClock()
	m := newTestManager(t, []string{root}, clock, nil)
	want := map[kafka.TopicPartition]int64{}
	for p := int32(0); p < 4; p++ {
		tp := kafka.TopicPartition{Topic: "c", Partition: p}
		l, err := m.GetOrCreateLog(tp, smallConfig())
		if err != nil {
			t.Fatal(err)
		}
		for i := 0; i < 10; i++ {
			if _, err := l.AppendAsLeader(testBatch(t, 2, 150, clock.Now().UnixMilli()), 0); err != nil {
				t.Fatal(err)
			}
		}
		want[tp] = l.LogEndOffset()
	}
	if err := m.CheckpointAll(); err != nil {
		t.Fatal(err)
	}
	m.crashForTest()
	// A torn write at the end of partition 0's active segment.
	l0dir := filepath.Join(root, "c-0")
	bases := segmentBases(t, l0dir)
	f, err := os.OpenFile(segmentFileName(l0dir, bases[len(bases)-1], LogFileSuffix), os.O_WRONLY|os.O_APPEND, 0)
	if err != nil {
		t.Fatal(err)
	}
	f.Write([]byte{0, 0, 0, 0, 0, 0, 0, 99, 0, 0, 1, 0, 0, 0})
	f.Close()
	if _, err := os.Stat(filepath.Join(root, CleanShutdownFile)); !os.IsNotExist(err) {
		t.Fatal("marker present after a crash")
	}
	m2 := newTestManager(t, []string{root}, clock, nil)
	defer m2.Close()
	for tp, leo := range want {
		l, ok := m2.Log(tp)
		if !ok {
			t.Fatalf("%s not loaded", tp)
		}
		if l.LogEndOffset() != leo {
			t.Fatalf("%s: LEO %d after recovery, want %d", tp, l.LogEndOffset(), leo)
		}
		if got := readBatches(t, l, 0, l.LogEndOffset()); len(got) != 10 {
			t.Fatalf("%s: %d batches after recovery", tp, len(got))
		}
		if l.RecoveryPoint() != leo {
			t.Fatalf("%s: recovery point %d after recovery", tp, l.RecoveryPoint())
		}
	}
}

// The active segment's index files are preallocated to segment.index.bytes
// rounded down to whole entries once they exist (a new log has none: they
// are created when the first entries are written).
func TestStorageActiveIndexPreallocated(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "t-0")
	cfg := smallConfig()
	cfg.SegmentIndexBytes = 1000 // 125 offset entries, 83 time entries
	clock := newFakeClock()
	l := openTestLog(t, dir, cfg, clock, nil)
	defer l.Close()
	for i := 0; i < 3; i++ { // 3 × ~480 bytes: entries after 256
		if _, err := l.AppendAsLeader(testBatch(t, 2, 200, clock.Now().UnixMilli()+int64(i)), 0); err != nil {
			t.Fatal(err)
		}
	}
	if err := l.Flush(); err != nil {
		t.Fatal(err)
	}
	for suffix, want := range map[string]int64{IndexFileSuffix: 1000, TimeIndexFileSuffix: 996} {
		fi, err := os.Stat(segmentFileName(dir, 0, suffix))
		if err != nil || fi.Size() != want {
			t.Fatalf("%s: %v size %d, want %d", suffix, err, fi.Size(), want)
		}
	}
}

// A disk error in one log takes its log dir offline: new logs go to the
// other dir, and Close does not mark the failed dir clean (KIP-112).
func TestStorageManagerDirOfflineAfterDiskError(t *testing.T) {
	root := t.TempDir()
	dirs := []string{filepath.Join(root, "a"), filepath.Join(root, "b")}
	clock := newFakeClock()
	efs := newErrorFS(OSFS{})
	m := newTestManager(t, dirs, clock, func(c *ManagerConfig) { c.FS = efs })
	l, err := m.GetOrCreateLog(kafka.TopicPartition{Topic: "x", Partition: 0}, smallConfig()) // goes to "a"
	if err != nil {
		t.Fatal(err)
	}
	efs.failAfter(opWrite, 0)
	_, err = l.AppendAsLeader(testBatch(t, 1, 10, 0), 0)
	errorIs(t, err, ErrStorage)
	efs.heal()
	if off := m.OfflineDirs(); off[dirs[0]] == nil || len(off) != 1 {
		t.Fatalf("offline dirs %v", off)
	}
	for p := int32(1); p < 4; p++ {
		l, err := m.GetOrCreateLog(kafka.TopicPartition{Topic: "x", Partition: p}, smallConfig())
		if err != nil {
			t.Fatal(err)
		}
		if filepath.Dir(l.Dir()) != dirs[1] {
			t.Fatalf("new log placed in offline dir: %s", l.Dir())
		}
	}
	m.Close()
	if _, err := os.Stat(filepath.Join(dirs[0], CleanShutdownFile)); !os.IsNotExist(err) {
		t.Fatal("offline dir marked clean")
	}
	if _, err := os.Stat(filepath.Join(dirs[1], CleanShutdownFile)); err != nil {
		t.Fatal("healthy dir not marked clean")
	}
}

// Load asks ConfigFor once per topic, not once per partition (a lookup
// may be a ZooKeeper read), and each log gets its topic's config.
func TestStorageManagerLoadConfigForOncePerTopic(t *testing.T) {
	dir := t.TempDir()
	clock := newFakeClock()
	m := newTestManager(t, []string{dir}, clock, nil)
	for _, topic := range []string{"a", "b"} {
		for p := int32(0); p < 5; p++ {
			if _, err := m.GetOrCreateLog(kafka.TopicPartition{Topic: topic, Partition: p}, smallConfig()); err != nil {
				t.Fatal(err)
			}
		}
	}
	if err := m.Close(); err != nil {
		t.Fatal(err)
	}
	var mu sync.Mutex
	calls := map[string]int{}
	m = newTestManager(t, []string{dir}, clock, func(c *ManagerConfig) {
		c.ConfigFor = func(tp kafka.TopicPartition) Config {
			mu.Lock()
			calls[tp.Topic]++
			mu.Unlock()
			cfg := smallConfig()
			if tp.Topic == "b" {
				cfg.SegmentBytes = 8192
			}
			return cfg
		}
	})
	defer m.Close()
	if calls["a"] != 1 || calls["b"] != 1 {
		t.Fatalf("ConfigFor calls per topic: %v, want one each", calls)
	}
	for p := int32(0); p < 5; p++ {
		a, _ := m.Log(kafka.TopicPartition{Topic: "a", Partition: p})
		b, _ := m.Log(kafka.TopicPartition{Topic: "b", Partition: p})
		if a.Config().SegmentBytes != 4096 || b.Config().SegmentBytes != 8192 {
			t.Fatalf("partition %d: segment.bytes a=%d b=%d", p, a.Config().SegmentBytes, b.Config().SegmentBytes)
		}
	}
}
