package storage

import (
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"samsa/kafka"
)

// OnDirOffline hears of each failed log dir once, with the number of
// dirs still online: 1 after the first of two fails, 0 after the second.
func TestStorageManagerOnDirOffline(t *testing.T) {
	root := t.TempDir()
	dirs := []string{filepath.Join(root, "a"), filepath.Join(root, "b")}
	type call struct {
		dir    string
		online int
	}
	var mu sync.Mutex
	var calls []call
	efs := newErrorFS(OSFS{})
	m := newTestManager(t, dirs, newFakeClock(), func(c *ManagerConfig) {
		c.FS = efs
		c.OnDirOffline = func(dir string, err error, online int) {
			errorIs(t, err, ErrStorage)
			mu.Lock()
			calls = append(calls, call{dir, online})
			mu.Unlock()
		}
	})
	la, err := m.GetOrCreateLog(kafka.TopicPartition{Topic: "x", Partition: 0}, smallConfig()) // goes to "a"
	if err != nil {
		t.Fatal(err)
	}
	lb, err := m.GetOrCreateLog(kafka.TopicPartition{Topic: "x", Partition: 1}, smallConfig()) // goes to "b"
	if err != nil {
		t.Fatal(err)
	}
	if filepath.Dir(la.Dir()) == filepath.Dir(lb.Dir()) {
		t.Fatalf("both logs in %s", filepath.Dir(la.Dir()))
	}
	efs.failAfter(opWrite, 0)
	_, err = la.AppendAsLeader(testBatch(t, 1, 10, 0), 0)
	errorIs(t, err, ErrStorage)
	_, err = la.AppendAsLeader(testBatch(t, 1, 10, 0), 0) // already failed: no second call
	errorIs(t, err, ErrStorage)
	_, err = lb.AppendAsLeader(testBatch(t, 1, 10, 0), 0)
	errorIs(t, err, ErrStorage)
	efs.heal()
	mu.Lock()
	defer mu.Unlock()
	want := []call{{filepath.Dir(la.Dir()), 1}, {filepath.Dir(lb.Dir()), 0}}
	if len(calls) != len(want) || calls[0] != want[0] || calls[1] != want[1] {
		t.Fatalf("OnDirOffline calls %v, want %v", calls, want)
	}
}

// Close after a log dir failed: the failed dir's logs are closed without
// an error reaching the caller (the failure was reported when it happened)
// and its dir gets no clean-shutdown marker; the healthy dir shuts down
// cleanly.
func TestStorageManagerCloseWithOfflineDir(t *testing.T) {
	root := t.TempDir()
	dirs := []string{filepath.Join(root, "a"), filepath.Join(root, "b")}
	var offline []string
	m := newTestManager(t, dirs, newFakeClock(), func(c *ManagerConfig) {
		c.OnDirOffline = func(dir string, _ error, _ int) { offline = append(offline, dir) }
	})
	la, err := m.GetOrCreateLog(kafka.TopicPartition{Topic: "x", Partition: 0}, smallConfig()) // goes to "a"
	if err != nil {
		t.Fatal(err)
	}
	lb, err := m.GetOrCreateLog(kafka.TopicPartition{Topic: "x", Partition: 1}, smallConfig()) // goes to "b"
	if err != nil {
		t.Fatal(err)
	}
	if _, err := lb.AppendAsLeader(testBatch(t, 1, 10, 0), 0); err != nil {
		t.Fatal(err)
	}
	// A real failure: the log's directory is gone, so its next roll fails.
	if err := os.RemoveAll(la.Dir()); err != nil {
		t.Fatal(err)
	}
	for i := 0; i < 100 && err == nil; i++ {
		_, err = la.AppendAsLeader(testBatch(t, 4, 200, 0), 0)
	}
	errorIs(t, err, ErrStorage)
	if len(offline) != 1 || offline[0] != dirs[0] {
		t.Fatalf("offline dirs %v, want [%s]", offline, dirs[0])
	}
	if err := m.Close(); err != nil {
		t.Fatalf("Close: %v", err)
	}
	if _, err := os.Stat(filepath.Join(dirs[0], CleanShutdownFile)); !os.IsNotExist(err) {
		t.Fatalf("clean shutdown marker in the failed dir: %v", err)
	}
	if _, err := os.Stat(filepath.Join(dirs[1], CleanShutdownFile)); err != nil {
		t.Fatalf("no clean shutdown marker in the healthy dir: %v", err)
	}
}

// A log dir that cannot be created (a regular file in its place) is not
// fatal while another can be: Load takes it offline, reporting it to
// OnDirOffline with one dir still online, and every new log goes to the
// other dir. With no dir usable NewManager fails, naming them.
func TestStorageManagerDirNotCreatable(t *testing.T) {
	root := t.TempDir()
	dirs := []string{filepath.Join(root, "a"), filepath.Join(root, "b")}
	if err := os.WriteFile(dirs[0], []byte("not a dir"), 0o644); err != nil {
		t.Fatal(err)
	}
	var offline []string
	m := newTestManager(t, dirs, newFakeClock(), func(c *ManagerConfig) {
		c.OnDirOffline = func(dir string, err error, online int) {
			errorIs(t, err, ErrStorage)
			if online != 1 {
				t.Errorf("OnDirOffline(%s): %d online, want 1", dir, online)
			}
			offline = append(offline, dir)
		}
	})
	defer m.Close()
	if len(offline) != 1 || offline[0] != dirs[0] {
		t.Fatalf("OnDirOffline calls %v, want [%s]", offline, dirs[0])
	}
	if _, ok := m.OfflineDirs()[dirs[0]]; !ok || len(m.OfflineDirs()) != 1 {
		t.Fatalf("offline dirs %v", m.OfflineDirs())
	}
	for p := int32(0); p < 3; p++ {
		l, err := m.GetOrCreateLog(kafka.TopicPartition{Topic: "x", Partition: p}, smallConfig())
		if err != nil {
			t.Fatal(err)
		}
		if got := filepath.Dir(l.Dir()); got != dirs[1] {
			t.Fatalf("x-%d in %s, want %s", p, got, dirs[1])
		}
	}

	if err := os.WriteFile(filepath.Join(root, "c"), nil, 0o644); err != nil {
		t.Fatal(err)
	}
	_, err := NewManager(ManagerConfig{Dirs: []string{dirs[0], filepath.Join(root, "c")}, Logger: testLogger(t)})
	errorIs(t, err, ErrStorage)
	if err == nil || !strings.Contains(err.Error(), dirs[0]) || !strings.Contains(err.Error(), filepath.Join(root, "c")) {
		t.Fatalf("NewManager with no usable dir: %v", err)
	}
}
