package storage

import (
	"bytes"
	"errors"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"sync"
	"testing"
)

// newTestEpochCache returns a cache in a fresh directory preloaded with
// entries (through Assign, then persisted by Flush).
func newTestEpochCache(t *testing.T, entries ...EpochEntry) (*LeaderEpochCache, string) {
	t.Helper()
	dir := t.TempDir()
	c, err := NewLeaderEpochCache(OSFS{}, dir, nil)
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range entries {
		if err := c.Assign(e.Epoch, e.StartOffset); err != nil {
			t.Fatal(err)
		}
	}
	if err := c.Flush(); err != nil {
		t.Fatal(err)
	}
	return c, dir
}

// epochFileEntries reads the persisted checkpoint back from disk.
func epochFileEntries(t *testing.T, dir string) []EpochEntry {
	t.Helper()
	f, err := os.Open(filepath.Join(dir, LeaderEpochCheckpointFile))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	es, err := ReadLeaderEpochCheckpoint(f, "test")
	if err != nil {
		t.Fatal(err)
	}
	return es
}

// TestStorageLeaderEpochEndOffsetFor checks Kafka's endOffsetFor cases
// (KIP-101 / KIP-279) on the cache [(2,6) (3,8) (5,11)] with log end 20.
func TestStorageLeaderEpochEndOffsetFor(t *testing.T) {
	c, _ := newTestEpochCache(t, EpochEntry{2, 6}, EpochEntry{3, 8}, EpochEntry{5, 11})
	empty, _ := newTestEpochCache(t)
	const leo = 20
	for _, tc := range []struct {
		name       string
		cache      *LeaderEpochCache
		requested  int32
		wantEpoch  int32
		wantOffset int64
	}{
		{"undefined epoch", c, UndefinedEpoch, UndefinedEpoch, UndefinedEpochOffset},
		{"latest epoch ends at log end", c, 5, 5, leo},
		{"known middle epoch ends where the next starts", c, 3, 3, 11},
		{"first epoch", c, 2, 2, 8},
		{"unknown epoch between: largest epoch below", c, 4, 3, 11},
		{"below every epoch: start of first", c, 1, 1, 6},
		{"epoch zero below first", c, 0, 0, 6},
		{"above latest epoch", c, 6, UndefinedEpoch, UndefinedEpochOffset},
		{"empty cache", empty, 0, UndefinedEpoch, UndefinedEpochOffset},
		{"empty cache undefined", empty, UndefinedEpoch, UndefinedEpoch, UndefinedEpochOffset},
	} {
		t.Run(tc.name, func(t *testing.T) {
			e, o := tc.cache.EndOffsetFor(tc.requested, leo)
			if e != tc.wantEpoch || o != tc.wantOffset {
				t.Fatalf("EndOffsetFor(%d) = (%d, %d), want (%d, %d)", tc.requested, e, o, tc.wantEpoch, tc.wantOffset)
			}
		})
	}
}

// TestStorageLeaderEpochAssign checks Kafka 2.8's assign rule, and that
// Assign only changes memory: the file follows on Flush (KAFKA-15046).
func TestStorageLeaderEpochAssign(t *testing.T) {
	base := []EpochEntry{{2, 6}, {3, 8}, {5, 11}}
	for _, tc := range []struct {
		name  string
		epoch int32
		start int64
		want  []EpochEntry
	}{
		{"new epoch appended", 6, 15, []EpochEntry{{2, 6}, {3, 8}, {5, 11}, {6, 15}}},
		{"latest epoch again at a later offset is ignored", 5, 14, base},
		{"latest epoch at the same offset is ignored", 5, 11, base},
		{"latest epoch at an earlier offset replaces it", 5, 9, []EpochEntry{{2, 6}, {3, 8}, {5, 9}}},
		{"lower epoch truncates later entries", 4, 11, []EpochEntry{{2, 6}, {3, 8}, {4, 11}}},
		{"higher epoch at an older offset truncates", 7, 7, []EpochEntry{{2, 6}, {7, 7}}},
		{"higher epoch at the latest start replaces it", 6, 11, []EpochEntry{{2, 6}, {3, 8}, {6, 11}}},
		{"everything conflicts", 1, 0, []EpochEntry{{1, 0}}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c, dir := newTestEpochCache(t, base...)
			if err := c.Assign(tc.epoch, tc.start); err != nil {
				t.Fatal(err)
			}
			if got := c.Entries(); !reflect.DeepEqual(got, tc.want) {
				t.Fatalf("entries %v, want %v", got, tc.want)
			}
			if got := epochFileEntries(t, dir); !reflect.DeepEqual(got, base) {
				t.Fatalf("persisted before Flush %v, want the old %v", got, base)
			}
			if changed := !reflect.DeepEqual(tc.want, base); c.Dirty() != changed {
				t.Fatalf("Dirty() = %v after a change %v", c.Dirty(), changed)
			}
			if err := c.Flush(); err != nil {
				t.Fatal(err)
			}
			if got := epochFileEntries(t, dir); !reflect.DeepEqual(got, tc.want) {
				t.Fatalf("persisted %v, want %v", got, tc.want)
			}
			if c.Dirty() {
				t.Fatal("dirty after Flush")
			}
			if got := c.LatestEpoch(); got != tc.want[len(tc.want)-1].Epoch {
				t.Fatalf("LatestEpoch = %d", got)
			}
		})
	}
	c, _ := newTestEpochCache(t)
	if c.LatestEpoch() != UndefinedEpoch {
		t.Fatalf("empty LatestEpoch = %d", c.LatestEpoch())
	}
	if _, ok := c.LatestEntry(); ok {
		t.Fatal("empty cache has a latest entry")
	}
	for _, e := range []EpochEntry{{-1, 0}, {0, -1}} {
		if err := c.Assign(e.Epoch, e.StartOffset); !errors.Is(err, ErrInvalidEpochEntry) {
			t.Fatalf("Assign(%v) = %v", e, err)
		}
	}
}

// TestStorageLeaderEpochTruncate checks truncation from both ends and Clear,
// each persisted.
func TestStorageLeaderEpochTruncate(t *testing.T) {
	base := []EpochEntry{{2, 6}, {3, 8}, {4, 11}}
	for _, tc := range []struct {
		name string
		op   func(c *LeaderEpochCache) error
		want []EpochEntry
	}{
		{"end: before all", func(c *LeaderEpochCache) error { return c.TruncateFromEnd(5) }, nil},
		{"end: at an entry's start removes it", func(c *LeaderEpochCache) error { return c.TruncateFromEnd(8) }, []EpochEntry{{2, 6}}},
		{"end: inside the latest epoch keeps it", func(c *LeaderEpochCache) error { return c.TruncateFromEnd(12) }, base},
		{"end: negative does nothing", func(c *LeaderEpochCache) error { return c.TruncateFromEnd(-1) }, base},
		{"start: before all does nothing", func(c *LeaderEpochCache) error { return c.TruncateFromStart(5) }, base},
		{"start: at an entry's start", func(c *LeaderEpochCache) error { return c.TruncateFromStart(8) }, []EpochEntry{{3, 8}, {4, 11}}},
		{"start: inside an epoch moves its start", func(c *LeaderEpochCache) error { return c.TruncateFromStart(9) }, []EpochEntry{{3, 9}, {4, 11}}},
		{"start: past the latest start", func(c *LeaderEpochCache) error { return c.TruncateFromStart(20) }, []EpochEntry{{4, 20}}},
		{"clear", func(c *LeaderEpochCache) error { return c.Clear() }, nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c, dir := newTestEpochCache(t, base...)
			if err := tc.op(c); err != nil {
				t.Fatal(err)
			}
			if got := c.Entries(); !reflect.DeepEqual(got, tc.want) {
				t.Fatalf("entries %v, want %v", got, tc.want)
			}
			if got := epochFileEntries(t, dir); !reflect.DeepEqual(got, tc.want) {
				t.Fatalf("persisted %v, want %v", got, tc.want)
			}
		})
	}
}

// TestStorageLeaderEpochPersistence checks the on-disk layout against the
// golden file from reference §7.2 and that a new cache reloads it.
func TestStorageLeaderEpochPersistence(t *testing.T) {
	c, dir := newTestEpochCache(t, EpochEntry{0, 0}, EpochEntry{3, 5120})
	_ = c
	got, err := os.ReadFile(filepath.Join(dir, LeaderEpochCheckpointFile))
	if err != nil {
		t.Fatal(err)
	}
	want := readGoldenCheckpoint(t, "leader-epoch-checkpoint.golden")
	if !bytes.Equal(got, want) {
		t.Fatalf("file %q, want %q", got, want)
	}
	c2, err := NewLeaderEpochCache(OSFS{}, dir, nil)
	if err != nil {
		t.Fatal(err)
	}
	if got := c2.Entries(); !reflect.DeepEqual(got, []EpochEntry{{0, 0}, {3, 5120}}) {
		t.Fatalf("reloaded %v", got)
	}
	if e, o := c2.EndOffsetFor(0, 6000); e != 0 || o != 5120 {
		t.Fatalf("reloaded EndOffsetFor(0) = (%d, %d)", e, o)
	}

	// A file that breaks monotonicity loads the way Kafka's assign loads it.
	if err := os.WriteFile(filepath.Join(dir, LeaderEpochCheckpointFile), []byte("0\n3\n1 0\n4 10\n3 10\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	c3, err := NewLeaderEpochCache(OSFS{}, dir, nil)
	if err != nil {
		t.Fatal(err)
	}
	if got := c3.Entries(); !reflect.DeepEqual(got, []EpochEntry{{1, 0}, {3, 10}}) {
		t.Fatalf("non-monotonic file loaded as %v", got)
	}

	if err := os.WriteFile(filepath.Join(dir, LeaderEpochCheckpointFile), []byte("0\n1\n1 -5\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := NewLeaderEpochCache(OSFS{}, dir, nil); !errors.Is(err, ErrMalformedCheckpoint) || !strings.Contains(err.Error(), "line 3") {
		t.Fatalf("malformed file: %v", err)
	}
}

// TestStorageLeaderEpochRenameDir checks that after the partition directory
// moves, writes go to the new place.
func TestStorageLeaderEpochRenameDir(t *testing.T) {
	c, dir := newTestEpochCache(t, EpochEntry{1, 0})
	moved := dir + "-moved"
	if err := os.Rename(dir, moved); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(moved) })
	c.renameDir(moved)
	if err := c.Assign(2, 10); err != nil {
		t.Fatal(err)
	}
	if err := c.Flush(); err != nil {
		t.Fatal(err)
	}
	if got := epochFileEntries(t, moved); !reflect.DeepEqual(got, []EpochEntry{{1, 0}, {2, 10}}) {
		t.Fatalf("persisted %v", got)
	}
}

// TestStorageLeaderEpochConcurrent runs appends and readers together under
// the race detector; the cache must stay monotonic.
func TestStorageLeaderEpochConcurrent(t *testing.T) {
	c, _ := newTestEpochCache(t)
	var wg sync.WaitGroup
	wg.Add(2)
	go func() {
		defer wg.Done()
		for i := 0; i < 50; i++ {
			if err := c.Assign(int32(i/5), int64(i)); err != nil {
				t.Error(err)
				return
			}
		}
	}()
	go func() {
		defer wg.Done()
		for i := 0; i < 200; i++ {
			c.EndOffsetFor(int32(i%12), 100)
			es := c.Entries()
			for j := 1; j < len(es); j++ {
				if es[j].Epoch <= es[j-1].Epoch || es[j].StartOffset <= es[j-1].StartOffset {
					t.Errorf("not monotonic: %v", es)
					return
				}
			}
		}
	}()
	wg.Wait()
	if got := c.LatestEpoch(); got != 9 {
		t.Fatalf("LatestEpoch = %d, want 9", got)
	}
}

// FuzzStorageLeaderEpochCheckpoint feeds arbitrary bytes to the
// leader-epoch-checkpoint reader. Invariants: it never panics, and whatever
// it accepts encodes and parses back to the same entries in the same order.
func FuzzStorageLeaderEpochCheckpoint(f *testing.F) {
	for _, s := range []string{"", "0\n", "0\n2\n0 0\n3 5120\n", "0\n1\n0\n", "0\n1\n-1 0\n", "0\n2\n5 10\n3 4\n"} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, in []byte) {
		es, err := ReadLeaderEpochCheckpoint(bytes.NewReader(in), "fuzz")
		if err != nil {
			return
		}
		enc, err := EncodeLeaderEpochCheckpoint(es)
		if err != nil {
			t.Fatalf("accepted %q but cannot encode: %v", in, err)
		}
		back, err := ReadLeaderEpochCheckpoint(bytes.NewReader(enc), "fuzz")
		if err != nil {
			t.Fatalf("cannot parse own encoding %q: %v", enc, err)
		}
		if len(es) == 0 && len(back) == 0 {
			return
		}
		if !reflect.DeepEqual(back, es) {
			t.Fatalf("round trip changed %v to %v", es, back)
		}
	})
}
