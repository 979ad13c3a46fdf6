package storage

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
)

// batchFixture is n checkpoint files in n partition directories under a
// temp root; the even ones exist with old content, the odd ones do not.
type batchFixture struct {
	paths    []string
	old, new [][]byte // old[i] nil: file i is new
	files    []*CheckpointFile
}

func newBatchFixture(t *testing.T, n int) *batchFixture {
	t.Helper()
	root := t.TempDir()
	bf := &batchFixture{}
	for i := range n {
		dir := filepath.Join(root, fmt.Sprintf("t-%d", i))
		if err := os.Mkdir(dir, 0o755); err != nil {
			t.Fatal(err)
		}
		path := filepath.Join(dir, LeaderEpochCheckpointFile)
		var old []byte
		if i%2 == 0 {
			old = []byte(fmt.Sprintf("0\n1\n0 %d\n", i))
			if err := os.WriteFile(path, old, 0o644); err != nil {
				t.Fatal(err)
			}
		}
		bf.paths = append(bf.paths, path)
		bf.old = append(bf.old, old)
		bf.new = append(bf.new, []byte(fmt.Sprintf("0\n2\n0 %d\n7 %d\n", i, 100+i)))
	}
	return bf
}

// stageAll stages every file's new content in b from concurrent
// goroutines, as flushLogs does, and returns the outcomes commit reports.
func (bf *batchFixture) stageAll(t *testing.T, fsys FS, b *checkpointBatch) []error {
	t.Helper()
	outcomes := make([]error, len(bf.paths))
	bf.files = make([]*CheckpointFile, len(bf.paths))
	var wg sync.WaitGroup
	for i, p := range bf.paths {
		bf.files[i] = NewCheckpointFile(fsys, p)
		wg.Add(1)
		go func() {
			defer wg.Done()
			if err := b.stage(bf.files[i], bf.new[i], func(err error) { outcomes[i] = err }); err != nil {
				t.Errorf("stage %s: %v", p, err)
			}
		}()
	}
	wg.Wait()
	return outcomes
}

// TestStorageCheckpointBatchCrashAtAnyPoint: with a batch of 40 checkpoint
// files (half replacing a file, half creating one), a power cut after any
// file-system operation of the batch leaves each file with its old content
// (missing, for a new one) or its new content, never empty or torn; and
// once commit returned, each file's new content is durable.
func TestStorageCheckpointBatchCrashAtAnyPoint(t *testing.T) {
	bf := newBatchFixture(t, 40)
	cfs := newCrashFS(OSFS{})
	for i, p := range bf.paths {
		cfs.watchFile(p, oneOf(bf.old[i] == nil, bf.old[i], bf.new[i]))
	}
	var b checkpointBatch
	outcomes := bf.stageAll(t, cfs, &b)
	b.commit()
	for _, v := range cfs.violations() {
		t.Error(v)
	}
	for i, p := range bf.paths {
		if outcomes[i] != nil {
			t.Fatalf("%s: %v", p, outcomes[i])
		}
		cfs.watchFile(p, oneOf(false, bf.new[i])) // from now on only the new content may survive
	}
	cfs.checkLocked("after commit")
	for _, v := range cfs.violations() {
		t.Error(v)
	}
	if cfs.ops < 4*len(bf.paths) {
		t.Fatalf("only %d operations were checked", cfs.ops)
	}
}

// TestStorageCheckpointCrashModelCatchesRenameBeforeSync checks the crash
// model itself: a temp file renamed into place before its fsync (the bug
// the order of the batch's steps prevents) is reported.
func TestStorageCheckpointCrashModelCatchesRenameBeforeSync(t *testing.T) {
	bf := newBatchFixture(t, 1)
	cfs := newCrashFS(OSFS{})
	cfs.watchFile(bf.paths[0], oneOf(false, bf.old[0], bf.new[0]))
	tmp := bf.paths[0] + TmpFileSuffix
	f, err := cfs.OpenFile(tmp, osCreateTruncWrite, 0o644)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := f.WriteAt(bf.new[0], 0); err != nil {
		t.Fatal(err)
	}
	if len(cfs.violations()) != 0 {
		t.Fatalf("reported before the rename: %v", cfs.violations())
	}
	// The rename may reach the disk before any directory fsync.
	if err := cfs.Rename(tmp, bf.paths[0]); err != nil {
		t.Fatal(err)
	}
	f.Close()
	if v := cfs.violations(); len(v) == 0 || !strings.Contains(v[0], "rename") || !strings.Contains(v[0], `holding ""`) {
		t.Fatalf("the unsynced file renamed into place was not reported: %v", v)
	}
}

// TestStorageCheckpointBatchFaults: when fsyncs (of temp files, then of
// directories: 40 in all) or renames fail part way through a batch of 20,
// every file whose outcome is an error (wrapping ErrStorage) holds its old
// content, or its new one when only its directory's fsync failed, and
// leaves no temp file; every other file has its new content; and each
// file's lock is released either way (a later Write of it returns).
func TestStorageCheckpointBatchFaults(t *testing.T) {
	for _, tc := range []struct {
		name  string
		op    faultOp
		after []int
	}{{"sync", opSync, []int{0, 7, 19, 25, 39}}, {"rename", opRename, []int{0, 7, 19}}} {
		for _, after := range tc.after {
			t.Run(fmt.Sprintf("%s-after-%d", tc.name, after), func(t *testing.T) {
				bf := newBatchFixture(t, 20)
				efs := newErrorFS(OSFS{})
				var b checkpointBatch
				outcomes := bf.stageAll(t, efs, &b)
				efs.failAfter(tc.op, after)
				b.commit()
				efs.heal()
				failed := 0
				for i, p := range bf.paths {
					got, err := os.ReadFile(p)
					if errors.Is(err, fs.ErrNotExist) {
						got = nil
					} else if err != nil {
						t.Fatal(err)
					}
					ok := string(got) == string(bf.new[i])
					if outcomes[i] != nil {
						failed++
						dirOnly := strings.Contains(outcomes[i].Error(), "sync dir")
						ok = string(got) == string(bf.old[i]) || (dirOnly && ok)
						if !errors.Is(outcomes[i], ErrStorage) {
							t.Fatalf("%s: error %v does not wrap ErrStorage", p, outcomes[i])
						}
					}
					if !ok {
						t.Fatalf("%s (outcome %v): content %q; old %q, new %q", p, outcomes[i], got, bf.old[i], bf.new[i])
					}
					if _, err := os.Stat(p + TmpFileSuffix); outcomes[i] != nil && !errors.Is(err, fs.ErrNotExist) {
						t.Fatalf("%s: temp file left after a failure (%v)", p, err)
					}
					if err := bf.files[i].Write(bf.new[i]); err != nil {
						t.Fatalf("%s: write after the batch: %v", p, err)
					}
				}
				if failed == 0 {
					t.Fatal("no file failed: the fault was not injected")
				}
			})
		}
	}
}
