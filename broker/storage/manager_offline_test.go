package storage

import (
	"path/filepath"
	"sync"
	"testing"
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
	la, err := m.GetOrCreateLog(TopicPartition{"x", 0}, smallConfig()) // goes to "a"
	if err != nil {
		t.Fatal(err)
	}
	lb, err := m.GetOrCreateLog(TopicPartition{"x", 1}, smallConfig()) // goes to "b"
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
