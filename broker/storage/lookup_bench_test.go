package storage

import (
	"io/fs"
	"path/filepath"
	"sync/atomic"
	"testing"
)

// preadCountingFS counts the ReadAt calls (pread64) made on every file it
// opens, so tests and benchmarks can show how many syscalls a lookup costs.
type preadCountingFS struct {
	FS
	reads atomic.Int64
}

func (c *preadCountingFS) OpenFile(name string, flag int, perm fs.FileMode) (File, error) {
	f, err := c.FS.OpenFile(name, flag, perm)
	if err != nil {
		return nil, err
	}
	return &preadCountingFile{File: f, reads: &c.reads}, nil
}

type preadCountingFile struct {
	File
	reads *atomic.Int64
}

func (f *preadCountingFile) ReadAt(p []byte, off int64) (int, error) {
	f.reads.Add(1)
	return f.File.ReadAt(p, off)
}

// lookupBenchLog opens a log with the default config (index.interval.bytes
// 4096) holding n one-record batches of 100-byte values (~170 bytes each,
// so ~24 batches per index entry), as many small produce requests leave it.
func lookupBenchLog(tb testing.TB, n int) (*Log, *preadCountingFS) {
	tb.Helper()
	cfs := &preadCountingFS{FS: OSFS{}}
	clock := newFakeClock()
	l := openTestLog(tb, filepath.Join(tb.TempDir(), "t-0"), DefaultConfig(), clock, func(o *LogOptions) {
		o.FS = cfs
		o.Logger = nil
	})
	batch := testBatch(tb, 1, 100, clock.Now().UnixMilli())
	for i := 0; i < n; i++ {
		if _, err := l.AppendAsLeader(batch, 1); err != nil {
			tb.Fatal(err)
		}
	}
	return l, cfs
}

// BenchmarkStorageFetchLookup measures Log.Read (offset lookup and region
// bounds, not the send) for the fetches a broker serves most: a follower or
// tail consumer at the log end, a few batches below it (upTo the log end
// for a follower, the high watermark one batch lower for a consumer), and a
// consumer far behind. preads/op counts pread64 calls on the segment files.
// Run: go test -run XXX -bench BenchmarkStorageFetchLookup -benchmem -count 6 ./broker/storage
func BenchmarkStorageFetchLookup(b *testing.B) {
	const batches = 20000
	l, cfs := lookupBenchLog(b, batches)
	defer l.Close()
	leo := l.LogEndOffset()
	l.SetHighWatermark(leo - 1)
	cases := []struct {
		name   string
		offset int64
		upTo   int64
	}{
		{"at-end", leo, leo},
		{"near-end-follower", leo - 3, leo},
		{"near-end-consumer", leo - 3, leo - 1},
		{"far-back", leo - batches/2, leo},
	}
	for _, c := range cases {
		b.Run(c.name, func(b *testing.B) {
			b.ReportAllocs()
			before := cfs.reads.Load()
			b.ResetTimer()
			for i := 0; i < b.N; i++ {
				res, err := l.Read(c.offset, 1<<20, c.upTo, true)
				if err != nil {
					b.Fatal(err)
				}
				if c.offset < c.upTo && (len(res.Regions) != 1 || res.Regions[0].FirstOffset > c.offset) {
					b.Fatalf("read at %d: %+v", c.offset, res.Regions)
				}
			}
			b.StopTimer()
			b.ReportMetric(float64(cfs.reads.Load()-before)/float64(b.N), "preads/op")
		})
	}
}
