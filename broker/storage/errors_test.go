package storage

import (
	"bytes"
	"context"
	"errors"
	"os"
	"path/filepath"
	"testing"

	"samsa/broker/record"
	"samsa/kafka"
)

// An append whose write fails reports ErrStorage, publishes nothing, takes
// the log offline, and after an unclean restart exactly the acknowledged
// batches are there: no silent loss, no torn tail.
func TestStorageInjectedWriteError(t *testing.T) {
	for _, failAt := range []int{0, 1, 3, 7} {
		dir := filepath.Join(t.TempDir(), "t-0")
		clock := newFakeClock()
		efs := newErrorFS(OSFS{})
		l := openTestLog(t, dir, smallConfig(), clock, func(o *LogOptions) { o.FS = efs })
		var acked [][]byte
		for i := 0; i < 5; i++ {
			b := testBatch(t, 2, 300, clock.Now().UnixMilli())
			if _, err := l.AppendAsLeader(b, 0); err != nil {
				t.Fatal(err)
			}
			acked = append(acked, b)
		}
		leo := l.LogEndOffset()
		efs.failAfter(opWrite, failAt)
		var failed bool
		for i := 0; i < 20 && !failed; i++ {
			b := testBatch(t, 2, 300, clock.Now().UnixMilli())
			_, err := l.AppendAsLeader(b, 0)
			if err == nil {
				acked = append(acked, b)
				leo = l.LogEndOffset()
				continue
			}
			errorIs(t, err, ErrStorage)
			errorIs(t, err, errInjected)
			failed = true
		}
		if !failed {
			t.Fatalf("failAt %d: no append failed", failAt)
		}
		if l.LogEndOffset() != leo {
			t.Fatalf("LEO moved to %d after a failed append (was %d)", l.LogEndOffset(), leo)
		}
		efs.heal()
		_, err := l.AppendAsLeader(testBatch(t, 1, 10, 0), 0)
		errorIs(t, err, ErrStorage) // offline stays offline
		if got := readBatches(t, l, 0, l.LogEndOffset()); len(got) != len(acked) {
			t.Fatalf("read %d batches before restart, want %d", len(got), len(acked))
		}
		if err := l.Close(); err == nil {
			t.Fatal("Close of a failed log returned nil")
		}
		l2 := openTestLog(t, dir, smallConfig(), clock, func(o *LogOptions) { o.CleanShutdown = false })
		got := readBatches(t, l2, 0, l2.LogEndOffset())
		if len(got) != len(acked) || l2.LogEndOffset() != leo {
			t.Fatalf("failAt %d: after restart %d batches LEO %d, want %d LEO %d", failAt, len(got), l2.LogEndOffset(), len(acked), leo)
		}
		for i := range got {
			if !bytes.Equal(got[i], acked[i]) {
				t.Fatalf("batch %d differs after restart", i)
			}
		}
		l2.Close()
	}
}

// A failed fsync is reported and does not advance the recovery point.
func TestStorageInjectedSyncError(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "t-0")
	clock := newFakeClock()
	efs := newErrorFS(OSFS{})
	l := openTestLog(t, dir, smallConfig(), clock, func(o *LogOptions) { o.FS = efs })
	defer l.Close()
	if _, err := l.AppendAsLeader(testBatch(t, 2, 100, 0), 0); err != nil {
		t.Fatal(err)
	}
	efs.failAfter(opSync, 0)
	err := l.Flush()
	errorIs(t, err, ErrStorage)
	if l.RecoveryPoint() != 0 {
		t.Fatalf("recovery point %d after failed flush", l.RecoveryPoint())
	}
	// flush.messages=1 makes the append path fsync: the append fails.
	cfg := smallConfig()
	cfg.FlushMessages = 1
	dir2 := filepath.Join(t.TempDir(), "t-1")
	l2 := openTestLog(t, dir2, cfg, clock, func(o *LogOptions) { o.FS = efs })
	defer l2.Close()
	_, err = l2.AppendAsLeader(testBatch(t, 1, 10, 0), 0)
	errorIs(t, err, ErrStorage)
}

// A failed rename during retention is reported, and the segment stays
// readable.
func TestStorageInjectedRenameError(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "t-0")
	clock := newFakeClock()
	efs := newErrorFS(OSFS{})
	cfg := smallConfig()
	cfg.RetentionBytes = 0
	l := openTestLog(t, dir, cfg, clock, func(o *LogOptions) { o.FS = efs })
	defer l.Close()
	for i := 0; i < 20; i++ {
		if _, err := l.AppendAsLeader(testBatch(t, 2, 300, clock.Now().UnixMilli()), 0); err != nil {
			t.Fatal(err)
		}
	}
	l.SetHighWatermark(l.LogEndOffset())
	efs.failAfter(opRename, 0)
	_, err := l.DeleteOldSegments()
	errorIs(t, err, ErrStorage)
	if got := readBatches(t, l, l.LogStartOffset(), l.LogEndOffset()); len(got) == 0 {
		t.Fatal("nothing readable after failed retention")
	}
}

// A Manager whose checkpoint writes fail does not claim a clean shutdown.
func TestStorageManagerCheckpointErrorNoCleanMarker(t *testing.T) {
	root := t.TempDir()
	clock := newFakeClock()
	efs := newErrorFS(OSFS{})
	m := newTestManager(t, []string{root}, clock, func(c *ManagerConfig) { c.FS = efs })
	l, err := m.GetOrCreateLog(kafka.TopicPartition{Topic: "x", Partition: 0}, smallConfig())
	if err != nil {
		t.Fatal(err)
	}
	if _, err := l.AppendAsLeader(testBatch(t, 1, 10, 0), 0); err != nil {
		t.Fatal(err)
	}
	efs.failAfter(opRename, 0)
	if err := m.Close(); !errors.Is(err, ErrStorage) {
		t.Fatalf("Close: %v, want ErrStorage", err)
	}
	if _, err := os.Stat(filepath.Join(root, CleanShutdownFile)); !os.IsNotExist(err) {
		t.Fatalf("clean shutdown marker written after failure: %v", err)
	}
	// The next start recovers and finds the batch.
	m2 := newTestManager(t, []string{root}, clock, nil)
	defer m2.Close()
	l2, ok := m2.Log(kafka.TopicPartition{Topic: "x", Partition: 0})
	if !ok || l2.LogEndOffset() != 1 {
		t.Fatalf("after restart: %v %v", ok, l2)
	}
	_ = context.Background
}

// Validation errors map to the record package's sentinels and append
// nothing.
func TestStorageAppendValidation(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "t-0")
	clock := newFakeClock()
	cfg := smallConfig()
	cfg.MaxMessageBytes = 1000
	l := openTestLog(t, dir, cfg, clock, nil)
	defer l.Close()
	good := testBatch(t, 2, 10, 0)

	bad := append([]byte(nil), good...)
	bad[len(bad)-1] ^= 0xff // breaks the CRC
	_, err := l.AppendAsLeader(append(append([]byte(nil), good...), bad...), 0)
	errorIs(t, err, record.ErrCorrupt)

	_, err = l.AppendAsLeader(testBatch(t, 1, 2000, 0), 0)
	errorIs(t, err, record.ErrTooLarge)

	_, err = l.AppendAsLeader(good[:len(good)-3], 0)
	errorIs(t, err, record.ErrShortBatch)
	errorIs(t, err, record.ErrCorrupt)

	// A record count that does not match the offset deltas.
	inv := append([]byte(nil), good...)
	record.Batch(inv).SetBaseOffset(0)
	inv[60] = 3 // numRecords low byte: 3 instead of 2
	record.Batch(inv).UpdateCRC()
	_, err = l.AppendAsLeader(inv, 0)
	errorIs(t, err, record.ErrInvalidRecord)

	cfg.MessageTimestampDifferenceMaxMs = 1000
	if err := l.SetConfig(cfg); err != nil {
		t.Fatal(err)
	}
	_, err = l.AppendAsLeader(testBatch(t, 1, 10, clock.Now().UnixMilli()-5000), 0)
	errorIs(t, err, ErrInvalidTimestamp)

	cfg.MessageTimestampDifferenceMaxMs = NoLimit
	if err := l.SetConfig(cfg); err != nil {
		t.Fatal(err)
	}
	// Compacted topics need keys (Kafka's LogValidator).
	cfg.CleanupPolicy = CleanupCompact
	if err := l.SetConfig(cfg); err != nil {
		t.Fatal(err)
	}
	keyless, err := record.Build(record.NewBuildHeader(0, 0), []record.Record{{Value: []byte("v")}}, record.CodecNone)
	if err != nil {
		t.Fatal(err)
	}
	_, err = l.AppendAsLeader(keyless, 0)
	errorIs(t, err, record.ErrInvalidRecord)
	cfg.CleanupPolicy = CleanupDelete
	if err := l.SetConfig(cfg); err != nil {
		t.Fatal(err)
	}
	if l.LogEndOffset() != 0 || l.Size() != 0 {
		t.Fatalf("rejected appends left LEO %d size %d", l.LogEndOffset(), l.Size())
	}
	if _, err := l.AppendAsLeader(good, 0); err != nil {
		t.Fatal(err)
	}
}
