package storage

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"samsa/kafka"
)

// TestStorageEpochTrimAtLoadWritesNothing: an epoch entry past the log end
// (a leader elected at the log end that wrote nothing, or data lost in a
// crash) is dropped from the cache at load without rewriting
// leader-epoch-checkpoint; every load trims it again, and the next write
// of the cache (after a change, on Flush) writes the whole, trimmed cache.
func TestStorageEpochTrimAtLoadWritesNothing(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "t-0")
	open := func() *Log {
		l, err := OpenLog(LogOptions{Dir: dir, TP: kafka.TopicPartition{Topic: "t", Partition: 0}, Config: DefaultConfig(), CleanShutdown: true})
		if err != nil {
			t.Fatal(err)
		}
		return l
	}
	l := open()
	if _, err := l.AppendAsLeader(testBatch(t, 3, 10, 1), 0); err != nil {
		t.Fatal(err)
	}
	if err := l.LeaderEpochCache().Assign(5, l.LogEndOffset()+4); err != nil { // past the end
		t.Fatal(err)
	}
	if err := l.Close(); err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(dir, LeaderEpochCheckpointFile)
	before, err := os.ReadFile(path)
	if err != nil || !strings.Contains(string(before), "5 7") {
		t.Fatalf("checkpoint %q (%v), want the entry 5 7", before, err)
	}
	want := []EpochEntry{{Epoch: 0, StartOffset: 0}}
	for i := 0; i < 2; i++ {
		l = open()
		if got := l.LeaderEpochCache().Entries(); !slices.Equal(got, want) {
			t.Fatalf("load %d: entries %v, want %v", i, got, want)
		}
		if after, _ := os.ReadFile(path); string(after) != string(before) {
			t.Fatalf("load %d rewrote the checkpoint: %q", i, after)
		}
		if i == 0 {
			l.Close()
		}
	}
	if err := l.LeaderEpochCache().Assign(6, l.LogEndOffset()); err != nil {
		t.Fatal(err)
	}
	if err := l.Flush(); err != nil {
		t.Fatal(err)
	}
	after, _ := os.ReadFile(path)
	if strings.Contains(string(after), "5 7") || !strings.Contains(string(after), "6 3") {
		t.Fatalf("checkpoint after a change %q, want 0 0 and 6 3", after)
	}
	l.Close()
}
