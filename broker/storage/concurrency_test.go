package storage

import (
	"bytes"
	"math/rand/v2"
	"path/filepath"
	"sync"
	"sync/atomic"
	"testing"

	"samsa/broker/record"
)

// Readers run lock-free against an appender that rolls segments, a
// flusher and retention; every read returns whole, valid batches at the
// requested offset or later, never bytes past the published end (run
// under -race).
func TestStorageConcurrentReadsDuringAppends(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "t-0")
	clock := newFakeClock()
	cfg := smallConfig()
	cfg.RetentionBytes = 64 << 10
	l := openTestLog(t, dir, cfg, clock, func(o *LogOptions) { o.Logger = nil })
	defer l.Close()
	const appends = 600
	var done atomic.Bool
	var wg sync.WaitGroup
	errs := make(chan error, 8)
	report := func(err error) {
		select {
		case errs <- err:
		default:
		}
	}
	wg.Add(1)
	go func() { // appender
		defer wg.Done()
		defer done.Store(true)
		for i := 0; i < appends; i++ {
			if _, err := l.AppendAsLeader(testBatch(t, 1+i%4, 100+i%200, 0), 1); err != nil {
				report(err)
				return
			}
			l.SetHighWatermark(l.LogEndOffset())
		}
	}()
	wg.Add(1)
	go func() { // flusher and retention
		defer wg.Done()
		for i := 0; i < 10000 && !done.Load(); i++ {
			if err := l.Flush(); err != nil {
				report(err)
				return
			}
			if _, err := l.DeleteOldSegments(); err != nil {
				report(err)
				return
			}
		}
	}()
	for r := 0; r < 2; r++ {
		wg.Add(1)
		go func(seed uint64) { // readers
			defer wg.Done()
			rng := rand.New(rand.NewPCG(seed, 1))
			for i := 0; i < 100000 && !done.Load(); i++ {
				start, end := l.LogStartOffset(), l.LogEndOffset()
				if end == start {
					continue
				}
				off := start + rng.Int64N(end-start)
				res, err := l.Read(off, rng.IntN(4000), end, true)
				if err != nil {
					// Retention may move the start past off meanwhile.
					if off < l.LogStartOffset() {
						continue
					}
					report(err)
					return
				}
				var buf bytes.Buffer
				if _, err := res.WriteTo(&buf); err != nil {
					continue // a segment deleted by retention: closed file
				}
				rest := buf.Bytes()
				for len(rest) > 0 {
					b, r, err := record.NextBatch(rest)
					if err != nil || b.Validate(record.Limits{}) != nil {
						report(errorf("read at %d returned a broken batch: %v", off, err))
						return
					}
					if b.LastOffset() >= end {
						report(errorf("read at %d returned offset %d past end %d", off, b.LastOffset(), end))
						return
					}
					rest = r
				}
			}
		}(uint64(r))
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Fatal(err)
	}
}
