package storage

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/sirupsen/logrus"

	"samsa/broker/record"
	"samsa/internal/testwait"
	"samsa/kafka"
)

// manualCleaner is the Cleaner's ManagedService without goroutines: the
// Manager forwards truncations to it, and the test runs passes itself.
type manualCleaner struct{ cleanerService }

func (s manualCleaner) Start(m *Manager) {
	fn := m.Logs
	s.c.logs.CompareAndSwap(nil, &fn)
}

func (manualCleaner) Stop() {}

// newTruncateTestLog returns a Manager-owned compacted log t-0 under root
// with a cleaner that only runs when the test calls CleanOnce.
func newTruncateTestLog(t *testing.T, root string) (*Log, *Cleaner) {
	t.Helper()
	l, c, _ := newTruncateTestManager(t, root)
	return l, c
}

// newTruncateTestManager is newTruncateTestLog, also returning the Manager.
func newTruncateTestManager(t *testing.T, root string) (*Log, *Cleaner, *Manager) {
	t.Helper()
	cfg := DefaultCleanerConfig()
	cfg.DedupeBufferSize = 1 << 20
	c := NewCleaner(CleanerOptions{Config: cfg, Logger: testLogger(t)})
	lcfg := cleanerTestConfig()
	// Small enough that each segment of buildDistinctLog is cleaned as
	// its own group, so segment bases survive a pass.
	lcfg.SegmentBytes = 400
	m, err := NewManager(ManagerConfig{Dirs: []string{root}, Logger: testLogger(t), LogConfig: lcfg,
		Cleaner: manualCleaner{cleanerService{c}}})
	if err != nil {
		t.Fatal(err)
	}
	if err := m.Load(context.Background()); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { m.Close() })
	l, err := m.GetOrCreateLog(kafka.TopicPartition{Topic: "t", Partition: 0}, lcfg)
	if err != nil {
		t.Fatal(err)
	}
	return l, c, m
}

// buildDistinctLog writes keys u0..u9 at offsets 0..9, one batch each, in
// segments [0..4] and [5..9], and z at 10 in the active segment; cleaning
// it removes nothing and sets the checkpoint to 10.
func buildDistinctLog(t *testing.T, l *Log, c *Cleaner, root string) {
	t.Helper()
	for i := 0; i < 10; i++ {
		if i == 5 {
			mustRoll(t, l)
		}
		appendBatch(t, l, record.CodecNone, 1000, ckv{fmt.Sprintf("u%d", i), "v", false})
	}
	mustRoll(t, l)
	appendBatch(t, l, record.CodecNone, 1000, ckv{"z", "v", false})
	l.SetHighWatermark(l.LogEndOffset())
	if !cleanOnce(t, c) {
		t.Fatal("nothing cleaned")
	}
	assertCleanerCheckpoint(t, root, 10)
}

func assertCleanerCheckpoint(t *testing.T, root string, want int64) {
	t.Helper()
	tp := kafka.TopicPartition{Topic: "t", Partition: 0}
	if got, ok := readCleanerCheckpoint(t, root)[tp]; !ok || got != want {
		t.Fatalf("cleaner checkpoint %d (present %v), want %d", got, ok, want)
	}
}

// refetch appends what a follower fetches after truncating to 7: key x
// three times (7, 8, 9), a roll, and z at 10 in the active segment.
func refetch(t *testing.T, l *Log) {
	t.Helper()
	for _, v := range []string{"x1", "x2", "x3"} {
		appendBatch(t, l, record.CodecNone, 1000, ckv{"x", v, false})
	}
	mustRoll(t, l)
	appendBatch(t, l, record.CodecNone, 1000, ckv{"z", "v", false})
	l.SetHighWatermark(l.LogEndOffset())
}

// keysAt lists "offset:key=value" of every record in l.
func keysAt(t *testing.T, l *Log) []string {
	t.Helper()
	var out []string
	for _, r := range readRecords(t, l) {
		out = append(out, fmt.Sprintf("%d:%s=%s", r.offset, r.key, r.value))
	}
	return out
}

// compactedRefetch is the log after refetch and a full clean: u0..u6, the
// last x, and z.
var compactedRefetch = []string{"0:u0=v", "1:u1=v", "2:u2=v", "3:u3=v", "4:u4=v", "5:u5=v", "6:u6=v", "9:x=x3", "10:z=v"}

// TestStorageCleanerTruncateLowersCheckpoint checks that a truncation
// through the Manager lowers cleaner-offset-checkpoint to the base of the
// segment that becomes active (Kafka's LogManager.truncateTo), a full
// truncation to the new start, and that one inside the active segment
// leaves it alone.
func TestStorageCleanerTruncateLowersCheckpoint(t *testing.T) {
	root := t.TempDir()
	l, c := newTruncateTestLog(t, root)
	buildDistinctLog(t, l, c, root)
	appendBatch(t, l, record.CodecNone, 1000, ckv{"z", "w", false}) // 11, active
	if err := l.TruncateTo(11); err != nil {                        // inside the active segment
		t.Fatal(err)
	}
	assertCleanerCheckpoint(t, root, 10)
	if err := l.TruncateTo(7); err != nil {
		t.Fatal(err)
	}
	assertCleanerCheckpoint(t, root, 5)
	if err := l.TruncateFullyAndStartAt(3); err != nil {
		t.Fatal(err)
	}
	assertCleanerCheckpoint(t, root, 3)
	if err := l.TruncateFullyAndStartAt(100); err != nil { // above: stays (below the start means "from the start")
		t.Fatal(err)
	}
	assertCleanerCheckpoint(t, root, 3)
}

// TestStorageCleanerTruncateThenRefetch is the follower case: after a
// truncation below the checkpoint and a re-fetch that takes the log end
// above the old checkpoint again, the re-fetched records are dirty and get
// compacted. Before truncations lowered the checkpoint, the duplicates of
// x stayed forever.
func TestStorageCleanerTruncateThenRefetch(t *testing.T) {
	for _, full := range []bool{false, true} {
		t.Run(fmt.Sprintf("full=%v", full), func(t *testing.T) {
			root := t.TempDir()
			l, c := newTruncateTestLog(t, root)
			buildDistinctLog(t, l, c, root)
			want := compactedRefetch
			if full {
				// A follower below the leader's start restarts at it.
				if err := l.TruncateFullyAndStartAt(7); err != nil {
					t.Fatal(err)
				}
				want = want[7:]
			} else if err := l.TruncateTo(7); err != nil {
				t.Fatal(err)
			}
			refetch(t, l)
			if !cleanOnce(t, c) {
				t.Fatal("re-fetched records not cleaned")
			}
			if got := keysAt(t, l); !reflect.DeepEqual(got, want) {
				t.Fatalf("records %v, want %v", got, want)
			}
			assertCleanerCheckpoint(t, root, 10)
		})
	}
}

// TestStorageCleanerTruncateRacesPass truncates the log and re-fetches at
// each point of a pass where no lock is held (deterministically, from the
// test hooks on the cleaning goroutine): the pass never swaps in or
// checkpoints what it computed from data read before the truncation, the
// log is not marked uncleanable, and the next pass compacts the re-fetched
// records.
func TestStorageCleanerTruncateRacesPass(t *testing.T) {
	// The re-fetched log before compaction.
	refetched := append(append([]string(nil), compactedRefetch[:7]...), "7:x=x1", "8:x=x2", "9:x=x3", "10:z=v")
	for _, stage := range []string{"counted", "swap", "checkpoint"} {
		t.Run(stage, func(t *testing.T) {
			root := t.TempDir()
			l, c := newTruncateTestLog(t, root)
			buildDistinctLog(t, l, c, root)
			// Make the log dirty again: duplicates of u8 and u9 (11, 12), so
			// this pass would remove u8 (8) and u9 (9) and checkpoint 13.
			appendBatch(t, l, record.CodecNone, 1000, ckv{"u8", "w", false})
			appendBatch(t, l, record.CodecNone, 1000, ckv{"u9", "w", false})
			mustRoll(t, l)
			appendBatch(t, l, record.CodecNone, 1000, ckv{"z", "w", false})
			l.SetHighWatermark(l.LogEndOffset())
			fired := false
			testHookCleanerPass = func(s string) {
				if s != stage || fired {
					return
				}
				fired = true
				if err := l.TruncateTo(7); err != nil {
					t.Error(err)
					return
				}
				refetch(t, l)
			}
			t.Cleanup(func() { testHookCleanerPass = nil })
			_, err := c.CleanOnce(context.Background())
			testHookCleanerPass = nil
			if !fired {
				t.Fatal("hook did not run")
			}
			if !errors.Is(err, errCleaningAborted) {
				t.Fatalf("CleanOnce = %v, want errCleaningAborted", err)
			}
			if u := c.UncleanablePartitions(); len(u) != 0 {
				t.Fatalf("uncleanable %v", u)
			}
			assertCleanerCheckpoint(t, root, 5)
			if got := keysAt(t, l); !reflect.DeepEqual(got, refetched) {
				t.Fatalf("records %v, want %v", got, refetched)
			}
			// Replaced segments are deleted by the Manager's delay queue,
			// asynchronously even with file.delete.delay.ms 0.
			testwait.For(t, 10*time.Second, func() error {
				for _, name := range mustReadDir(t, l.Dir()) {
					for _, suf := range []string{CleanedFileSuffix, SwapFileSuffix, DeletedFileSuffix} {
						if strings.HasSuffix(name, suf) {
							return errorf("leftover %s", name)
						}
					}
				}
				return nil
			})
			if !cleanOnce(t, c) {
				t.Fatal("re-fetched records not cleaned")
			}
			if got := keysAt(t, l); !reflect.DeepEqual(got, compactedRefetch) {
				t.Fatalf("records %v, want %v", got, compactedRefetch)
			}
			assertCleanerCheckpoint(t, root, 10)
		})
	}
}

// TestStorageCleanerTruncateFailsReadsAbort cuts the whole log under a
// pass after its offset map was built, so the pass fails reading segments
// that are gone: that is an abort (rule 4 of cleaner_checkpoint.go), not a
// failure of the log's data, and the log stays cleanable.
func TestStorageCleanerTruncateFailsReadsAbort(t *testing.T) {
	root := t.TempDir()
	l, c := newTruncateTestLog(t, root)
	buildDistinctLog(t, l, c, root)
	appendBatch(t, l, record.CodecNone, 1000, ckv{"u9", "w", false})
	mustRoll(t, l)
	l.SetHighWatermark(l.LogEndOffset())
	testHookCleanerPass = func(s string) {
		if s == "mapped" {
			testHookCleanerPass = nil
			if err := l.TruncateFullyAndStartAt(7); err != nil {
				t.Error(err)
			}
		}
	}
	t.Cleanup(func() { testHookCleanerPass = nil })
	if _, err := c.CleanOnce(context.Background()); !errors.Is(err, errCleaningAborted) {
		t.Fatalf("CleanOnce = %v, want errCleaningAborted", err)
	}
	if u := c.UncleanablePartitions(); len(u) != 0 {
		t.Fatalf("uncleanable %v", u)
	}
	if l.Failed() != nil {
		t.Fatalf("log failed: %v", l.Failed())
	}
	assertCleanerCheckpoint(t, root, 7)
	refetch(t, l)
	if !cleanOnce(t, c) {
		t.Fatal("re-fetched records not cleaned")
	}
	if got, want := keysAt(t, l), compactedRefetch[7:]; !reflect.DeepEqual(got, want) {
		t.Fatalf("records %v, want %v", got, want)
	}
}

// TestStorageCleanerDeleteDropsCheckpoint checks that DeleteLog drops the
// partition's checkpoint entry, that a pass finishing after the deletion
// does not write it back, and that the partition created again starts
// dirty.
func TestStorageCleanerDeleteDropsCheckpoint(t *testing.T) {
	root := t.TempDir()
	l, c, m := newTruncateTestManager(t, root)
	buildDistinctLog(t, l, c, root)
	appendBatch(t, l, record.CodecNone, 1000, ckv{"u9", "w", false})
	mustRoll(t, l)
	l.SetHighWatermark(l.LogEndOffset())
	tp := l.TopicPartition()
	testHookCleanerPass = func(s string) {
		if s == "checkpoint" {
			if err := m.DeleteLog(tp); err != nil {
				t.Error(err)
			}
		}
	}
	t.Cleanup(func() { testHookCleanerPass = nil })
	if _, err := c.CleanOnce(context.Background()); !errors.Is(err, errCleaningAborted) {
		t.Fatalf("CleanOnce = %v, want errCleaningAborted", err)
	}
	testHookCleanerPass = nil
	if cp := readCleanerCheckpoint(t, root); len(cp) != 0 {
		t.Fatalf("checkpoint after delete %v", cp)
	}
	l2, err := m.GetOrCreateLog(tp, l.Config())
	if err != nil {
		t.Fatal(err)
	}
	for _, v := range []string{"1", "2", "3"} {
		appendBatch(t, l2, record.CodecNone, 1000, ckv{"k", v, false})
	}
	mustRoll(t, l2)
	l2.SetHighWatermark(l2.LogEndOffset())
	if !cleanOnce(t, c) {
		t.Fatal("new log not cleaned")
	}
	if got, want := keysAt(t, l2), []string{"2:k=3"}; !reflect.DeepEqual(got, want) {
		t.Fatalf("records %v, want %v", got, want)
	}
}

// TestStorageCleanerTruncateConcurrent runs the cleaner's goroutines while
// a follower-like writer appends, rolls, truncates and re-appends (a
// bounded number of rounds), then cleans to the end and checks the
// compaction guarantee against a model of what was written: every key's
// last record is there with its value, every record read is the one
// written at its offset, and no key appears twice below the active
// segment (a stale checkpoint would leave re-appended duplicates).
func TestStorageCleanerTruncateConcurrent(t *testing.T) {
	root := t.TempDir()
	ccfg := DefaultCleanerConfig()
	ccfg.DedupeBufferSize = 1 << 20
	ccfg.Backoff = time.Millisecond
	c := NewCleaner(CleanerOptions{Config: ccfg, Logger: logrus.New().WithField("test", t.Name())})
	lcfg := cleanerTestConfig()
	lcfg.SegmentBytes = 400
	m, err := NewManager(ManagerConfig{Dirs: []string{root}, LogConfig: lcfg, Cleaner: c.ManagedService()})
	if err != nil {
		t.Fatal(err)
	}
	if err := m.Load(context.Background()); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { m.Close() })
	l, err := m.GetOrCreateLog(kafka.TopicPartition{Topic: "t", Partition: 0}, lcfg)
	if err != nil {
		t.Fatal(err)
	}
	rng := rand.New(rand.NewPCG(1, 2))
	var hist []string // value written at each offset; keys are value[:2]
	for round := 0; round < 150; round++ {
		for n := 1 + rng.IntN(4); n > 0; n-- {
			v := fmt.Sprintf("k%d@%d", rng.IntN(6), len(hist))
			appendBatch(t, l, record.CodecNone, 1000, ckv{v[:2], v, false})
			hist = append(hist, v)
		}
		l.SetHighWatermark(l.LogEndOffset())
		if rng.IntN(4) == 0 {
			mustRoll(t, l)
		}
		if rng.IntN(3) == 0 {
			if err := l.TruncateTo(int64(rng.IntN(len(hist) + 1))); err != nil {
				t.Fatal(err)
			}
			hist = hist[:l.LogEndOffset()]
		}
	}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if err := c.Stop(ctx); err != nil {
		t.Fatal(err)
	}
	appendBatch(t, l, record.CodecNone, 1000, ckv{"zz", "zz@end", false})
	hist = append(hist, "zz@end")
	mustRoll(t, l)
	l.SetHighWatermark(l.LogEndOffset())
	for i := 0; i < 10 && cleanOnce(t, c); i++ {
	}
	if u := c.UncleanablePartitions(); len(u) != 0 {
		t.Fatalf("uncleanable %v", u)
	}
	last := map[string]int{}
	for off, v := range hist {
		last[v[:2]] = off
	}
	seen := map[string]bool{}
	got := readRecords(t, l)
	for _, r := range got {
		if r.offset >= int64(len(hist)) || hist[r.offset] != r.value {
			t.Fatalf("offset %d holds %q, written %q", r.offset, r.value, hist[min(r.offset, int64(len(hist)-1))])
		}
		if seen[r.key] {
			t.Fatalf("key %s twice after cleaning to the end: %v", r.key, got)
		}
		seen[r.key] = true
		if last[r.key] != int(r.offset) {
			t.Fatalf("key %s: offset %d kept, last written at %d", r.key, r.offset, last[r.key])
		}
	}
	if len(seen) != len(last) {
		t.Fatalf("keys kept %v, written %v", seen, last)
	}
}
