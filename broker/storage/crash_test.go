package storage

import (
	"bytes"
	"math/rand/v2"
	"os"
	"path/filepath"
	"testing"

	"samsa/broker/record"
)

// TestStorageCrashCutAndGarbage cuts a random segment at a random byte
// position, appends random garbage (what a torn write or a lying disk
// leaves), then reopens uncleanly: every batch that lies wholly before the
// cut survives byte for byte and nothing after it appears, in that segment
// or any later one.
func TestStorageCrashCutAndGarbage(t *testing.T) {
	for seed := uint64(1); seed <= 40; seed++ {
		rng := rand.New(rand.NewPCG(seed, 7))
		dir := filepath.Join(t.TempDir(), "t-0")
		clock := newFakeClock()
		cfg := smallConfig()
		noLog := func(o *LogOptions) { o.Logger = nil }
		l := openTestLog(t, dir, cfg, clock, noLog)
		var all [][]byte
		for i := 0; i < 40; i++ {
			b := testBatch(t, 1+rng.IntN(4), rng.IntN(400), clock.Now().UnixMilli())
			if _, err := l.AppendAsLeader(b, 0); err != nil {
				t.Fatal(err)
			}
			all = append(all, b)
		}
		crashed := rng.IntN(2) == 0
		if crashed {
			for _, s := range *l.segments.Load() {
				s.closeHandles()
			}
		} else if err := l.Close(); err != nil {
			t.Fatal(err)
		}
		segs := segmentBases(t, dir)
		victim := segs[rng.IntN(len(segs))]
		path := segmentFileName(dir, victim, LogFileSuffix)
		fi, err := os.Stat(path)
		if err != nil {
			t.Fatal(err)
		}
		cut := rng.Int64N(fi.Size() + 1)
		garbage := make([]byte, 1+rng.IntN(300))
		for i := range garbage {
			garbage[i] = byte(rng.Uint32())
		}
		f, err := os.OpenFile(path, os.O_RDWR, 0)
		if err != nil {
			t.Fatal(err)
		}
		if err := f.Truncate(cut); err != nil {
			t.Fatal(err)
		}
		if _, err := f.WriteAt(garbage, cut); err != nil {
			t.Fatal(err)
		}
		f.Close()

		// Which batches must survive: those in segments before the victim
		// and those in the victim that end at or before the cut.
		var want [][]byte
		var pos int64
		for _, b := range all {
			base := record.Batch(b).BaseOffset()
			seg := segmentOf(segs, base)
			switch {
			case seg < victim:
				want = append(want, b)
			case seg == victim:
				if pos+int64(len(b)) <= cut {
					want = append(want, b)
				}
				pos += int64(len(b))
			}
		}
		l2 := openTestLog(t, dir, cfg, clock, func(o *LogOptions) {
			noLog(o)
			o.CleanShutdown = false
			o.RecoveryPoint = victim
		})
		got := readBatches(t, l2, 0, l2.LogEndOffset())
		if len(got) != len(want) {
			t.Fatalf("seed %d: cut segment %d at %d (+%d garbage): %d batches survive, want %d",
				seed, victim, cut, len(garbage), len(got), len(want))
		}
		for i := range got {
			if !bytes.Equal(got[i], want[i]) {
				t.Fatalf("seed %d: batch %d differs", seed, i)
			}
		}
		wantLEO := int64(0)
		if len(want) > 0 {
			wantLEO = record.Batch(want[len(want)-1]).NextOffset()
		}
		if l2.LogEndOffset() != wantLEO && !(len(want) == 0 || l2.LogEndOffset() == victim) {
			t.Fatalf("seed %d: LEO %d, want %d", seed, l2.LogEndOffset(), wantLEO)
		}
		// The log keeps working after recovery.
		if _, err := l2.AppendAsLeader(testBatch(t, 1, 10, 0), 0); err != nil {
			t.Fatal(err)
		}
		l2.Close()
	}
}

// TestStorageCrashCorruptIndex damages index files; opening rebuilds them
// and lookups still find every batch.
func TestStorageCrashCorruptIndex(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "t-0")
	clock := newFakeClock()
	l := openTestLog(t, dir, smallConfig(), clock, nil)
	var all [][]byte
	for i := 0; i < 30; i++ {
		b := testBatch(t, 2, 200, clock.Now().UnixMilli()+int64(i))
		if _, err := l.AppendAsLeader(b, 0); err != nil {
			t.Fatal(err)
		}
		all = append(all, b)
	}
	l.Close()
	for i, base := range segmentBases(t, dir) {
		switch i % 3 {
		case 0: // entries pointing past the end of the log
			os.WriteFile(segmentFileName(dir, base, IndexFileSuffix), bytes.Repeat([]byte{0x7f, 0, 0, 1}, 8), 0o644)
		case 1: // missing index
			os.Remove(segmentFileName(dir, base, IndexFileSuffix))
			os.Remove(segmentFileName(dir, base, TimeIndexFileSuffix))
		case 2: // odd size
			os.WriteFile(segmentFileName(dir, base, TimeIndexFileSuffix), []byte{1, 2, 3}, 0o644)
		}
	}
	l2 := openTestLog(t, dir, smallConfig(), clock, nil)
	defer l2.Close()
	got := readBatches(t, l2, 0, l2.LogEndOffset())
	if len(got) != len(all) {
		t.Fatalf("%d batches after index damage, want %d", len(got), len(all))
	}
	for off := int64(0); off < l2.LogEndOffset(); off++ {
		res, err := l2.Read(off, 1, l2.LogEndOffset(), true)
		if err != nil || len(res.Regions) != 1 {
			t.Fatalf("read %d: %v %v", off, err, res)
		}
		b := readAllBatches(t, res)[0]
		if b.BaseOffset() > off || b.LastOffset() < off {
			t.Fatalf("read %d returned batch %d..%d", off, b.BaseOffset(), b.LastOffset())
		}
	}
}

func segmentBases(t *testing.T, dir string) []int64 {
	t.Helper()
	ents, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	var out []int64
	for _, e := range ents {
		if base, suf, ok := parseSegmentFileName(e.Name()); ok && suf == LogFileSuffix {
			out = append(out, base)
		}
	}
	return out
}

func segmentOf(bases []int64, off int64) int64 {
	s := bases[0]
	for _, b := range bases {
		if b <= off {
			s = b
		}
	}
	return s
}

// Garbage after the last batch although the shutdown was marked clean: the
// log still opens, the tail is cut with a warning, nothing else is lost.
func TestStorageCleanStartWithCorruptTail(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "t-0")
	clock := newFakeClock()
	l := openTestLog(t, dir, smallConfig(), clock, nil)
	for i := 0; i < 3; i++ {
		if _, err := l.AppendAsLeader(testBatch(t, 1, 100, 0), 0); err != nil {
			t.Fatal(err)
		}
	}
	l.Close()
	bases := segmentBases(t, dir)
	f, err := os.OpenFile(segmentFileName(dir, bases[len(bases)-1], LogFileSuffix), os.O_WRONLY|os.O_APPEND, 0)
	if err != nil {
		t.Fatal(err)
	}
	f.Write(bytes.Repeat([]byte{0xab}, 70))
	f.Close()
	l2 := openTestLog(t, dir, smallConfig(), clock, nil) // CleanShutdown: true
	defer l2.Close()
	if l2.LogEndOffset() != 3 || len(readBatches(t, l2, 0, 3)) != 3 {
		t.Fatalf("LEO %d after clean start with a corrupt tail", l2.LogEndOffset())
	}
}
