package storage

import (
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
	"testing"
	"time"

	"samsa/broker/record"
)

// epochsOfBatches is the leader epoch cache a log's batches imply: an
// entry at the first batch of each epoch (the batches' epochs never
// decrease in these tests).
func epochsOfBatches(bs []record.Batch) []EpochEntry {
	var out []EpochEntry
	for _, b := range bs {
		e := b.PartitionLeaderEpoch()
		if e < 0 || (len(out) > 0 && out[len(out)-1].Epoch == e) {
			continue
		}
		out = append(out, EpochEntry{Epoch: e, StartOffset: b.BaseOffset()})
	}
	return out
}

// crashLog simulates a hard kill: the log's files stay as they are (the
// page cache survives a process kill), nothing is flushed or written on
// the way out.
func crashLog(l *Log) {
	for _, s := range *l.segments.Load() {
		s.closeHandles()
	}
}

// fileEpochs reads leader-epoch-checkpoint of dir (nil when missing).
func fileEpochs(t *testing.T, dir string) []EpochEntry {
	t.Helper()
	if _, err := os.Stat(filepath.Join(dir, LeaderEpochCheckpointFile)); os.IsNotExist(err) {
		return nil
	}
	return epochFileEntries(t, dir)
}

// TestStorageLeaderEpochRebuiltAfterCrash: appends assign new epochs in
// memory only (no checkpoint write), Flush makes them durable before the
// recovery point passes them, and after a hard kill the reopened log's
// epoch cache equals what its batches imply, whichever checkpointed
// recovery point (the last flush's, an older one, none) the Manager had
// written. A second crash right after that reopen loses nothing either:
// recovery wrote the rebuilt cache before its recovery point moved.
func TestStorageLeaderEpochRebuiltAfterCrash(t *testing.T) {
	deferredSeen := 0
	for seed := uint64(1); seed <= 30; seed++ {
		rng := rand.New(rand.NewPCG(seed, 18))
		dir := filepath.Join(t.TempDir(), "t-0")
		clock := newFakeClock()
		noLog := func(o *LogOptions) { o.Logger = nil }
		l := openTestLog(t, dir, smallConfig(), clock, noLog)
		epoch := int32(0)
		rps := []int64{0} // recovery points after each flush
		for i := 0; i < 60; i++ {
			if rng.IntN(4) == 0 {
				epoch += 1 + int32(rng.IntN(2))
			}
			if _, err := l.AppendAsLeader(testBatch(t, 1+rng.IntN(3), rng.IntN(300), clock.Now().UnixMilli()), epoch); err != nil {
				t.Fatal(err)
			}
			if rng.IntN(10) == 0 {
				if err := l.Flush(); err != nil {
					t.Fatal(err)
				}
				rp := l.RecoveryPoint()
				rps = append(rps, rp)
				// The guarantee: every epoch starting below the
				// recovery point is in the file.
				for _, e := range l.LeaderEpochCache().Entries() {
					if e.StartOffset < rp && !slices.Contains(fileEpochs(t, dir), e) {
						t.Fatalf("seed %d: %v starts below recovery point %d but is not in the file %v", seed, e, rp, fileEpochs(t, dir))
					}
				}
			}
		}
		if !slices.Equal(fileEpochs(t, dir), l.LeaderEpochCache().Entries()) {
			deferredSeen++
			if !l.LeaderEpochCache().Dirty() {
				t.Fatalf("seed %d: file %v differs from the cache %v, which is not dirty", seed, fileEpochs(t, dir), l.LeaderEpochCache().Entries())
			}
		}
		crashLog(l)

		rp := rps[len(rps)-1]
		switch rng.IntN(3) {
		case 0:
			rp = rps[rng.IntN(len(rps))] // the Manager's checkpoint lagged
		case 1:
			rp = 0 // no recovery point checkpointed yet
		}
		reopen := func(rp int64) *Log {
			return openTestLog(t, dir, smallConfig(), clock, func(o *LogOptions) {
				noLog(o)
				o.CleanShutdown = false
				o.RecoveryPoint = rp
			})
		}
		l2 := reopen(rp)
		want := epochsOfBatches(readBatches(t, l2, 0, l2.LogEndOffset()))
		if got := l2.LeaderEpochCache().Entries(); !slices.Equal(got, want) {
			t.Fatalf("seed %d (recovery point %d): epochs after the crash %v, the batches say %v", seed, rp, got, want)
		}
		if got := fileEpochs(t, dir); !slices.Equal(got, want) {
			t.Fatalf("seed %d: the file after recovery holds %v, want %v", seed, got, want)
		}
		crashLog(l2)
		l3 := reopen(l2.RecoveryPoint())
		if got := l3.LeaderEpochCache().Entries(); !slices.Equal(got, want) {
			t.Fatalf("seed %d: epochs after a second crash %v, want %v", seed, got, want)
		}
		if err := l3.Close(); err != nil {
			t.Fatal(err)
		}
	}
	if deferredSeen == 0 {
		t.Fatal("no run crashed with epochs that were not yet in the file: the test did not exercise the deferred write")
	}
}

// TestStorageLeaderEpochCrashLowerEpochAndLeaderOnly covers the entries a
// replay of the batches must not trust the file for: a leader's entry at
// the log end (durable after a flush) that a follower append of an older
// epoch replaced in memory, and a leadership that wrote nothing before the
// crash (its entry is lost, as it names no batch).
func TestStorageLeaderEpochCrashLowerEpochAndLeaderOnly(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "t-0")
	clock := newFakeClock()
	l := openTestLog(t, dir, smallConfig(), clock, nil)
	for range 3 {
		if _, err := l.AppendAsLeader(testBatch(t, 2, 10, 1), 1); err != nil {
			t.Fatal(err)
		}
	}
	leo := l.LogEndOffset()
	if err := l.LeaderEpochCache().Assign(7, leo); err != nil { // became leader at epoch 7
		t.Fatal(err)
	}
	if err := l.Flush(); err != nil {
		t.Fatal(err)
	}
	if got, want := fileEpochs(t, dir), []EpochEntry{{1, 0}, {7, leo}}; !slices.Equal(got, want) {
		t.Fatalf("file %v, want %v", got, want)
	}
	rp := l.RecoveryPoint()
	// A follower again: the leader's log has epoch-6 batches from leo on.
	for i := range 2 {
		b := record.Batch(testBatch(t, 2, 10, 1))
		b.SetBaseOffset(leo + int64(2*i))
		b.SetPartitionLeaderEpoch(6)
		if _, err := l.AppendAsFollower(b); err != nil {
			t.Fatal(err)
		}
	}
	if err := l.LeaderEpochCache().Assign(9, l.LogEndOffset()); err != nil { // leader again, no appends
		t.Fatal(err)
	}
	want := []EpochEntry{{1, 0}, {6, leo}}
	if got := l.LeaderEpochCache().Entries(); !slices.Equal(got, append(slices.Clone(want), EpochEntry{9, leo + 4})) {
		t.Fatalf("entries before the crash %v", got)
	}
	crashLog(l)
	l2 := openTestLog(t, dir, smallConfig(), clock, func(o *LogOptions) {
		o.CleanShutdown = false
		o.RecoveryPoint = rp
	})
	if got := l2.LeaderEpochCache().Entries(); !slices.Equal(got, want) {
		t.Fatalf("entries after the crash %v, want %v", got, want)
	}
	if err := l2.Close(); err != nil {
		t.Fatal(err)
	}
}

// TestStorageLeaderEpochWrittenBeforeRecoveryPoint: with flush.messages=1
// every append flushes and moves the recovery point, so the file holds
// every epoch as soon as its append returns; a clean Close writes a
// leadership that appended nothing, and a clean reopen (no recovery) has
// it.
func TestStorageLeaderEpochWrittenBeforeRecoveryPoint(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "t-0")
	clock := newFakeClock()
	cfg := smallConfig()
	cfg.FlushMessages = 1
	l := openTestLog(t, dir, cfg, clock, nil)
	for i := range 6 {
		if _, err := l.AppendAsLeader(testBatch(t, 1, 10, 1), int32(i/2)); err != nil {
			t.Fatal(err)
		}
		if got, want := fileEpochs(t, dir), l.LeaderEpochCache().Entries(); !slices.Equal(got, want) {
			t.Fatalf("append %d: file %v, cache %v (recovery point %d)", i, got, want, l.RecoveryPoint())
		}
	}
	if err := l.LeaderEpochCache().Assign(5, l.LogEndOffset()); err != nil {
		t.Fatal(err)
	}
	want := l.LeaderEpochCache().Entries()
	if err := l.Close(); err != nil {
		t.Fatal(err)
	}
	l2 := openTestLog(t, dir, cfg, clock, nil)
	defer l2.Close()
	if got := fileEpochs(t, dir); !slices.Equal(got, want) {
		t.Fatalf("file after Close %v, want %v", got, want)
	}
	// At load the entry at the log end is trimmed in memory (trimAtLoad), as
	// Kafka does; the file keeps it.
	if got := l2.LeaderEpochCache().Entries(); !slices.Equal(got, want[:len(want)-1]) {
		t.Fatalf("entries after a clean reopen %v, want %v", got, want[:len(want)-1])
	}
}

// TestStorageLeaderEpochUncleanRestartOfIdleLogWritesNothing: an unclean
// restart of a log whose only epoch change is a leadership at its end
// (the common state of thousands of idle partitions after a leadership
// wave) drops that entry in memory, as a clean load does, and writes no
// checkpoint.
func TestStorageLeaderEpochUncleanRestartOfIdleLogWritesNothing(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "t-0")
	clock := newFakeClock()
	l := openTestLog(t, dir, smallConfig(), clock, nil)
	if _, err := l.AppendAsLeader(testBatch(t, 2, 10, 1), 0); err != nil {
		t.Fatal(err)
	}
	if err := l.LeaderEpochCache().Assign(3, l.LogEndOffset()); err != nil {
		t.Fatal(err)
	}
	if err := l.Flush(); err != nil {
		t.Fatal(err)
	}
	rp := l.RecoveryPoint()
	path := filepath.Join(dir, LeaderEpochCheckpointFile)
	before, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	crashLog(l)
	if err := os.Chtimes(path, clock.Now(), clock.Now().Add(-time.Hour)); err != nil {
		t.Fatal(err)
	}
	st0, _ := os.Stat(path)
	l2 := openTestLog(t, dir, smallConfig(), clock, func(o *LogOptions) {
		o.CleanShutdown = false
		o.RecoveryPoint = rp
	})
	defer l2.Close()
	if got := l2.LeaderEpochCache().Entries(); !slices.Equal(got, []EpochEntry{{0, 0}}) {
		t.Fatalf("entries %v, want [0 0]", got)
	}
	after, _ := os.ReadFile(path)
	st1, _ := os.Stat(path)
	if string(after) != string(before) || !st1.ModTime().Equal(st0.ModTime()) || l2.LeaderEpochCache().Dirty() {
		t.Fatalf("the load rewrote the checkpoint (%q -> %q) or left it dirty (%v)", before, after, l2.LeaderEpochCache().Dirty())
	}
}
