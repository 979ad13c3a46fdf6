package storage

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"samsa/kafka"
)

// openFilesUnder counts this process's open descriptors on files under dir,
// by kind (file extension, e.g. ".log", ".index", ".timeindex").
func openFilesUnder(tb testing.TB, dir string) map[string]int {
	tb.Helper()
	ents, err := os.ReadDir("/proc/self/fd")
	if err != nil {
		tb.Skipf("no /proc/self/fd: %v", err)
	}
	got := map[string]int{}
	for _, e := range ents {
		target, err := os.Readlink(filepath.Join("/proc/self/fd", e.Name()))
		if err != nil || !strings.HasPrefix(target, dir+string(filepath.Separator)) {
			continue // closed meanwhile, or not ours
		}
		got[filepath.Ext(target)]++
	}
	return got
}

// TestStorageIndexesHoldNoDescriptor opens many partitions, rolls,
// flushes, truncates, reads old segments and recovers, and checks after
// each step that the only open descriptors are one .log per segment: index
// files hold none (as with Kafka's closed-after-mmap index files), so a
// broker's open-file use is one per segment, not three.
func TestStorageIndexesHoldNoDescriptor(t *testing.T) {
	root := t.TempDir()
	clock := newFakeClock()
	const partitions = 40
	logs := make([]*Log, partitions)
	open := func(i int, clean bool) *Log {
		dir := filepath.Join(root, fmt.Sprintf("t-%d", i))
		return openTestLog(t, dir, smallConfig(), clock, func(o *LogOptions) {
			o.TP = kafka.TopicPartition{Topic: "t", Partition: int32(i)}
			o.CleanShutdown = clean
		})
	}
	for i := range logs {
		logs[i] = open(i, true)
	}
	check := func(step string) {
		t.Helper()
		segs := 0
		for _, l := range logs {
			segs += l.NumSegments()
		}
		got := openFilesUnder(t, root)
		want := map[string]int{".log": segs}
		if fmt.Sprint(got) != fmt.Sprint(want) {
			t.Fatalf("%s: open descriptors %v, want %v (one .log per segment)", step, got, want)
		}
	}
	check("open")
	// Partition 0 gets several segments; the others one batch each.
	for i := 0; i < 30; i++ {
		if _, err := logs[0].AppendAsLeader(testBatch(t, 2, 200, clock.Now().UnixMilli()+int64(i)), 0); err != nil {
			t.Fatal(err)
		}
	}
	for _, l := range logs[1:] {
		if _, err := l.AppendAsLeader(testBatch(t, 2, 200, clock.Now().UnixMilli()), 0); err != nil {
			t.Fatal(err)
		}
	}
	if logs[0].NumSegments() < 3 {
		t.Fatalf("partition 0 has %d segments, want several", logs[0].NumSegments())
	}
	check("append and roll")
	for _, l := range logs {
		if err := l.Flush(); err != nil {
			t.Fatal(err)
		}
	}
	check("flush")
	// A read in an old segment loads its (evicted) index from the file.
	if _, err := logs[0].Read(3, 1<<20, logs[0].LogEndOffset(), true); err != nil {
		t.Fatal(err)
	}
	check("read an inactive segment")
	if err := logs[0].TruncateTo(logs[0].LogEndOffset() / 2); err != nil {
		t.Fatal(err)
	}
	check("truncate")
	if err := logs[1].Roll(); err != nil {
		t.Fatal(err)
	}
	check("explicit roll")
	// Unclean reopen: recovery rebuilds the indexes past the recovery point.
	for i, l := range logs {
		if err := l.Close(); err != nil {
			t.Fatal(err)
		}
		logs[i] = nil
	}
	if got := openFilesUnder(t, root); len(got) != 0 {
		t.Fatalf("after close: open descriptors %v, want none", got)
	}
	for i := range logs {
		logs[i] = open(i, false)
	}
	t.Cleanup(func() {
		for _, l := range logs {
			l.Close()
		}
	})
	check("recovery")
}
