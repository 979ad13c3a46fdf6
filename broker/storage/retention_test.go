package storage

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"samsa/internal/testwait"
	"samsa/kafka"
)

func fillSegments(t *testing.T, l *Log, clock *fakeClock, n int) {
	t.Helper()
	for i := 0; i < n; i++ {
		if _, err := l.AppendAsLeader(testBatch(t, 2, 300, clock.Now().UnixMilli()), 0); err != nil {
			t.Fatal(err)
		}
		clock.Advance(time.Minute)
	}
}

// retention.ms deletes segments whose largest timestamp is older, never
// the active segment, and only segments wholly below the high watermark.
func TestStorageRetentionByTime(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "t-0")
	clock := newFakeClock()
	cfg := smallConfig()
	cfg.RetentionMs = int64(time.Hour / time.Millisecond)
	l := openTestLog(t, dir, cfg, clock, nil)
	defer l.Close()
	fillSegments(t, l, clock, 30)
	segs := l.NumSegments()
	clock.Advance(2 * time.Hour)
	if n, err := l.DeleteOldSegments(); err != nil || n != 0 {
		t.Fatalf("deleted %d (%v) with high watermark 0", n, err)
	}
	l.SetHighWatermark(l.LogEndOffset())
	n, err := l.DeleteOldSegments()
	if err != nil {
		t.Fatal(err)
	}
	if n != segs-1 || l.NumSegments() != 1 {
		t.Fatalf("deleted %d of %d segments, %d left; the active one must stay", n, segs, l.NumSegments())
	}
	if l.LogStartOffset() != l.Segments()[0].BaseOffset() {
		t.Fatalf("log start %d, first segment %d", l.LogStartOffset(), l.Segments()[0].BaseOffset())
	}
	cfg.CleanupPolicy = CleanupCompact
	l.SetConfig(cfg)
	fillSegments(t, l, clock, 30)
	l.SetHighWatermark(l.LogEndOffset())
	clock.Advance(2 * time.Hour)
	if n, _ := l.DeleteOldSegments(); n != 0 {
		t.Fatalf("compacted topic lost %d segments to retention.ms", n)
	}
}

// retention.bytes deletes the oldest segments while the log is larger.
func TestStorageRetentionBySize(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "t-0")
	clock := newFakeClock()
	cfg := smallConfig()
	cfg.RetentionBytes = 10000
	l := openTestLog(t, dir, cfg, clock, nil)
	defer l.Close()
	fillSegments(t, l, clock, 60)
	l.SetHighWatermark(l.LogEndOffset())
	if _, err := l.DeleteOldSegments(); err != nil {
		t.Fatal(err)
	}
	// Kafka deletes a segment only while the log stays at or above
	// retention.bytes without it.
	if l.Size() < 10000 || l.Size()-l.Segments()[0].Size() >= 10000 {
		t.Fatalf("log is %d bytes (first segment %d) after retention.bytes=10000", l.Size(), l.Segments()[0].Size())
	}
	if got := readBatches(t, l, l.LogStartOffset(), l.LogEndOffset()); len(got) == 0 {
		t.Fatal("nothing left to read")
	}
}

// Deleted segments are renamed ".deleted" and removed only after
// file.delete.delay.ms; a region read before stays readable meanwhile.
func TestStorageRetentionDeleteDelay(t *testing.T) {
	root := t.TempDir()
	clock := newFakeClock()
	m := newTestManager(t, []string{root}, clock, nil)
	defer m.Close()
	cfg := smallConfig()
	cfg.FileDeleteDelayMs = 300
	cfg.RetentionBytes = 0
	l, err := m.GetOrCreateLog(kafka.TopicPartition{Topic: "d", Partition: 0}, cfg)
	if err != nil {
		t.Fatal(err)
	}
	fillSegments(t, l, clock, 20)
	l.SetHighWatermark(l.LogEndOffset())
	res, err := l.Read(0, 1<<20, l.LogEndOffset(), true)
	if err != nil {
		t.Fatal(err)
	}
	if n := m.RunRetention(); n == 0 {
		t.Fatal("nothing deleted")
	}
	deleted := func() int {
		ents, _ := os.ReadDir(l.Dir())
		n := 0
		for _, e := range ents {
			if strings.HasSuffix(e.Name(), DeletedFileSuffix) {
				n++
			}
		}
		return n
	}
	if deleted() == 0 {
		t.Fatal("no .deleted files right after retention")
	}
	if got := readAllBatches(t, res); len(got) == 0 || got[0].BaseOffset() != 0 {
		t.Fatal("region of a deleted segment unreadable during the delay")
	}
	testwait.For(t, 5*time.Second, func() error {
		if n := deleted(); n != 0 {
			return errorf("%d .deleted files left", n)
		}
		return nil
	})
	_, err = l.Read(0, 100, l.LogEndOffset(), true)
	errorIs(t, err, ErrOffsetOutOfRange)
}

// DeleteRecords (KIP-107) moves the log start offset, never above the
// high watermark, and drops segments below it.
func TestStorageDeleteRecordsBefore(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "t-0")
	clock := newFakeClock()
	l := openTestLog(t, dir, smallConfig(), clock, nil)
	defer l.Close()
	fillSegments(t, l, clock, 30)
	_, err := l.DeleteRecordsBefore(5)
	errorIs(t, err, ErrOffsetOutOfRange) // HW is 0
	l.SetHighWatermark(40)
	segs := l.NumSegments()
	start, err := l.DeleteRecordsBefore(37)
	if err != nil || start != 37 || l.LogStartOffset() != 37 {
		t.Fatalf("DeleteRecordsBefore(37) = %d, %v", start, err)
	}
	if l.NumSegments() >= segs {
		t.Fatal("no segment dropped")
	}
	_, err = l.Read(36, 100, 40, true)
	errorIs(t, err, ErrOffsetOutOfRange)
	got := readBatches(t, l, 37, 40)
	if len(got) == 0 || got[0].BaseOffset() > 37 || got[0].LastOffset() < 37 {
		t.Fatalf("first batch after delete-records: %v", got)
	}
	if s, _ := l.DeleteRecordsBefore(10); s != 37 {
		t.Fatalf("moving the start back returned %d", s)
	}
}
