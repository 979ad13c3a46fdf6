package storage

import (
	"bytes"
	"os"
	"path/filepath"
	"testing"

	"samsa/broker/record"
)

func TestStorageAppendReadReopen(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "t-0")
	clock := newFakeClock()
	l := openTestLog(t, dir, smallConfig(), clock, nil)
	var want [][]byte
	for i := 0; i < 50; i++ {
		b := testBatch(t, 1+i%5, 100, clock.Now().UnixMilli())
		info, err := l.AppendAsLeader(b, 3)
		if err != nil {
			t.Fatalf("append %d: %v", i, err)
		}
		if got := record.Batch(b).BaseOffset(); got != info.FirstOffset {
			t.Fatalf("batch base %d, info %d", got, info.FirstOffset)
		}
		if record.Batch(b).PartitionLeaderEpoch() != 3 {
			t.Fatalf("leader epoch not stamped")
		}
		want = append(want, b)
	}
	if l.NumSegments() < 3 {
		t.Fatalf("expected rolls, got %d segments", l.NumSegments())
	}
	check := func(l *Log) {
		t.Helper()
		got := readBatches(t, l, 0, l.LogEndOffset())
		if len(got) != len(want) {
			t.Fatalf("read %d batches, want %d", len(got), len(want))
		}
		for i := range got {
			if !bytes.Equal(got[i], want[i]) {
				t.Fatalf("batch %d differs", i)
			}
		}
	}
	check(l)
	leo := l.LogEndOffset()
	if err := l.Flush(); err != nil {
		t.Fatal(err)
	}
	if l.RecoveryPoint() != leo {
		t.Fatalf("recovery point %d, want %d", l.RecoveryPoint(), leo)
	}
	if err := l.Close(); err != nil {
		t.Fatal(err)
	}
	for _, unclean := range []bool{false, true} {
		l2 := openTestLog(t, dir, smallConfig(), clock, func(o *LogOptions) { o.CleanShutdown = !unclean })
		if l2.LogEndOffset() != leo {
			t.Fatalf("reopened LEO %d, want %d", l2.LogEndOffset(), leo)
		}
		check(l2)
		if err := l2.Close(); err != nil {
			t.Fatal(err)
		}
	}
	// Index files of inactive segments are trimmed to their entries.
	ents, _ := os.ReadDir(dir)
	for _, e := range ents {
		if filepath.Ext(e.Name()) == IndexFileSuffix {
			fi, _ := e.Info()
			if fi.Size()%offsetIndexEntrySize != 0 || fi.Size() >= 1024 {
				t.Fatalf("%s has size %d", e.Name(), fi.Size())
			}
		}
	}
}

func TestStorageReadBounds(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "t-0")
	clock := newFakeClock()
	l := openTestLog(t, dir, smallConfig(), clock, nil)
	defer l.Close()
	for i := 0; i < 10; i++ {
		if _, err := l.AppendAsLeader(testBatch(t, 2, 200, clock.Now().UnixMilli()), 0); err != nil {
			t.Fatal(err)
		}
	}
	_, err := l.Read(21, 100, 100, true)
	errorIs(t, err, ErrOffsetOutOfRange)
	_, err = l.Read(-1, 100, 100, true)
	errorIs(t, err, ErrOffsetOutOfRange)
	res, err := l.Read(20, 100, 100, true)
	if err != nil || res.Size() != 0 {
		t.Fatalf("read at LEO: %v, %d bytes", err, res.Size())
	}
	// maxBytes smaller than one batch: nothing without minOneBatch, one
	// whole batch with it (KIP-74).
	res, _ = l.Read(5, 10, 100, false)
	if res.Size() != 0 {
		t.Fatalf("read %d bytes with maxBytes 10", res.Size())
	}
	res, _ = l.Read(5, 10, 100, true)
	if len(res.Regions) != 1 || res.Regions[0].FirstOffset != 4 {
		t.Fatalf("minOneBatch read: %+v", res.Regions)
	}
	one := res.Size()
	// upTo (high watermark) cuts before the batch holding it.
	l.SetHighWatermark(6)
	res, _ = l.Read(0, 1<<20, l.HighWatermark(), true)
	if got := readAllBatches(t, res); len(got) == 0 || got[len(got)-1].LastOffset() != 5 {
		t.Fatalf("read to HW 6 ended at %v", got)
	}
	// maxBytes gives whole batches only.
	res, _ = l.Read(0, int(one)*2+1, 100, true)
	if res.Size() != one*2 {
		t.Fatalf("read %d bytes, want %d", res.Size(), one*2)
	}
}

func readAllBatches(t *testing.T, res ReadResult) []record.Batch {
	t.Helper()
	var buf bytes.Buffer
	if _, err := res.WriteTo(&buf); err != nil {
		t.Fatal(err)
	}
	var out []record.Batch
	for rest := buf.Bytes(); len(rest) > 0; {
		b, r, err := record.NextBatch(rest)
		if err != nil {
			t.Fatal(err)
		}
		out = append(out, b)
		rest = r
	}
	return out
}

// Inactive segments' indexes leave memory and close their descriptors;
// the first lookup loads them again, and results do not change.
func TestStorageInactiveIndexesEvicted(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "t-0")
	clock := newFakeClock()
	l := openTestLog(t, dir, smallConfig(), clock, nil)
	for i := 0; i < 30; i++ {
		if _, err := l.AppendAsLeader(testBatch(t, 2, 200, clock.Now().UnixMilli()+int64(i)), 0); err != nil {
			t.Fatal(err)
		}
	}
	evicted := func(s *Segment) bool {
		s.offsetIndex.x.mu.RLock()
		defer s.offsetIndex.x.mu.RUnlock()
		return s.offsetIndex.x.mu.evicted && s.offsetIndex.x.mu.buf == nil
	}
	check := func(l *Log) {
		t.Helper()
		segs := l.Segments()
		if len(segs) < 3 {
			t.Fatalf("%d segments", len(segs))
		}
		for i, s := range segs {
			if evicted(s) != (i < len(segs)-1) {
				t.Fatalf("segment %d of %d: evicted %v", i, len(segs), evicted(s))
			}
		}
		first := segs[0]
		entries := first.offsetIndex.Entries()
		last := first.offsetIndex.LastEntry()
		if entries == 0 {
			t.Fatal("first segment has no index entries")
		}
		// A read in the first segment reloads its index.
		got := readBatches(t, l, 0, l.LogEndOffset())
		if len(got) != 30 {
			t.Fatalf("read %d batches", len(got))
		}
		if evicted(first) || first.offsetIndex.Entries() != entries || first.offsetIndex.LastEntry() != last {
			t.Fatalf("reloaded index: evicted %v, %d entries (was %d), last %v (was %v)",
				evicted(first), first.offsetIndex.Entries(), entries, first.offsetIndex.LastEntry(), last)
		}
		if to, found, err := l.OffsetForTimestamp(clock.Now().UnixMilli() + 3); err != nil || !found || to.Offset != 6 {
			t.Fatalf("OffsetForTimestamp: %+v %v %v", to, found, err)
		}
	}
	check(l)
	l.Close()
	l2 := openTestLog(t, dir, smallConfig(), clock, nil)
	defer l2.Close()
	check(l2)
	// Truncating into an evicted segment makes it active again.
	segs := l2.Segments()
	if err := l2.TruncateTo(segs[1].BaseOffset() + 1); err != nil {
		t.Fatal(err)
	}
	if evicted(l2.Segments()[l2.NumSegments()-1]) {
		t.Fatal("the active segment after truncation is evicted")
	}
	if _, err := l2.AppendAsLeader(testBatch(t, 1, 10, 0), 0); err != nil {
		t.Fatal(err)
	}
}
