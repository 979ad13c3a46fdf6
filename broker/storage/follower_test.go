package storage

import (
	"path/filepath"
	"testing"

	"samsa/broker/record"
)

// leaderBatches appends n batches on a leader log and returns the stored
// bytes, as a fetch would carry them to a follower.
func leaderBatches(t *testing.T, n int, epoch int32) []byte {
	t.Helper()
	l := openTestLog(t, filepath.Join(t.TempDir(), "t-0"), smallConfig(), newFakeClock(), nil)
	defer l.Close()
	var all []byte
	for i := 0; i < n; i++ {
		b := testBatch(t, 3, 50, 1000+int64(i))
		if _, err := l.AppendAsLeader(b, epoch); err != nil {
			t.Fatal(err)
		}
		all = append(all, b...)
	}
	return all
}

// A follower keeps the leader's offsets and epochs and rejects batches
// that do not move forward.
func TestStorageFollowerAppend(t *testing.T) {
	data := leaderBatches(t, 4, 7)
	l := openTestLog(t, filepath.Join(t.TempDir(), "t-0"), smallConfig(), newFakeClock(), nil)
	defer l.Close()
	info, err := l.AppendAsFollower(data)
	if err != nil {
		t.Fatal(err)
	}
	if info.FirstOffset != 0 || info.LastOffset != 11 || l.LogEndOffset() != 12 {
		t.Fatalf("info %+v LEO %d", info, l.LogEndOffset())
	}
	if e, off := l.EndOffsetForEpoch(7); e != 7 || off != 12 {
		t.Fatalf("EndOffsetForEpoch(7) = %d, %d", e, off)
	}
	// The same batches again: below the log end offset.
	_, err = l.AppendAsFollower(data)
	errorIs(t, err, ErrOffsetsOutOfOrder)
	// Out of order inside one append.
	b1, rest, _ := record.NextBatch(data)
	b2, _, _ := record.NextBatch(rest)
	swapped := append(append([]byte(nil), b2...), b1...)
	for _, b := range [][]byte{b2, b1} {
		record.Batch(b).SetBaseOffset(record.Batch(b).BaseOffset() + 100)
	}
	swapped = append(append([]byte(nil), b2...), b1...)
	_, err = l.AppendAsFollower(swapped)
	errorIs(t, err, ErrOffsetsOutOfOrder)
	// Corrupt bytes are refused.
	bad := append([]byte(nil), b1...)
	bad[len(bad)-1] ^= 1
	_, err = l.AppendAsFollower(bad)
	errorIs(t, err, record.ErrCorrupt)
	if l.LogEndOffset() != 12 {
		t.Fatalf("rejected appends moved LEO to %d", l.LogEndOffset())
	}
}

// Leader appends record their epoch's start offset (KIP-101); truncation
// removes epochs that start at or after the new end; the cache survives a
// restart.
func TestStorageLeaderEpochCacheIntegration(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "t-0")
	clock := newFakeClock()
	l := openTestLog(t, dir, smallConfig(), clock, nil)
	for epoch, n := range []int{3, 2, 4} {
		for i := 0; i < n; i++ {
			if _, err := l.AppendAsLeader(testBatch(t, 2, 10, 0), int32(epoch)); err != nil {
				t.Fatal(err)
			}
		}
	}
	// epochs: 0 -> [0,6), 1 -> [6,10), 2 -> [10,18)
	for _, c := range []struct {
		ask       int32
		wantEpoch int32
		wantEnd   int64
	}{{0, 0, 6}, {1, 1, 10}, {2, 2, 18}, {5, UndefinedEpoch, UndefinedEpochOffset}} {
		if e, end := l.EndOffsetForEpoch(c.ask); e != c.wantEpoch || end != c.wantEnd {
			t.Fatalf("EndOffsetForEpoch(%d) = %d, %d; want %d, %d", c.ask, e, end, c.wantEpoch, c.wantEnd)
		}
	}
	if err := l.TruncateTo(8); err != nil {
		t.Fatal(err)
	}
	if e, end := l.EndOffsetForEpoch(1); e != 1 || end != 8 {
		t.Fatalf("after truncate, EndOffsetForEpoch(1) = %d, %d; want 1, 8", e, end)
	}
	l.Close()
	l2 := openTestLog(t, dir, smallConfig(), clock, nil)
	defer l2.Close()
	if e, end := l2.EndOffsetForEpoch(1); e != 1 || end != 8 {
		t.Fatalf("after restart, EndOffsetForEpoch(1) = %d, %d", e, end)
	}
}

// TruncateFullyAndStartAt empties the log and restarts it at an offset.
func TestStorageTruncateFully(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "t-0")
	clock := newFakeClock()
	l := openTestLog(t, dir, smallConfig(), clock, nil)
	fillSegments(t, l, clock, 20)
	if err := l.TruncateFullyAndStartAt(1000); err != nil {
		t.Fatal(err)
	}
	if l.LogStartOffset() != 1000 || l.LogEndOffset() != 1000 || l.HighWatermark() != 1000 || l.NumSegments() != 1 {
		t.Fatalf("start %d end %d hw %d segments %d", l.LogStartOffset(), l.LogEndOffset(), l.HighWatermark(), l.NumSegments())
	}
	info, err := l.AppendAsLeader(testBatch(t, 1, 10, 0), 0)
	if err != nil || info.FirstOffset != 1000 {
		t.Fatalf("append after restart at 1000: %+v %v", info, err)
	}
	l.Close()
	l2 := openTestLog(t, dir, smallConfig(), clock, func(o *LogOptions) { o.LogStartOffset = 1000 })
	defer l2.Close()
	if l2.LogStartOffset() != 1000 || l2.LogEndOffset() != 1001 {
		t.Fatalf("reopened: start %d end %d", l2.LogStartOffset(), l2.LogEndOffset())
	}
}

// An empty follower log whose start offset falls inside the leader's first
// batch (DeleteRecords moved the leader's start into it) restarts at the
// batch's base offset instead of refusing it (Kafka's
// Partition.appendRecordsToFollowerOrFutureReplica).
func TestStorageFollowerStartInsideFirstBatch(t *testing.T) {
	data := leaderBatches(t, 3, 0) // batches 0-2, 3-5, 6-8
	_, rest, _ := record.NextBatch(data)
	l := openTestLog(t, filepath.Join(t.TempDir(), "t-0"), smallConfig(), newFakeClock(), nil)
	defer l.Close()
	if err := l.TruncateFullyAndStartAt(4); err != nil {
		t.Fatal(err)
	}
	info, err := l.AppendAsFollower(rest)
	if err != nil {
		t.Fatal(err)
	}
	if info.FirstOffset != 3 || l.LogStartOffset() != 3 || l.LogEndOffset() != 9 {
		t.Fatalf("info %+v start %d end %d", info, l.LogStartOffset(), l.LogEndOffset())
	}
	// A non-empty log still refuses a batch below its end.
	_, err = l.AppendAsFollower(rest)
	errorIs(t, err, ErrOffsetsOutOfOrder)
}
