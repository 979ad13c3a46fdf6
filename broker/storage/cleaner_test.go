package storage

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"reflect"
	"testing"
	"time"

	"samsa/broker/record"
	"samsa/kafka"
)

// ckv is one record in cleaner tests; tomb marks a null value.
type ckv struct {
	key, value string
	tomb       bool
}

// crec is a record read back from a log with its absolute offset.
type crec struct {
	offset int64
	key    string
	value  string
	tomb   bool
}

// cleanerTestConfig is a compacted topic config where any dirty byte makes
// a log cleanable and replaced segments are deleted at once.
func cleanerTestConfig() Config {
	c := DefaultConfig()
	c.CleanupPolicy = CleanupCompact
	c.MinCleanableRatio = 0
	c.FileDeleteDelayMs = 0
	return c
}

// openCleanerTestLog opens the log of partition t-0 under root.
func openCleanerTestLog(t *testing.T, root string, cfg Config) *Log {
	t.Helper()
	l, err := OpenLog(LogOptions{Dir: filepath.Join(root, "t-0"), TP: kafka.TopicPartition{Topic: "t", Partition: 0}, Config: cfg, CleanShutdown: true})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { l.Close() })
	return l
}

// appendBatch appends one batch holding recs with timestamp ts.
func appendBatch(t *testing.T, l *Log, codec record.Codec, ts int64, recs ...ckv) {
	t.Helper()
	rs := make([]record.Record, len(recs))
	for i, r := range recs {
		rs[i] = record.Record{OffsetDelta: int32(i), Key: []byte(r.key)}
		if !r.tomb {
			rs[i].Value = []byte(r.value)
		}
	}
	b, err := record.Build(record.NewBuildHeader(0, ts), rs, codec)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := l.AppendAsLeader(b, 0); err != nil {
		t.Fatal(err)
	}
}

func mustRoll(t *testing.T, l *Log) {
	t.Helper()
	if err := l.Roll(); err != nil {
		t.Fatal(err)
	}
}

// readRecords returns every record in the log's segments, in order.
func readRecords(t *testing.T, l *Log) []crec {
	t.Helper()
	var out []crec
	for _, s := range l.Segments() {
		_, stop, err := ScanBatches(s.log, s.Size(), s.base, func(_ int64, b record.Batch) error {
			recs, err := b.Records(0)
			if err != nil {
				return err
			}
			for _, r := range recs {
				out = append(out, crec{offset: b.BaseOffset() + int64(r.OffsetDelta), key: string(r.Key), value: string(r.Value), tomb: r.Value == nil})
			}
			return nil
		})
		if err != nil || stop != nil {
			t.Fatalf("segment %d: %v %v", s.base, err, stop)
		}
	}
	return out
}

func newTestCleaner(l ...*Log) *Cleaner {
	cfg := DefaultCleanerConfig()
	cfg.DedupeBufferSize = 1 << 20
	return NewCleaner(CleanerOptions{Config: cfg, Logs: func() []*Log { return l }})
}

func cleanOnce(t *testing.T, c *Cleaner) bool {
	t.Helper()
	cleaned, err := c.CleanOnce(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	return cleaned
}

func readCleanerCheckpoint(t *testing.T, root string) map[kafka.TopicPartition]int64 {
	t.Helper()
	m, err := NewOffsetCheckpointFile(OSFS{}, filepath.Join(root, CleanerOffsetCheckpointFile)).Read()
	if err != nil {
		t.Fatal(err)
	}
	return m
}

// buildLastValueLog writes two segments to clean and the active one:
//
//	segment 0: batch [k1=a(0) k2=a(1) k1=b(2)]
//	segment 3: batch [k2=b(3)], batch [k3=a(4)]
//	active 5:  batch [k1=c(5)]
func buildLastValueLog(t *testing.T, l *Log, codec record.Codec) {
	appendBatch(t, l, codec, 1000, ckv{"k1", "a", false}, ckv{"k2", "a", false}, ckv{"k1", "b", false})
	mustRoll(t, l)
	appendBatch(t, l, codec, 1000, ckv{"k2", "b", false})
	appendBatch(t, l, codec, 1000, ckv{"k3", "a", false})
	mustRoll(t, l)
	appendBatch(t, l, codec, 1000, ckv{"k1", "c", false})
	l.SetHighWatermark(l.LogEndOffset())
}

// TestStorageCleanerLastValueWins checks Kafka's compaction guarantee: in
// the cleaned part only the last record of each key remains, every
// retained record keeps its offset, the active segment is not touched, and
// progress lands in cleaner-offset-checkpoint.
func TestStorageCleanerLastValueWins(t *testing.T) {
	for _, codec := range []record.Codec{record.CodecNone, record.CodecGzip, record.CodecLZ4} {
		t.Run(codec.String(), func(t *testing.T) {
			root := t.TempDir()
			l := openCleanerTestLog(t, root, cleanerTestConfig())
			buildLastValueLog(t, l, codec)
			segs := l.Segments()
			active := segs[len(segs)-1]
			activeBefore, err := os.ReadFile(active.logPath)
			if err != nil {
				t.Fatal(err)
			}
			before := readRecords(t, l)

			if !cleanOnce(t, newTestCleaner(l)) {
				t.Fatal("nothing cleaned")
			}
			want := []crec{{2, "k1", "b", false}, {3, "k2", "b", false}, {4, "k3", "a", false}, {5, "k1", "c", false}}
			got := readRecords(t, l)
			if !reflect.DeepEqual(got, want) {
				t.Fatalf("after cleaning:\n got %v\nwant %v\n(before %v)", got, want, before)
			}
			if got := l.Segments(); got[len(got)-1] != active {
				t.Fatal("active segment replaced")
			}
			activeAfter, err := os.ReadFile(active.logPath)
			if err != nil || !bytes.Equal(activeBefore, activeAfter) {
				t.Fatalf("active segment changed (%v)", err)
			}
			if cp := readCleanerCheckpoint(t, root); cp[kafka.TopicPartition{Topic: "t", Partition: 0}] != 5 {
				t.Fatalf("checkpoint %v, want t-0 at 5", cp)
			}
			// Rebuilt batches keep their codec.
			for _, s := range l.Segments() {
				ScanBatches(s.log, s.Size(), s.base, func(_ int64, b record.Batch) error {
					if b.Compression() != codec {
						t.Errorf("batch at %d has codec %v, want %v", b.BaseOffset(), b.Compression(), codec)
					}
					return nil
				})
			}
			// Reads by offset still work, including inside a gap.
			res, err := l.Read(1, 1<<20, l.LogEndOffset(), true)
			if err != nil || len(res.Regions) == 0 || res.Regions[0].FirstOffset != 0 {
				t.Fatalf("Read(1) = %+v, %v", res, err)
			}
			// Nothing more to do: the dirty section is empty now.
			if cleanOnce(t, newTestCleaner(l)) {
				t.Fatal("cleaned again with no new data")
			}

			// The cleaned log reopens with the same records and offsets.
			leo := l.LogEndOffset()
			if err := l.Close(); err != nil {
				t.Fatal(err)
			}
			l2 := openCleanerTestLog(t, root, cleanerTestConfig())
			if got := readRecords(t, l2); !reflect.DeepEqual(got, want) || l2.LogEndOffset() != leo {
				t.Fatalf("reopened: %v (LEO %d), want %v (LEO %d)", got, l2.LogEndOffset(), want, leo)
			}
			for _, e := range mustReadDir(t, l2.Dir()) {
				if filepath.Ext(e) == ".cleaned" || filepath.Ext(e) == ".swap" || filepath.Ext(e) == ".deleted" {
					t.Fatalf("leftover file %s", e)
				}
			}
		})
	}
}

func mustReadDir(t *testing.T, dir string) []string {
	t.Helper()
	es, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, e := range es {
		names = append(names, e.Name())
	}
	return names
}

// setSegmentTime sets the modification time of a segment's .log.
func setSegmentTime(t *testing.T, s *Segment, at time.Time) {
	t.Helper()
	if err := os.Chtimes(s.logPath, at, at); err != nil {
		t.Fatal(err)
	}
}

// TestStorageCleanerTombstones checks delete.retention.ms as Kafka measures
// it: a tombstone survives the pass that first cleans it, and later goes
// only once its segment is older than the last clean segment's
// modification time minus delete.retention.ms.
func TestStorageCleanerTombstones(t *testing.T) {
	now := time.Now()
	for _, tc := range []struct {
		name      string
		retention time.Duration
		wantTomb  bool
	}{
		{"expired", 24 * time.Hour, false},
		{"retained", 7 * 24 * time.Hour, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			root := t.TempDir()
			cfg := cleanerTestConfig()
			cfg.DeleteRetentionMs = tc.retention.Milliseconds()
			cfg.SegmentBytes = 110 // each segment is its own cleaning group
			l := openCleanerTestLog(t, root, cfg)
			appendBatch(t, l, record.CodecNone, 1000, ckv{"k1", "v1", false}, ckv{"k2", "v1", false}, ckv{"k1", "", true})
			mustRoll(t, l)
			appendBatch(t, l, record.CodecNone, 1000, ckv{"k2", "v2", false})
			mustRoll(t, l)
			appendBatch(t, l, record.CodecNone, 1000, ckv{"k3", "x", false})
			segs := l.Segments()
			setSegmentTime(t, segs[0], now.Add(-96*time.Hour))
			setSegmentTime(t, segs[1], now.Add(-48*time.Hour))
			l.SetHighWatermark(l.LogEndOffset())
			c := newTestCleaner(l)

			if !cleanOnce(t, c) {
				t.Fatal("first pass cleaned nothing")
			}
			first := []crec{{2, "k1", "", true}, {3, "k2", "v2", false}, {4, "k3", "x", false}}
			if got := readRecords(t, l); !reflect.DeepEqual(got, first) {
				t.Fatalf("first pass: got %v, want %v", got, first)
			}
			// Cleaned segments keep their originals' modification times.
			if mt, _ := segmentLastModified(l.Segments()[0]); mt != now.Add(-96*time.Hour).UnixMilli() {
				t.Fatalf("cleaned segment time %d, want %d", mt, now.Add(-96*time.Hour).UnixMilli())
			}

			// New dirty data makes a second pass.
			mustRoll(t, l)
			appendBatch(t, l, record.CodecNone, 1000, ckv{"k4", "y", false})
			l.SetHighWatermark(l.LogEndOffset())
			if !cleanOnce(t, c) {
				t.Fatal("second pass cleaned nothing")
			}
			got := readRecords(t, l)
			hasTomb := len(got) > 0 && got[0] == crec{2, "k1", "", true}
			if hasTomb != tc.wantTomb {
				t.Fatalf("tombstone kept = %v, want %v (records %v)", hasTomb, tc.wantTomb, got)
			}
		})
	}
}

// TestStorageCleanerOffsetMapFull checks that a full offset map limits a
// pass to the offsets it mapped, as Kafka's buildOffsetMap does, and that
// the next pass continues from there.
func TestStorageCleanerOffsetMapFull(t *testing.T) {
	root := t.TempDir()
	l := openCleanerTestLog(t, root, cleanerTestConfig())
	var first, second []ckv
	for _, k := range []string{"k0", "k1", "k2", "k3", "k4"} {
		first = append(first, ckv{k, "a", false})
		second = append(second, ckv{k, "b", false})
	}
	for _, kv := range first {
		appendBatch(t, l, record.CodecNone, 1000, kv)
	}
	mustRoll(t, l)
	for _, kv := range second {
		appendBatch(t, l, record.CodecNone, 1000, kv)
	}
	mustRoll(t, l)
	appendBatch(t, l, record.CodecNone, 1000, ckv{"x", "x", false})
	l.SetHighWatermark(l.LogEndOffset())

	cfg := CleanerConfig{Threads: 1, DedupeBufferSize: 3 * (2 + offsetMapEntryOverhead), IOBufferLoadFactor: 1}
	c := NewCleaner(CleanerOptions{Config: cfg, Logs: func() []*Log { return []*Log{l} }})
	tp := kafka.TopicPartition{Topic: "t", Partition: 0}

	// Pass 1 maps k0..k2 (offsets 0-2) and fills: nothing is superseded yet.
	if !cleanOnce(t, c) {
		t.Fatal("pass 1 cleaned nothing")
	}
	if cp := readCleanerCheckpoint(t, root); cp[tp] != 3 {
		t.Fatalf("pass 1 checkpoint %v, want 3", cp)
	}
	if got := readRecords(t, l); len(got) != 11 {
		t.Fatalf("pass 1 removed records: %v", got)
	}
	// Pass 2 maps k3, k4, k0 (offsets 3-5): k0=a at offset 0 goes.
	if !cleanOnce(t, c) {
		t.Fatal("pass 2 cleaned nothing")
	}
	if cp := readCleanerCheckpoint(t, root); cp[tp] != 6 {
		t.Fatalf("pass 2 checkpoint %v, want 6", cp)
	}
	got := readRecords(t, l)
	if len(got) != 10 || got[0].offset != 1 {
		t.Fatalf("pass 2: %v", got)
	}
	// Further passes finish the job: each key once in the cleaned part.
	for i := 0; i < 5 && cleanOnce(t, c); i++ {
	}
	want := []crec{{5, "k0", "b", false}, {6, "k1", "b", false}, {7, "k2", "b", false}, {8, "k3", "b", false}, {9, "k4", "b", false}, {10, "x", "x", false}}
	if got := readRecords(t, l); !reflect.DeepEqual(got, want) {
		t.Fatalf("final: got %v, want %v", got, want)
	}
}

// TestStorageCleanerSelection checks when a log is cleanable:
// min.cleanable.dirty.ratio, min.compaction.lag.ms, the high watermark and
// cleanup.policy.
func TestStorageCleanerSelection(t *testing.T) {
	now := time.Now()
	build := func(t *testing.T, cfg Config, ts int64) *Log {
		l := openCleanerTestLog(t, t.TempDir(), cfg)
		appendBatch(t, l, record.CodecNone, ts, ckv{"k", "1", false}, ckv{"k", "2", false})
		mustRoll(t, l)
		appendBatch(t, l, record.CodecNone, ts, ckv{"k", "3", false})
		l.SetHighWatermark(l.LogEndOffset())
		return l
	}
	t.Run("delete policy is never compacted", func(t *testing.T) {
		cfg := cleanerTestConfig()
		cfg.CleanupPolicy = CleanupDelete
		if cleanOnce(t, newTestCleaner(build(t, cfg, now.UnixMilli()))) {
			t.Fatal("cleaned a delete-policy log")
		}
	})
	t.Run("compact,delete is compacted", func(t *testing.T) {
		cfg := cleanerTestConfig()
		cfg.CleanupPolicy = CleanupDeleteCompact
		if !cleanOnce(t, newTestCleaner(build(t, cfg, now.UnixMilli()))) {
			t.Fatal("compact,delete log not cleaned")
		}
	})
	t.Run("nothing below the high watermark", func(t *testing.T) {
		l := build(t, cleanerTestConfig(), now.UnixMilli())
		l.SetHighWatermark(0)
		if cleanOnce(t, newTestCleaner(l)) {
			t.Fatal("cleaned above the high watermark")
		}
	})
	t.Run("min.compaction.lag.ms holds back young segments", func(t *testing.T) {
		cfg := cleanerTestConfig()
		cfg.MinCompactionLagMs = time.Hour.Milliseconds()
		if cleanOnce(t, newTestCleaner(build(t, cfg, now.UnixMilli()))) {
			t.Fatal("cleaned records younger than min.compaction.lag.ms")
		}
		if !cleanOnce(t, newTestCleaner(build(t, cfg, now.Add(-2*time.Hour).UnixMilli()))) {
			t.Fatal("old records not cleaned")
		}
	})
	t.Run("max.compaction.lag.ms overrides the ratio", func(t *testing.T) {
		cfg := cleanerTestConfig()
		cfg.MinCleanableRatio = 1 // a ratio can never exceed it
		if cleanOnce(t, newTestCleaner(build(t, cfg, now.UnixMilli()))) {
			t.Fatal("cleaned with ratio 1 and no max lag")
		}
		cfg.MaxCompactionLagMs = time.Hour.Milliseconds()
		if cleanOnce(t, newTestCleaner(build(t, cfg, now.UnixMilli()))) {
			t.Fatal("cleaned records younger than max.compaction.lag.ms")
		}
		if !cleanOnce(t, newTestCleaner(build(t, cfg, now.Add(-2*time.Hour).UnixMilli()))) {
			t.Fatal("records older than max.compaction.lag.ms not cleaned")
		}
	})
	t.Run("min.cleanable.dirty.ratio", func(t *testing.T) {
		cfg := cleanerTestConfig()
		cfg.MinCleanableRatio = 0.5
		l := openCleanerTestLog(t, t.TempDir(), cfg)
		for i := 0; i < 20; i++ {
			appendBatch(t, l, record.CodecNone, now.UnixMilli(), ckv{"u" + string(rune('a'+i)), "v", false})
		}
		mustRoll(t, l)
		appendBatch(t, l, record.CodecNone, now.UnixMilli(), ckv{"k", "1", false})
		l.SetHighWatermark(l.LogEndOffset())
		c := newTestCleaner(l)
		if !cleanOnce(t, c) { // all dirty: ratio 1
			t.Fatal("fully dirty log not cleaned")
		}
		// One dirty segment after twenty clean batches stays below 0.5.
		mustRoll(t, l)
		appendBatch(t, l, record.CodecNone, now.UnixMilli(), ckv{"y", "y", false})
		l.SetHighWatermark(l.LogEndOffset())
		ltc, err := newLogToClean(l, l.truncationCount(), 20, true, now)
		if err != nil {
			t.Fatal(err)
		}
		if r := ltc.ratio(); r <= 0 || r >= 0.5 {
			t.Fatalf("dirty ratio %v, want in (0, 0.5)", r)
		}
		if cleanOnce(t, c) {
			t.Fatal("cleaned below min.cleanable.dirty.ratio")
		}
	})
}

// TestStorageCleanerEmptiedSegment cleans a segment whose every record is
// superseded: an empty segment keeps its place (as in Kafka), reads from
// its offsets move on to the next batch, and the log reopens.
func TestStorageCleanerEmptiedSegment(t *testing.T) {
	root := t.TempDir()
	cfg := cleanerTestConfig()
	cfg.SegmentBytes = 100 // one cleaning group per segment
	l := openCleanerTestLog(t, root, cfg)
	appendBatch(t, l, record.CodecNone, 1000, ckv{"k1", "a", false})
	mustRoll(t, l)
	appendBatch(t, l, record.CodecNone, 1000, ckv{"k1", "b", false})
	mustRoll(t, l)
	appendBatch(t, l, record.CodecNone, 1000, ckv{"k2", "c", false})
	l.SetHighWatermark(l.LogEndOffset())
	if !cleanOnce(t, newTestCleaner(l)) {
		t.Fatal("nothing cleaned")
	}
	want := []crec{{1, "k1", "b", false}, {2, "k2", "c", false}}
	if got := readRecords(t, l); !reflect.DeepEqual(got, want) {
		t.Fatalf("got %v, want %v", got, want)
	}
	res, err := l.Read(0, 1<<20, l.LogEndOffset(), true)
	if err != nil || len(res.Regions) == 0 || res.Regions[0].FirstOffset != 1 {
		t.Fatalf("Read(0) = %+v, %v; want the batch at offset 1", res, err)
	}
	l.Close()
	l2 := openCleanerTestLog(t, root, cfg)
	if got := readRecords(t, l2); !reflect.DeepEqual(got, want) || l2.LogEndOffset() != 3 || l2.LogStartOffset() != 0 {
		t.Fatalf("reopened: %v, LEO %d, start %d", got, l2.LogEndOffset(), l2.LogStartOffset())
	}
}
