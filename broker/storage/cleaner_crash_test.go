package storage

import (
	"errors"
	"io"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"samsa/broker/record"
	"samsa/kafka"
)

// copyLogDir copies the regular files of src into dst, as a crash at this
// moment would leave them on disk.
func copyLogDir(t *testing.T, src, dst string) {
	t.Helper()
	if err := os.MkdirAll(dst, 0o755); err != nil {
		t.Fatal(err)
	}
	es, err := os.ReadDir(src)
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range es {
		if !e.Type().IsRegular() {
			continue
		}
		in, err := os.Open(filepath.Join(src, e.Name()))
		if err != nil {
			t.Fatal(err)
		}
		out, err := os.Create(filepath.Join(dst, e.Name()))
		if err != nil {
			t.Fatal(err)
		}
		if _, err := io.Copy(out, in); err != nil {
			t.Fatal(err)
		}
		in.Close()
		if err := out.Close(); err != nil {
			t.Fatal(err)
		}
	}
}

// reopenCrashed opens the log in dir as after an unclean shutdown.
func reopenCrashed(t *testing.T, dir string, cfg Config) *Log {
	t.Helper()
	l, err := OpenLog(LogOptions{Dir: dir, TP: kafka.TopicPartition{Topic: "t", Partition: 0}, Config: cfg})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { l.Close() })
	return l
}

func assertNoCleanerLeftovers(t *testing.T, dir string) {
	t.Helper()
	for _, name := range mustReadDir(t, dir) {
		for _, suf := range []string{CleanedFileSuffix, SwapFileSuffix, DeletedFileSuffix} {
			if strings.HasSuffix(name, suf) {
				t.Fatalf("leftover %s in %s", name, dir)
			}
		}
	}
}

// compactedLastValue is buildLastValueLog after one cleaning pass.
var compactedLastValue = []crec{{2, "k1", "b", false}, {3, "k2", "b", false}, {4, "k3", "a", false}, {5, "k1", "c", false}}

// TestStorageCleanerCrashRecovery takes a copy of the partition directory
// at each crash point of a swap and opens it as after a crash (Kafka's
// Log.loadSegments rules): with only "<base>.log.cleaned" written the
// originals are kept and the partial output removed; once it was renamed
// "<base>.log.swap" the swap is completed. Either way offsets and the log
// end are unchanged and no temporary file remains.
func TestStorageCleanerCrashRecovery(t *testing.T) {
	for _, tc := range []struct {
		stage  string
		suffix string
		want   func(before []crec) []crec
	}{
		{"cleaned", CleanedFileSuffix, func(before []crec) []crec { return before }},
		{"swap", SwapFileSuffix, func([]crec) []crec { return compactedLastValue }},
	} {
		t.Run(tc.stage, func(t *testing.T) {
			root := t.TempDir()
			cfg := cleanerTestConfig()
			l := openCleanerTestLog(t, root, cfg)
			buildLastValueLog(t, l, record.CodecNone)
			before := readRecords(t, l)
			crashDir := filepath.Join(t.TempDir(), "t-0")
			var sawTemp bool
			testHookCleanerSwap = func(stage string) error {
				if stage == tc.stage {
					copyLogDir(t, l.Dir(), crashDir)
					_, err := os.Stat(filepath.Join(crashDir, filenamePrefixFromOffset(0)+LogFileSuffix+tc.suffix))
					sawTemp = err == nil
				}
				return nil
			}
			t.Cleanup(func() { testHookCleanerSwap = nil })
			if !cleanOnce(t, newTestCleaner(l)) {
				t.Fatal("nothing cleaned")
			}
			testHookCleanerSwap = nil
			if !sawTemp {
				t.Fatalf("no %s file at the crash point", tc.suffix)
			}
			if got := readRecords(t, l); !reflect.DeepEqual(got, compactedLastValue) {
				t.Fatalf("live log: %v", got)
			}

			crashed := reopenCrashed(t, crashDir, cfg)
			if got, want := readRecords(t, crashed), tc.want(before); !reflect.DeepEqual(got, want) {
				t.Fatalf("after crash at %q: got %v, want %v", tc.stage, got, want)
			}
			if crashed.LogEndOffset() != l.LogEndOffset() {
				t.Fatalf("log end %d after crash, want %d", crashed.LogEndOffset(), l.LogEndOffset())
			}
			assertNoCleanerLeftovers(t, crashDir)
		})
	}
}

// TestStorageCleanerDiskErrors injects rename failures into a swap. Before
// the .swap rename nothing changes and the log stays usable; after it the
// log goes offline (memory no longer matches the files) and a restart
// completes the swap.
func TestStorageCleanerDiskErrors(t *testing.T) {
	t.Run("before swap", func(t *testing.T) {
		root := t.TempDir()
		efs := newErrorFS(OSFS{})
		l, err := OpenLog(LogOptions{Dir: filepath.Join(root, "t-0"), TP: kafka.TopicPartition{Topic: "t", Partition: 0}, Config: cleanerTestConfig(), FS: efs, CleanShutdown: true})
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { l.Close() })
		buildLastValueLog(t, l, record.CodecNone)
		before := readRecords(t, l)
		efs.failAfter(opRename, 0)
		c := NewCleaner(CleanerOptions{Config: DefaultCleanerConfig(), FS: efs, Logs: func() []*Log { return []*Log{l} }})
		if _, err := c.CleanOnce(t.Context()); !errors.Is(err, ErrStorage) {
			t.Fatalf("CleanOnce = %v, want ErrStorage", err)
		}
		efs.heal()
		if l.Failed() != nil {
			t.Fatalf("log failed: %v", l.Failed())
		}
		if got := readRecords(t, l); !reflect.DeepEqual(got, before) {
			t.Fatalf("records changed: %v", got)
		}
		assertNoCleanerLeftovers(t, l.Dir())
		if _, err := c.CleanOnce(t.Context()); err != nil {
			t.Fatal(err)
		}
		if got := readRecords(t, l); !reflect.DeepEqual(got, compactedLastValue) {
			t.Fatalf("retry: %v", got)
		}
	})
	t.Run("after swap", func(t *testing.T) {
		root := t.TempDir()
		efs := newErrorFS(OSFS{})
		dir := filepath.Join(root, "t-0")
		l, err := OpenLog(LogOptions{Dir: dir, TP: kafka.TopicPartition{Topic: "t", Partition: 0}, Config: cleanerTestConfig(), FS: efs, CleanShutdown: true})
		if err != nil {
			t.Fatal(err)
		}
		buildLastValueLog(t, l, record.CodecNone)
		// Renames: 3 files .cleaned→.swap (the commit point), then 3 files
		// × 2 originals → .deleted: the second of those fails.
		efs.failAfter(opRename, 4)
		c := NewCleaner(CleanerOptions{Config: DefaultCleanerConfig(), FS: efs, Logs: func() []*Log { return []*Log{l} }})
		if _, err := c.CleanOnce(t.Context()); !errors.Is(err, ErrStorage) {
			t.Fatalf("CleanOnce = %v, want ErrStorage", err)
		}
		if l.Failed() == nil {
			t.Fatal("log still online after a failed swap")
		}
		l.Close()
		efs.heal()
		crashed := reopenCrashed(t, dir, cleanerTestConfig())
		if got := readRecords(t, crashed); !reflect.DeepEqual(got, compactedLastValue) {
			t.Fatalf("after restart: %v", got)
		}
		assertNoCleanerLeftovers(t, dir)
	})
}
