package storage

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"samsa/kafka"
)

// epochRig is a Manager over fsys with n logs in one log dir, each with a
// few appended batches and a new leader epoch assigned since its last
// flush (what a leadership wave leaves): every log's
// leader-epoch-checkpoint is dirty.
type epochRig struct {
	dir  string
	m    *Manager
	logs []*Log
}

func newEpochRig(t *testing.T, fsys FS, n int) *epochRig {
	t.Helper()
	r := &epochRig{dir: t.TempDir()}
	clock := newFakeClock()
	r.m = newTestManager(t, []string{r.dir}, clock, func(c *ManagerConfig) { c.FS = fsys })
	for i := range n {
		l, err := r.m.GetOrCreateLog(kafka.TopicPartition{Topic: "e", Partition: int32(i)}, smallConfig())
		if err != nil {
			t.Fatal(err)
		}
		for j := range 1 + i%3 {
			if _, err := l.AppendAsLeader(testBatch(t, 2, 20, clock.Now().UnixMilli()), int32(j)); err != nil {
				t.Fatal(err)
			}
		}
		if i%2 == 0 {
			if err := l.Flush(); err != nil { // an older checkpoint on disk for half of them
				t.Fatal(err)
			}
		}
		if err := l.LeaderEpochCache().Assign(int32(5+i%4), l.LogEndOffset()); err != nil {
			t.Fatal(err)
		}
		r.logs = append(r.logs, l)
	}
	return r
}

// TestStorageManagerCloseBatchesEpochCheckpoints: Manager.Close makes the
// dirty leader-epoch-checkpoints of a log dir durable together, every temp
// file fsynced before the first rename, and a power cut at any point of the
// close leaves each checkpoint with its old content (missing, for a log
// never flushed) or its new one; after Close each file holds its cache.
func TestStorageManagerCloseBatchesEpochCheckpoints(t *testing.T) {
	cfs := newCrashFS(OSFS{})
	trace := &syncTraceFS{FS: cfs}
	r := newEpochRig(t, trace, 24)
	want := make([][]byte, len(r.logs))
	for i, l := range r.logs {
		path := filepath.Join(l.Dir(), LeaderEpochCheckpointFile)
		old, err := os.ReadFile(path)
		if err != nil && !errors.Is(err, fs.ErrNotExist) {
			t.Fatal(err)
		}
		if want[i], err = EncodeLeaderEpochCheckpoint(l.LeaderEpochCache().Entries()); err != nil {
			t.Fatal(err)
		}
		if old != nil {
			cfs.watchFile(path, oneOf(false, old, want[i]))
		} else {
			cfs.watchFile(path, oneOf(true, want[i]))
		}
	}
	from := len(trace.trace())
	if err := r.m.Close(); err != nil {
		t.Fatal(err)
	}
	for _, v := range cfs.violations() {
		t.Error(v)
	}
	for i, l := range r.logs {
		got, err := os.ReadFile(filepath.Join(l.Dir(), LeaderEpochCheckpointFile))
		if err != nil || string(got) != string(want[i]) {
			t.Fatalf("%s: checkpoint %q (%v), want %q", l.Dir(), got, err, want[i])
		}
	}
	ev := trace.trace()[from:]
	tmp := LeaderEpochCheckpointFile + TmpFileSuffix
	syncs, firstRename, lastTmpSync := 0, -1, -1
	for i, e := range ev {
		switch {
		case e == "sync "+tmp:
			syncs++
			lastTmpSync = i
		case strings.HasPrefix(e, "rename "+tmp) && firstRename < 0:
			firstRename = i
		}
	}
	if syncs != len(r.logs) || firstRename < 0 || lastTmpSync > firstRename {
		t.Fatalf("%d temp-file fsyncs for %d logs, last at %d, first rename at %d: not batched\n%s",
			syncs, len(r.logs), lastTmpSync, firstRename, strings.Join(ev, "\n"))
	}
}

// TestStorageLeaderEpochCrashDuringBatchedClose: a disk error part way
// through the batched checkpoint writes of Manager.Close (an fsync or a
// rename failing) fails the close of that log dir: no clean-shutdown
// marker, so the next start recovers, and every log's leader epoch cache
// then equals what its batches imply, whether its checkpoint was written
// or not. No temp file survives the reopen.
func TestStorageLeaderEpochCrashDuringBatchedClose(t *testing.T) {
	for _, tc := range []struct {
		name  string
		op    faultOp
		after int
	}{{"sync", opSync, 0}, {"sync", opSync, 9}, {"sync", opSync, 30}, {"rename", opRename, 0}, {"rename", opRename, 11}} {
		t.Run(fmt.Sprintf("%s-after-%d", tc.name, tc.after), func(t *testing.T) {
			efs := newErrorFS(OSFS{})
			r := newEpochRig(t, efs, 20)
			efs.failAfter(tc.op, tc.after)
			if err := r.m.Close(); err == nil || !errors.Is(err, ErrStorage) {
				t.Fatalf("Close: %v, want a storage error", err)
			}
			efs.heal()
			if _, err := os.Stat(filepath.Join(r.dir, CleanShutdownFile)); !errors.Is(err, fs.ErrNotExist) {
				t.Fatalf("clean-shutdown marker written after a failed close (%v)", err)
			}
			m2 := newTestManager(t, []string{r.dir}, newFakeClock(), nil)
			defer m2.Close()
			for _, old := range r.logs {
				l, ok := m2.Log(old.TopicPartition())
				if !ok {
					t.Fatalf("%s missing after the reopen", old.TopicPartition())
				}
				want := epochsOfBatches(readBatches(t, l, 0, l.LogEndOffset()))
				if got := l.LeaderEpochCache().Entries(); !slices.Equal(got, want) {
					t.Fatalf("%s: epochs %v after the reopen, the batches say %v", l.TopicPartition(), got, want)
				}
				if _, err := os.Stat(filepath.Join(l.Dir(), LeaderEpochCheckpointFile+TmpFileSuffix)); !errors.Is(err, fs.ErrNotExist) {
					t.Fatalf("%s: temp checkpoint survived the reopen (%v)", l.Dir(), err)
				}
			}
		})
	}
}
