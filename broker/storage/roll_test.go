package storage

import (
	"math"
	"os"
	"path/filepath"
	"testing"
	"time"

	"samsa/broker/record"
)

// segment.ms: a new segment starts once the incoming batch's timestamp is
// segment.ms past the first batch of the active segment (Kafka's
// LogSegment.shouldRoll, timeWaitedForRoll).
func TestStorageRollBySegmentMs(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "t-0")
	clock := newFakeClock()
	cfg := smallConfig()
	cfg.SegmentBytes = 1 << 20
	cfg.SegmentMs = 60_000
	l := openTestLog(t, dir, cfg, clock, nil)
	defer l.Close()
	now := clock.Now().UnixMilli()
	for _, ts := range []int64{now, now + 30_000, now + 60_000} {
		if _, err := l.AppendAsLeader(testBatch(t, 1, 10, ts), 0); err != nil {
			t.Fatal(err)
		}
	}
	if n := l.NumSegments(); n != 1 {
		t.Fatalf("%d segments before segment.ms passed", n)
	}
	if _, err := l.AppendAsLeader(testBatch(t, 1, 10, now+60_001), 0); err != nil {
		t.Fatal(err)
	}
	if n := l.NumSegments(); n != 2 {
		t.Fatalf("%d segments after segment.ms passed, want 2", n)
	}
}

// segment.jitter.ms shortens each segment's roll time by a random amount
// below the jitter, so rolls of many partitions spread out.
func TestStorageRollJitter(t *testing.T) {
	cfg := DefaultConfig()
	cfg.SegmentMs = 1000
	cfg.SegmentJitterMs = 5000 // capped at segment.ms
	seen := map[int64]bool{}
	for i := 0; i < 200; i++ {
		j := cfg.randomSegmentJitter()
		if j < 0 || j >= 1000 {
			t.Fatalf("jitter %d outside [0, 1000)", j)
		}
		seen[j] = true
	}
	if len(seen) < 50 {
		t.Fatalf("jitter not random: %d distinct values", len(seen))
	}
	cfg.SegmentJitterMs = 0
	if cfg.randomSegmentJitter() != 0 {
		t.Fatal("jitter without segment.jitter.ms")
	}
}

// A full offset index rolls the segment.
func TestStorageRollOnFullIndex(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "t-0")
	clock := newFakeClock()
	cfg := smallConfig()
	cfg.SegmentBytes = 1 << 20
	cfg.IndexIntervalBytes = 0
	cfg.SegmentIndexBytes = 4 * timeIndexEntrySize // 6 offset entries, 3 time entries
	l := openTestLog(t, dir, cfg, clock, nil)
	defer l.Close()
	for i := 0; i < 20; i++ {
		if _, err := l.AppendAsLeader(testBatch(t, 1, 10, clock.Now().UnixMilli()+int64(i)), 0); err != nil {
			t.Fatal(err)
		}
	}
	if l.NumSegments() < 4 {
		t.Fatalf("%d segments; a full index should roll", l.NumSegments())
	}
	if got := readBatches(t, l, 0, l.LogEndOffset()); len(got) != 20 {
		t.Fatalf("read %d batches", len(got))
	}
}

// A follower batch whose offset does not fit a 32-bit relative offset
// starts a new segment at that batch's base offset.
func TestStorageRollOnRelativeOffsetOverflow(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "t-0")
	clock := newFakeClock()
	l := openTestLog(t, dir, smallConfig(), clock, nil)
	defer l.Close()
	b := testBatch(t, 2, 10, 0)
	if _, err := l.AppendAsFollower(b); err != nil {
		t.Fatal(err)
	}
	far := testBatch(t, 2, 10, 0)
	base := int64(math.MaxInt32) + 10
	record.Batch(far).SetBaseOffset(base)
	if _, err := l.AppendAsFollower(far); err != nil {
		t.Fatal(err)
	}
	segs := l.Segments()
	if len(segs) != 2 || segs[1].BaseOffset() != base {
		t.Fatalf("segments %v, want a second one at %d", segs, base)
	}
	if l.LogEndOffset() != base+2 {
		t.Fatalf("LEO %d", l.LogEndOffset())
	}
	if got := readBatches(t, l, 0, l.LogEndOffset()); len(got) != 2 {
		t.Fatalf("read %d batches across the gap", len(got))
	}
}

// With preallocate the active .log is reserved at segment.bytes and cut to
// its contents on roll and close.
func TestStorageRollPreallocate(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "t-0")
	clock := newFakeClock()
	cfg := smallConfig()
	cfg.Preallocate = true
	l := openTestLog(t, dir, cfg, clock, nil)
	if _, err := l.AppendAsLeader(testBatch(t, 1, 10, 0), 0); err != nil {
		t.Fatal(err)
	}
	fi, _ := os.Stat(segmentFileName(dir, 0, LogFileSuffix))
	if fi.Size() != int64(cfg.SegmentBytes) {
		t.Fatalf("active .log is %d bytes, want preallocated %d", fi.Size(), cfg.SegmentBytes)
	}
	size := l.Size()
	if err := l.Close(); err != nil {
		t.Fatal(err)
	}
	fi, _ = os.Stat(segmentFileName(dir, 0, LogFileSuffix))
	if fi.Size() != size {
		t.Fatalf("closed .log is %d bytes, want %d", fi.Size(), size)
	}
	l2 := openTestLog(t, dir, cfg, clock, nil)
	defer l2.Close()
	if l2.LogEndOffset() != 1 {
		t.Fatalf("LEO %d after reopen", l2.LogEndOffset())
	}
	_ = time.Second
}

// One append of many batches may fill the index midway: the extra entries
// are skipped (the index is sparse) and the next append rolls.
func TestStorageIndexFullWithinOneAppend(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "t-0")
	cfg := smallConfig()
	cfg.SegmentBytes = 1 << 20
	cfg.IndexIntervalBytes = 0
	cfg.SegmentIndexBytes = 4 * timeIndexEntrySize
	l := openTestLog(t, dir, cfg, newFakeClock(), nil)
	defer l.Close()
	var many []byte
	for i := 0; i < 20; i++ {
		many = append(many, testBatch(t, 1, 10, int64(i))...)
	}
	if _, err := l.AppendAsLeader(many, 0); err != nil {
		t.Fatal(err)
	}
	if _, err := l.AppendAsLeader(testBatch(t, 1, 10, 100), 0); err != nil {
		t.Fatal(err)
	}
	if l.NumSegments() != 2 {
		t.Fatalf("%d segments, want a roll after the full index", l.NumSegments())
	}
	for off := int64(0); off < 21; off++ {
		res, err := l.Read(off, 1, 21, true)
		if err != nil || len(readAllBatches(t, res)) != 1 || readAllBatches(t, res)[0].BaseOffset() != off {
			t.Fatalf("read %d: %v", off, err)
		}
	}
}
