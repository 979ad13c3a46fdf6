package storage

import (
	"bytes"
	"encoding/binary"
	"os"
	"path/filepath"
	"testing"

	"samsa/broker/record"
	"samsa/kafka"
)

// FuzzStorageIndexEntries feeds arbitrary bytes as the content of an
// offset index and a time index file.
//
// Invariants: never panics; the accepted prefix is at most the input;
// accepted offset entries strictly increase in both fields and time
// entries strictly increase in timestamp; re-loading the accepted prefix
// accepts all of it; Lookup returns an entry <= the target (or the base).
func FuzzStorageIndexEntries(f *testing.F) {
	f.Add([]byte{}, int64(0))
	f.Add([]byte{0, 0, 0, 0, 0, 0, 0, 0}, int64(100))
	f.Add([]byte{0, 0, 0, 1, 0, 0, 0, 0, 0, 0, 0, 5, 0, 0, 0x10, 0, 0, 0, 0, 0, 0, 0, 0, 0}, int64(7))
	f.Add(bytes.Repeat([]byte{0xff}, 40), int64(1<<40))
	f.Fuzz(func(t *testing.T, raw []byte, base int64) {
		if len(raw) > 1<<16 {
			return
		}
		for _, kind := range []struct {
			size  int
			valid func(prev, cur []byte) bool
		}{{offsetIndexEntrySize, validOffsetEntry}, {timeIndexEntrySize, validTimeEntry}} {
			n := validIndexPrefix(raw, kind.size, kind.valid)
			if n*kind.size > len(raw) {
				t.Fatalf("accepted %d entries of %d bytes from %d bytes", n, kind.size, len(raw))
			}
			if again := validIndexPrefix(raw[:n*kind.size], kind.size, kind.valid); again != n {
				t.Fatalf("re-reading the valid prefix accepted %d of %d", again, n)
			}
			x := &indexFile{entrySize: kind.size, maxEntries: n + 1}
			x.mu.buf = raw[:n*kind.size]
			switch kind.size {
			case offsetIndexEntrySize:
				idx := &OffsetIndex{base: base, x: x}
				prev := OffsetPosition{Offset: -1 << 62, Position: -1}
				for i := 0; i < n; i++ {
					x.mu.RLock()
					e := idx.resolveLocked(i)
					x.mu.RUnlock()
					if i > 0 && (e.Offset <= prev.Offset || e.Position <= prev.Position) {
						t.Fatalf("offset entries not increasing: %v then %v", prev, e)
					}
					if got := idx.Lookup(e.Offset); got != e {
						t.Fatalf("Lookup(%d) = %v, want %v", e.Offset, got, e)
					}
					prev = e
				}
				if got := idx.Lookup(base + 12345); got.Offset > base+12345 && got.Offset != base {
					t.Fatalf("Lookup returned %v above target", got)
				}
			case timeIndexEntrySize:
				idx := &TimeIndex{base: base, x: x}
				var prevTS int64 = -1
				for i := 0; i < n; i++ {
					x.mu.RLock()
					e := idx.resolveLocked(i)
					x.mu.RUnlock()
					if i > 0 && e.Timestamp <= prevTS {
						t.Fatalf("time entries not increasing")
					}
					if got := idx.Lookup(e.Timestamp); got != e {
						t.Fatalf("Lookup(%d) = %v, want %v", e.Timestamp, got, e)
					}
					prevTS = e.Timestamp
				}
			}
		}
	})
}

// FuzzStorageSegmentScan runs the recovery scanner over arbitrary segment
// bytes.
//
// Invariants: never panics; the valid prefix is <= the input; scanning
// the valid prefix again accepts all of it with no stop reason and visits
// the same batches; visited batches are contiguous, in offset order, and
// each passes Validate.
func FuzzStorageSegmentScan(f *testing.F) {
	b1 := testBatch(f, 3, 20, 1000)
	b2 := testBatch(f, 1, 0, 2000)
	record.Batch(b2).SetBaseOffset(3)
	two := append(append([]byte(nil), b1...), b2...)
	f.Add(two, int64(0))
	f.Add(two[:len(two)-5], int64(0))
	f.Add(append(append([]byte(nil), b1...), 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0), int64(0))
	f.Add(b1, int64(10))
	f.Add([]byte{}, int64(0))
	f.Fuzz(func(t *testing.T, data []byte, base int64) {
		if len(data) > 1<<20 {
			return
		}
		type seen struct{ pos, base, next int64 }
		var first []seen
		valid, stop, err := ScanBatches(bytes.NewReader(data), int64(len(data)), base, func(pos int64, b record.Batch) error {
			if err := b.Validate(record.Limits{AllowOffsetGaps: true}); err != nil {
				t.Fatalf("visited an invalid batch: %v", err)
			}
			first = append(first, seen{pos, b.BaseOffset(), b.NextOffset()})
			return nil
		})
		if err != nil {
			t.Fatalf("in-memory read failed: %v", err)
		}
		if valid < 0 || valid > int64(len(data)) {
			t.Fatalf("valid %d outside [0, %d]", valid, len(data))
		}
		if (stop == nil) != (valid == int64(len(data))) {
			t.Fatalf("stop %v with valid %d of %d", stop, valid, len(data))
		}
		var pos int64
		for i, s := range first {
			if s.pos != pos || (i > 0 && s.base < first[i-1].next) || s.base < base {
				t.Fatalf("batch %d at %d (base %d) out of order", i, s.pos, s.base)
			}
			pos += int64(binary.BigEndian.Uint32(data[s.pos+8:])) + record.LogOverhead
		}
		var second []seen
		v2, stop2, _ := ScanBatches(bytes.NewReader(data[:valid]), valid, base, func(pos int64, b record.Batch) error {
			second = append(second, seen{pos, b.BaseOffset(), b.NextOffset()})
			return nil
		})
		if v2 != valid || stop2 != nil || len(second) != len(first) {
			t.Fatalf("rescan of valid prefix: %d (%v), %d batches; first %d, %d batches", v2, stop2, len(second), valid, len(first))
		}
	})
}

// FuzzStorageOpenDamagedLog writes arbitrary bytes as a segment's .log,
// .index and .timeindex and opens the log uncleanly.
//
// Invariants: OpenLog never panics and succeeds (damage is recovered, not
// fatal); every batch Read returns is valid and in offset order; the log
// takes a new append and reads it back.
func FuzzStorageOpenDamagedLog(f *testing.F) {
	b1 := testBatch(f, 2, 30, 1000)
	b2 := testBatch(f, 1, 5, 2000)
	record.Batch(b2).SetBaseOffset(2)
	good := append(append([]byte(nil), b1...), b2...)
	f.Add(good, []byte{0, 0, 0, 1, 0, 0, 0, 0}, []byte{})
	f.Add(good[:len(good)-7], []byte{0x7f, 0, 0, 0, 0, 0, 0x10, 0}, []byte{0, 0, 0, 0, 0, 0, 0, 9, 0, 0, 0, 1})
	f.Add([]byte{0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0x3d}, []byte{}, []byte{})
	f.Fuzz(func(t *testing.T, logBytes, indexBytes, timeBytes []byte) {
		if len(logBytes) > 1<<16 || len(indexBytes) > 1<<12 || len(timeBytes) > 1<<12 {
			return
		}
		dir := filepath.Join(t.TempDir(), "t-0")
		if err := os.MkdirAll(dir, 0o755); err != nil {
			t.Fatal(err)
		}
		checkDamagedLogOpens(t, dir, map[string][]byte{LogFileSuffix: logBytes, IndexFileSuffix: indexBytes, TimeIndexFileSuffix: timeBytes}, false)
	})
}

// FuzzStorageOpenLogMissingIndexes is FuzzStorageOpenDamagedLog with index
// files missing (lazy index files, doc.go): bit 0 of missing leaves out the
// .index, bit 1 the .timeindex, bit 2 opens cleanly. Same invariants, and
// a clean close leaves both index files next to a .log holding data.
func FuzzStorageOpenLogMissingIndexes(f *testing.F) {
	b1 := testBatch(f, 2, 30, 1000)
	f.Add(b1, []byte{0, 0, 0, 1, 0, 0, 0, 0}, uint8(3))
	f.Add(b1, []byte{}, uint8(1))
	f.Add(b1[:len(b1)-3], []byte{0, 0, 0, 1, 0, 0, 0, 0x10}, uint8(6))
	f.Add([]byte{}, []byte{}, uint8(7))
	f.Fuzz(func(t *testing.T, logBytes, indexBytes []byte, missing uint8) {
		if len(logBytes) > 1<<16 || len(indexBytes) > 1<<12 {
			return
		}
		dir := filepath.Join(t.TempDir(), "t-0")
		if err := os.MkdirAll(dir, 0o755); err != nil {
			t.Fatal(err)
		}
		files := map[string][]byte{LogFileSuffix: logBytes}
		if missing&1 == 0 {
			files[IndexFileSuffix] = indexBytes
		}
		if missing&2 == 0 {
			files[TimeIndexFileSuffix] = nil
		}
		checkDamagedLogOpens(t, dir, files, missing&4 != 0)
		for _, suffix := range []string{IndexFileSuffix, TimeIndexFileSuffix} {
			if _, err := os.Stat(segmentFileName(dir, 0, suffix)); err != nil {
				t.Fatalf("after a clean close of a log holding data: %v", err)
			}
		}
	})
}

// checkDamagedLogOpens writes files (suffix → bytes) as segment 0 in dir,
// opens the log (uncleanly unless clean), and checks the fuzz targets'
// invariants: the open succeeds, every batch read is valid and in offset
// order, and a new append is read back. It closes the log (cleanly, with
// the append in it).
func checkDamagedLogOpens(t *testing.T, dir string, files map[string][]byte, clean bool) {
	for suffix, data := range files {
		if err := os.WriteFile(segmentFileName(dir, 0, suffix), data, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	l, err := OpenLog(LogOptions{Dir: dir, TP: kafka.TopicPartition{Topic: "t", Partition: 0}, Config: smallConfig(), CleanShutdown: clean})
	if err != nil {
		t.Fatalf("open: %v", err)
	}
	defer l.Close()
	got := readBatches(t, l, l.LogStartOffset(), l.LogEndOffset())
	for i := 1; i < len(got); i++ {
		if got[i].BaseOffset() <= got[i-1].LastOffset() {
			t.Fatalf("batches out of order")
		}
	}
	leo := l.LogEndOffset()
	if _, err := l.AppendAsLeader(testBatch(t, 1, 3, 0), 0); err != nil {
		t.Fatalf("append after recovery: %v", err)
	}
	if last := readBatches(t, l, leo, l.LogEndOffset()); len(last) != 1 || last[0].BaseOffset() != leo {
		t.Fatalf("appended batch not readable at %d", leo)
	}
}
