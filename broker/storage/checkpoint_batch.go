package storage

// Making many checkpoint files durable together (issue 18 point 2).
//
// A checkpoint file is replaced the way Kafka's CheckpointFile does it:
// write "<path>.tmp", fsync it, rename it over path, fsync the directory.
// Done one file after another, a clean shutdown of a broker whose 10,000
// partitions changed leadership since their last flush (each has a dirty
// leader-epoch-checkpoint) waits for two journal commits per partition:
// 0.5-1 ms each, 5-10 s in all. A checkpointBatch runs the same four steps
// for many files, one step for all of them before the next:
//
//  1. stage: write every file's temp file (page cache only; the caller
//     stages from as many goroutines as it likes);
//  2. fsync every temp file, checkpointSyncWorkers at a time;
//  3. rename every temp file whose fsync succeeded over its file;
//  4. fsync every directory that got a rename, checkpointSyncWorkers at a
//     time.
//
// The fsyncs of one step overlap, and overlapping fsyncs on one file
// system share its journal commits; in step 4 most directory fsyncs find
// their rename already committed by another's and return at once.
//
// Not syncfs(2), which would make the whole file system durable in one
// call: it also waits for every other dirty byte on that file system
// (other brokers' and other programs' writeback, the very load that makes
// the disk slow), before Linux 5.8 it did not report writeback errors,
// and it would make golang.org/x/sys a direct dependency.
//
// Crash guarantee, the same as one Write's: a file's new content is
// durable before the rename makes it visible (step 2 before step 3), and
// the rename is durable (step 4) before the file's outcome is reported, so
// a crash at any point leaves each file with its old or its new content,
// never a mix or an empty file (a leftover temp file is removed at load,
// log_load.go). A file whose fsync or rename fails keeps its old content
// and gets the error; the other files of the batch are not affected. A
// directory whose fsync fails fails every file renamed in it.
//
// Each staged file's write lock (CheckpointFile.mu) is held from stage
// until its rename, so a concurrent Write of the same file (a truncation
// of the leader epoch cache) waits and then replaces it with newer
// content, never with older.

import (
	"maps"
	"path/filepath"
	"slices"
	"sync"
)

// checkpointSyncWorkers bounds the fsyncs a checkpointBatch runs at once
// (each blocked fsync holds an OS thread).
const checkpointSyncWorkers = 64

// checkpointBatch is a set of checkpoint replacements made durable
// together (see the file comment). stage may be called concurrently;
// commit once, after every stage has returned.
type checkpointBatch struct {
	mu    sync.Mutex
	items []*stagedCheckpoint // guarded by mu until commit
}

// stagedCheckpoint is one file of a batch.
type stagedCheckpoint struct {
	cf   *CheckpointFile // its mu is held from stage until the rename
	tmp  string
	f    File        // the temp file, open until its fsync
	err  error       // the file's outcome, set by commit
	done func(error) // called by commit with err
}

// stage writes data to cf's temp file and adds the file to b; commit makes
// it durable and then calls done with its outcome (nil: the new content
// is durable under cf's path). stage takes cf's write lock and holds it
// until commit has renamed the file. If the temp file cannot be written,
// stage releases the lock, removes the temp file and returns the error
// (wrapping ErrStorage); done is then never called.
func (b *checkpointBatch) stage(cf *CheckpointFile, data []byte, done func(error)) error {
	cf.mu.Lock()
	tmp := cf.path + TmpFileSuffix
	f, err := cf.fs.OpenFile(tmp, osCreateTruncWrite, 0o644)
	if err != nil {
		cf.mu.Unlock()
		return storageError("create "+tmp, err)
	}
	if _, err := f.WriteAt(data, 0); err != nil {
		f.Close()
		cf.fs.Remove(tmp)
		cf.mu.Unlock()
		return storageError("write "+tmp, err)
	}
	b.mu.Lock()
	b.items = append(b.items, &stagedCheckpoint{cf: cf, tmp: tmp, f: f, done: done})
	b.mu.Unlock()
	return nil
}

// commit makes every staged file durable under its name (steps 2-4),
// calls each file's done and returns when all have been called. It blocks
// on the fsyncs.
func (b *checkpointBatch) commit() {
	b.mu.Lock()
	items := b.items
	b.items = nil
	b.mu.Unlock()
	// Durable: each file's new content, before it becomes visible under
	// its real name.
	forEachParallel(len(items), checkpointSyncWorkers, func(i int) { items[i].syncTemp() })
	renamed := map[string][]*stagedCheckpoint{}
	for _, it := range items {
		if it.err == nil {
			if err := it.cf.fs.Rename(it.tmp, it.cf.path); err != nil {
				it.cf.fs.Remove(it.tmp)
				it.err = storageError("rename "+it.tmp, err)
			} else {
				dir := filepath.Dir(it.cf.path)
				renamed[dir] = append(renamed[dir], it)
			}
		}
		it.cf.mu.Unlock()
	}
	// Durable: the renames, so a crash cannot bring back the old content.
	dirs := slices.Sorted(maps.Keys(renamed))
	forEachParallel(len(dirs), checkpointSyncWorkers, func(i int) {
		in := renamed[dirs[i]]
		if err := in[0].cf.fs.SyncDir(dirs[i]); err != nil {
			for _, it := range in {
				it.err = storageError("sync dir of "+it.cf.path, err)
			}
		}
	})
	for _, it := range items {
		it.done(it.err)
	}
}

// syncTemp fsyncs and closes the temp file; on error it removes it.
func (it *stagedCheckpoint) syncTemp() {
	err := it.f.Sync()
	if err != nil {
		err = storageError("sync "+it.tmp, err)
	}
	if cerr := it.f.Close(); err == nil && cerr != nil {
		err = storageError("close "+it.tmp, cerr)
	}
	if err != nil {
		it.cf.fs.Remove(it.tmp)
	}
	it.f, it.err = nil, err
}
