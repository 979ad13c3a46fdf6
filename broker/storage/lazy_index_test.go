package storage

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/sirupsen/logrus"

	"samsa/broker/record"
)

// Tests of the lazy .index and .timeindex files (doc.go, "Lazy index
// files"): a new log has none, the first entries written create them, a
// segment holding data has both once it rolls or closes, and every path
// (lookups, restart, crash, truncation, deletion, compaction) works with
// them absent.

// indexFilesIn returns the names of the .index and .timeindex files in
// dir, sorted.
func indexFilesIn(t *testing.T, dir string) []string {
	t.Helper()
	ents, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, e := range ents {
		if ext := filepath.Ext(e.Name()); ext == IndexFileSuffix || ext == TimeIndexFileSuffix {
			out = append(out, e.Name())
		}
	}
	slices.Sort(out)
	return out
}

// fileSize returns the size of path, failing the test when it is missing.
func fileSize(t *testing.T, path string) int64 {
	t.Helper()
	fi, err := os.Stat(path)
	if err != nil {
		t.Fatal(err)
	}
	return fi.Size()
}

// logHook records the messages of a logger.
type logHook struct {
	mu   sync.Mutex
	msgs []string
}

func (h *logHook) Levels() []logrus.Level { return logrus.AllLevels }

func (h *logHook) Fire(e *logrus.Entry) error {
	h.mu.Lock()
	defer h.mu.Unlock()
	h.msgs = append(h.msgs, e.Message)
	return nil
}

// count returns how many messages contain substr.
func (h *logHook) count(substr string) int {
	h.mu.Lock()
	defer h.mu.Unlock()
	n := 0
	for _, m := range h.msgs {
		if strings.Contains(m, substr) {
			n++
		}
	}
	return n
}

// withHook makes a log's logger write to the test log and to a new hook.
func withHook(t *testing.T) (*logHook, func(*LogOptions)) {
	h := &logHook{}
	l := logrus.New()
	l.SetOutput(testWriter{t})
	l.AddHook(h)
	return h, func(o *LogOptions) { o.Logger = l }
}

// timedBatch is one batch appended by appendTimed.
type timedBatch struct{ base, last, ts int64 }

// appendTimed appends n batches of two records with valueSize-byte values
// and strictly increasing timestamps (10 ms apart, after every batch of
// earlier).
func appendTimed(t *testing.T, l *Log, earlier []timedBatch, n, valueSize int) []timedBatch {
	t.Helper()
	ts := int64(1_700_000_000_000)
	if len(earlier) > 0 {
		ts = earlier[len(earlier)-1].ts
	}
	out := earlier
	for i := 0; i < n; i++ {
		ts += 10
		info, err := l.AppendAsLeader(testBatch(t, 2, valueSize, ts), 0)
		if err != nil {
			t.Fatal(err)
		}
		out = append(out, timedBatch{base: info.FirstOffset, last: info.LastOffset, ts: ts})
	}
	return out
}

// checkLookups checks that every batch is found by offset (Read) and by
// timestamp (OffsetForTimestamp, at and just before its timestamp), and
// that each segment's largest timestamp (retention.ms) is its last batch's.
func checkLookups(t *testing.T, l *Log, batches []timedBatch) {
	t.Helper()
	for _, b := range batches {
		for _, off := range []int64{b.base, b.last} {
			res, err := l.Read(off, 1, l.LogEndOffset(), true)
			if err != nil || len(res.Regions) != 1 {
				t.Fatalf("read %d: %v %+v", off, err, res)
			}
			got := readAllBatches(t, res)[0]
			if got.BaseOffset() != b.base {
				t.Fatalf("read %d returned the batch at %d, want %d", off, got.BaseOffset(), b.base)
			}
		}
		for _, ts := range []int64{b.ts, b.ts - 5} {
			to, found, err := l.OffsetForTimestamp(ts)
			if err != nil || !found || to.Offset != b.base || to.Timestamp != b.ts {
				t.Fatalf("offset for timestamp %d: %+v found %v err %v, want offset %d timestamp %d", ts, to, found, err, b.base, b.ts)
			}
		}
	}
	segs := l.Segments()
	for i, s := range segs {
		var want int64 = -1
		for _, b := range batches {
			if b.base >= s.base && (i+1 == len(segs) || b.base < segs[i+1].base) {
				want = b.ts
			}
		}
		if want >= 0 && s.LargestTimestamp() != want {
			t.Fatalf("segment %d: largest timestamp %d, want %d", s.base, s.LargestTimestamp(), want)
		}
	}
}

// TestStorageLazyIndexNewLog: a new log creates no index file, neither when
// flushed nor closed, and reopens (cleanly or not) without rebuilding or
// creating one; its first append works as before.
func TestStorageLazyIndexNewLog(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "t-0")
	clock := newFakeClock()
	l := openTestLog(t, dir, smallConfig(), clock, nil)
	if got := indexFilesIn(t, dir); len(got) != 0 {
		t.Fatalf("new log has index files %v", got)
	}
	if err := l.Flush(); err != nil {
		t.Fatal(err)
	}
	if err := l.Close(); err != nil {
		t.Fatal(err)
	}
	if got := indexFilesIn(t, dir); len(got) != 0 {
		t.Fatalf("closed empty log has index files %v", got)
	}
	for _, clean := range []bool{true, false} {
		hook, logTo := withHook(t)
		l := openTestLog(t, dir, smallConfig(), clock, func(o *LogOptions) { logTo(o); o.CleanShutdown = clean })
		if n := hook.count("rebuilding indexes"); n != 0 {
			t.Fatalf("clean=%v: %d index rebuilds of an empty log", clean, n)
		}
		if got := indexFilesIn(t, dir); len(got) != 0 || l.LogEndOffset() != 0 {
			t.Fatalf("clean=%v: reopened with index files %v, LEO %d", clean, got, l.LogEndOffset())
		}
		if err := l.Close(); err != nil {
			t.Fatal(err)
		}
	}
	l = openTestLog(t, dir, smallConfig(), clock, nil)
	defer l.Close()
	checkLookups(t, l, appendTimed(t, l, nil, 3, 50))
}

// TestStorageLazyIndexFirstEntry: the index files appear when the first
// entries are written to disk (here by Flush), preallocated while the
// segment is active, and lookups are the same before and after; a segment
// with data but no entries gets no file from Flush.
func TestStorageLazyIndexFirstEntry(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "t-0")
	cfg := smallConfig() // an entry after more than 256 bytes, 1024-byte indexes
	l := openTestLog(t, dir, cfg, newFakeClock(), nil)
	defer l.Close()
	batches := appendTimed(t, l, nil, 1, 50)
	if err := l.Flush(); err != nil {
		t.Fatal(err)
	}
	if got := indexFilesIn(t, dir); len(got) != 0 {
		t.Fatalf("flushed segment without index entries has index files %v", got)
	}
	active := l.Segments()[0]
	for i := 0; i < 20 && active.offsetIndex.Entries() == 0; i++ {
		batches = appendTimed(t, l, batches, 1, 100)
	}
	if active.offsetIndex.Entries() == 0 || active.timeIndex.Entries() == 0 || l.NumSegments() != 1 {
		t.Fatalf("%d offset and %d time entries in %d segments", active.offsetIndex.Entries(), active.timeIndex.Entries(), l.NumSegments())
	}
	if got := indexFilesIn(t, dir); len(got) != 0 {
		t.Fatalf("index files %v before any was written", got)
	}
	checkLookups(t, l, batches)
	if err := l.Flush(); err != nil {
		t.Fatal(err)
	}
	want := []string{"00000000000000000000.index", "00000000000000000000.timeindex"}
	if got := indexFilesIn(t, dir); !slices.Equal(got, want) {
		t.Fatalf("after the first entries were flushed: index files %v, want %v", got, want)
	}
	for suffix, size := range map[string]int64{IndexFileSuffix: 1024, TimeIndexFileSuffix: 1020} {
		if got := fileSize(t, segmentFileName(dir, 0, suffix)); got != size {
			t.Fatalf("active %s is %d bytes, want %d (preallocated)", suffix, got, size)
		}
	}
	checkLookups(t, l, batches)
	entries := int64(active.offsetIndex.Entries())
	if err := l.Close(); err != nil {
		t.Fatal(err)
	}
	if got := fileSize(t, segmentFileName(dir, 0, IndexFileSuffix)); got != entries*offsetIndexEntrySize {
		t.Fatalf("closed .index is %d bytes, want %d (trimmed)", got, entries*offsetIndexEntrySize)
	}
}

// TestStorageLazyIndexRestart reopens logs after a clean close and after a
// simulated hard kill, with index files present, never written, or
// removed: every batch is found by offset and by time, a segment holding
// data has both index files after a clean close or any load, and a clean
// restart of a cleanly closed log rebuilds nothing.
func TestStorageLazyIndexRestart(t *testing.T) {
	cases := []struct {
		name  string
		n     int  // batches of ~120 bytes; smallConfig rolls at 4096
		flush bool // Flush before the end
		crash bool // crashLog instead of Close
		strip []string
		// rebuilds: segments the reopen must rebuild (-1: at least one)
		rebuilds int
		// recoveries: segments recovery must re-read (-1: any number)
		recoveries int
	}{
		{name: "clean close, one small batch", n: 1},
		{name: "clean close, several segments", n: 80},
		{name: "hard kill, index never written", n: 3, crash: true, recoveries: 1},
		{name: "hard kill, several segments", n: 80, crash: true, recoveries: -1},
		{name: "hard kill after flush", n: 80, flush: true, crash: true, recoveries: 1},
		{name: "clean close, both files removed", n: 80, strip: []string{IndexFileSuffix, TimeIndexFileSuffix}, rebuilds: -1},
		{name: "clean close, time index removed", n: 80, strip: []string{TimeIndexFileSuffix}, rebuilds: -1},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			dir := filepath.Join(t.TempDir(), "t-0")
			clock := newFakeClock()
			l := openTestLog(t, dir, smallConfig(), clock, nil)
			batches := appendTimed(t, l, nil, tc.n, 50)
			if tc.flush {
				if err := l.Flush(); err != nil {
					t.Fatal(err)
				}
			}
			rp := l.RecoveryPoint()
			if tc.crash {
				crashLog(l)
			} else if err := l.Close(); err != nil {
				t.Fatal(err)
			}
			for _, base := range segmentBases(t, dir) {
				for _, suffix := range tc.strip {
					if err := os.Remove(segmentFileName(dir, base, suffix)); err != nil {
						t.Fatal(err)
					}
				}
			}
			hook, logTo := withHook(t)
			l2 := openTestLog(t, dir, smallConfig(), clock, func(o *LogOptions) {
				logTo(o)
				o.CleanShutdown = !tc.crash
				o.RecoveryPoint = rp
			})
			defer l2.Close()
			n := hook.count("rebuilding indexes")
			if (tc.rebuilds == -1 && n == 0) || (tc.rebuilds >= 0 && n != tc.rebuilds) {
				t.Fatalf("%d index rebuilds at load, want %d (-1: some)", n, tc.rebuilds)
			}
			if n := hook.count("recovering segment past the recovery point"); tc.recoveries >= 0 && n != tc.recoveries {
				t.Fatalf("%d segments recovered, want %d", n, tc.recoveries)
			}
			if l2.LogEndOffset() != batches[len(batches)-1].last+1 {
				t.Fatalf("LEO %d, want %d", l2.LogEndOffset(), batches[len(batches)-1].last+1)
			}
			checkLookups(t, l2, batches)
			segs := l2.Segments()
			for _, s := range segs[:len(segs)-1] {
				if !s.indexFilesExist() {
					t.Fatalf("inactive segment %d lacks an index file after load", s.base)
				}
			}
			if err := l2.Close(); err != nil {
				t.Fatal(err)
			}
			for _, base := range segmentBases(t, dir) {
				for _, suffix := range []string{IndexFileSuffix, TimeIndexFileSuffix} {
					fileSize(t, segmentFileName(dir, base, suffix))
				}
			}
			hook, logTo = withHook(t)
			l3 := openTestLog(t, dir, smallConfig(), clock, logTo)
			defer l3.Close()
			if n := hook.count("rebuilding indexes"); n != 0 {
				t.Fatalf("%d index rebuilds after a clean close", n)
			}
			checkLookups(t, l3, batches)
		})
	}
}

// TestStorageLazyIndexTruncateAndDelete truncates, fully truncates and
// deletes records of logs whose active segment has index entries in memory
// only: no index file appears for them, lookups stay right, deleted
// segments leave no file behind.
func TestStorageLazyIndexTruncateAndDelete(t *testing.T) {
	root := t.TempDir()
	clock := newFakeClock()

	dir := filepath.Join(root, "t-0")
	l := openTestLog(t, dir, smallConfig(), clock, nil)
	defer l.Close()
	batches := appendTimed(t, l, nil, 16, 50)
	if l.NumSegments() != 1 || l.Segments()[0].offsetIndex.Entries() == 0 {
		t.Fatalf("want one segment with entries in memory; %d segments", l.NumSegments())
	}
	keep := batches[:8]
	if err := l.TruncateTo(keep[len(keep)-1].last + 1); err != nil {
		t.Fatal(err)
	}
	if got := indexFilesIn(t, dir); len(got) != 0 {
		t.Fatalf("truncation created index files %v", got)
	}
	batches = appendTimed(t, l, keep, 4, 50)
	checkLookups(t, l, batches)
	if err := l.TruncateFullyAndStartAt(100); err != nil {
		t.Fatal(err)
	}
	if got, logs := indexFilesIn(t, dir), segmentBases(t, dir); len(got) != 0 || !slices.Equal(logs, []int64{100}) {
		t.Fatalf("after full truncation: index files %v, segments %v", got, logs)
	}
	checkLookups(t, l, appendTimed(t, l, nil, 3, 50))

	// DeleteRecords below the active segment: the rolled segments had
	// their files created at the roll and lose them with the segment.
	dir = filepath.Join(root, "t-1")
	l1 := openTestLog(t, dir, smallConfig(), clock, nil)
	defer l1.Close()
	batches = appendTimed(t, l1, nil, 2, 50)
	if err := l1.Roll(); err != nil {
		t.Fatal(err)
	}
	want := []string{"00000000000000000000.index", "00000000000000000000.timeindex"}
	if got := indexFilesIn(t, dir); !slices.Equal(got, want) {
		t.Fatalf("after a roll: index files %v, want %v", got, want)
	}
	batches = appendTimed(t, l1, batches, 2, 50)
	l1.SetHighWatermark(l1.LogEndOffset())
	if _, err := l1.DeleteRecordsBefore(batches[2].base); err != nil {
		t.Fatal(err)
	}
	ents, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range ents {
		if strings.HasPrefix(e.Name(), "00000000000000000000.") || strings.HasSuffix(e.Name(), DeletedFileSuffix) {
			t.Fatalf("file %s left after DeleteRecords", e.Name())
		}
	}
	checkLookups(t, l1, batches[2:])
}

// TestStorageLazyIndexCompaction: cleaned segments get both index files,
// the active segment (never cleaned) keeps none until it needs them, and
// the compacted log reopens without rebuilding any index.
func TestStorageLazyIndexCompaction(t *testing.T) {
	root := t.TempDir()
	l := openCleanerTestLog(t, root, cleanerTestConfig())
	buildLastValueLog(t, l, record.CodecNone)
	if !cleanOnce(t, newTestCleaner(l)) {
		t.Fatal("nothing cleaned")
	}
	segs := l.Segments()
	for _, s := range segs[:len(segs)-1] {
		if !s.indexFilesExist() {
			t.Fatalf("cleaned segment %d lacks an index file", s.base)
		}
	}
	active := segs[len(segs)-1]
	for _, suffix := range []string{IndexFileSuffix, TimeIndexFileSuffix} {
		if _, err := os.Stat(segmentFileName(l.Dir(), active.base, suffix)); !os.IsNotExist(err) {
			t.Fatalf("active segment's %s: %v, want none", suffix, err)
		}
	}
	want := readRecords(t, l)
	if err := l.Close(); err != nil {
		t.Fatal(err)
	}
	hook, logTo := withHook(t)
	opts := LogOptions{Dir: l.Dir(), TP: l.TopicPartition(), Config: cleanerTestConfig(), CleanShutdown: true}
	logTo(&opts)
	l2, err := OpenLog(opts)
	if err != nil {
		t.Fatal(err)
	}
	defer l2.Close()
	if n := hook.count("rebuilding indexes"); n != 0 {
		t.Fatalf("%d index rebuilds after a clean close of a compacted log", n)
	}
	if got := readRecords(t, l2); !slices.Equal(got, want) {
		t.Fatalf("reopened: %v, want %v", got, want)
	}
}
