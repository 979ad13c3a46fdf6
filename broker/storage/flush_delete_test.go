package storage

import (
	"context"
	"path/filepath"
	"sync"
	"testing"

	"samsa/kafka"
)

// syncDirHookFS runs hook before each SyncDir.
type syncDirHookFS struct {
	FS
	mu   sync.Mutex
	hook func(dir string)
}

func (h *syncDirHookFS) SyncDir(name string) error {
	h.mu.Lock()
	hook := h.hook
	h.mu.Unlock()
	if hook != nil {
		hook(name)
	}
	return h.FS.SyncDir(name)
}

func (h *syncDirHookFS) setHook(fn func(string)) {
	h.mu.Lock()
	h.hook = fn
	h.mu.Unlock()
}

// TestStorageFlushRacingDeleteLog deletes a log while a flush of it (the
// background flush after a roll, say) is between fsyncing its segments
// and its directory: the flush finds the directory gone and must return
// quietly, not take the log dir offline as if the disk had failed.
func TestStorageFlushRacingDeleteLog(t *testing.T) {
	root := t.TempDir()
	hfs := &syncDirHookFS{FS: OSFS{}}
	m, err := NewManager(ManagerConfig{Dirs: []string{root}, FS: hfs, Logger: testLogger(t)})
	if err != nil {
		t.Fatal(err)
	}
	if err := m.Load(context.Background()); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { m.Close() })
	tp := kafka.TopicPartition{Topic: "t", Partition: 0}
	l, err := m.GetOrCreateLog(tp, cleanerTestConfig())
	if err != nil {
		t.Fatal(err)
	}
	appendBatch(t, l, 0, 1000, ckv{"k", "v", false})
	mustRoll(t, l) // the directory needs an fsync now
	appendBatch(t, l, 0, 1000, ckv{"k", "w", false})
	fired := false
	hfs.setHook(func(dir string) {
		if fired || filepath.Clean(dir) != filepath.Clean(l.Dir()) {
			return
		}
		fired = true
		if err := m.DeleteLog(tp); err != nil {
			t.Error(err)
		}
	})
	err = l.Flush()
	hfs.setHook(nil)
	if !fired {
		t.Fatal("flush did not sync the partition directory")
	}
	if err != nil {
		t.Fatalf("Flush of a deleted log = %v, want nil", err)
	}
	if off := m.OfflineDirs(); len(off) != 0 {
		t.Fatalf("offline dirs after deleting a log during a flush: %v", off)
	}
}
