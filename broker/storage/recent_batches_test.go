package storage

import (
	"bytes"
	"fmt"
	"math/rand/v2"
	"path/filepath"
	"reflect"
	"sync"
	"sync/atomic"
	"testing"

	"samsa/broker/record"
)

// checkRecentPlaces compares the published view of l's last batches with
// the file and with the slow path (reading batch headers), for the
// snapshot l.end holds now:
//   - every place matches the header read from the .log at its position,
//     the places are contiguous and end at the published end;
//   - for every offset near the end and every bound, findRecent agrees with
//     translateOffset and boundaryRecent with batchBoundaryAtOrBelow
//     whenever they answer;
//   - Log.Read answered with the view returns exactly the regions it
//     returns without it.
//
// A wrong position would be a corrupt fetch, so this runs after every
// operation of the randomized tests.
func checkRecentPlaces(t *testing.T, l *Log, rng *rand.Rand, ctx string) {
	t.Helper()
	end := l.end.Load()
	v := end.recent
	for i, p := range v {
		h, err := record.ReadHeaderAt(end.seg.log, p.pos)
		if err != nil || h.BaseOffset != p.base || h.LastOffset() != p.last || h.Size() != p.size {
			t.Fatalf("%s: place %d %+v, file header %d..%d size %d (%v)", ctx, i, p, h.BaseOffset, h.LastOffset(), h.Size(), err)
		}
		if i > 0 && v[i-1].end() != p.pos {
			t.Fatalf("%s: place %d at %d, previous ends at %d", ctx, i, p.pos, v[i-1].end())
		}
	}
	if n := len(v); n > 0 && (v[n-1].end() != end.pos || v[n-1].last+1 != end.offset) {
		t.Fatalf("%s: view ends at %d/%d, published end %d/%d", ctx, v[n-1].end(), v[n-1].last+1, end.pos, end.offset)
	}
	if len(v) > recentBatchesWindow {
		t.Fatalf("%s: view of %d places", ctx, len(v))
	}
	bounds := []int64{end.pos}
	for _, p := range v {
		bounds = append(bounds, p.pos)
	}
	lo := max(end.seg.base, end.offset-3*recentBatchesWindow)
	for off := lo; off <= end.offset+1; off++ {
		for _, maxPos := range bounds {
			p, found, ok := findRecent(v, off, maxPos)
			if !ok {
				continue
			}
			pos, h, f2, err := end.seg.translateOffset(off, maxPos)
			if err != nil || found != f2 || (found && (pos != p.pos || h.BaseOffset != p.base || h.LastOffset() != p.last || h.Size() != p.size)) {
				t.Fatalf("%s: offset %d below %d: view %+v %v, file %d %d..%d %v (%v)", ctx, off, maxPos, p, found, pos, h.BaseOffset, h.LastOffset(), f2, err)
			}
		}
	}
	if len(v) > 0 {
		for i := 0; i < 20; i++ {
			limit := v[0].pos + rng.Int64N(end.pos-v[0].pos+1)
			b, ok := boundaryRecent(v, limit)
			if !ok {
				t.Fatalf("%s: no boundary for %d in the view", ctx, limit)
			}
			want, err := end.seg.batchBoundaryAtOrBelow(0, limit)
			if err != nil || b != want {
				t.Fatalf("%s: boundary at or below %d: view %d, file %d (%v)", ctx, limit, b, want, err)
			}
		}
	}
	slow := *end
	slow.recent = nil
	// readFrom reads against a given published end; nothing else runs on
	// l meanwhile, so swapping it in is safe.
	readFrom := func(e *logEnd, off int64, maxBytes int, upTo int64, one bool) (ReadResult, error) {
		l.end.Store(e)
		defer l.end.Store(end)
		return l.Read(off, maxBytes, upTo, one)
	}
	start, hw := l.LogStartOffset(), l.HighWatermark()
	for off := max(start, end.offset-2*recentBatchesWindow); off <= end.offset; off++ {
		for _, upTo := range []int64{end.offset, hw, off + rng.Int64N(8)} {
			maxBytes := []int{0, rng.IntN(600), 1 << 20}[rng.IntN(3)]
			one := rng.IntN(2) == 0
			got, gerr := readFrom(end, off, maxBytes, upTo, one)
			want, werr := readFrom(&slow, off, maxBytes, upTo, one)
			if gerr != nil || werr != nil || !reflect.DeepEqual(got.Regions, want.Regions) {
				t.Fatalf("%s: read %d (max %d, upTo %d, one %v): with view %+v (%v), without %+v (%v)",
					ctx, off, maxBytes, upTo, one, got.Regions, gerr, want.Regions, werr)
			}
		}
	}
}

// recentTestBatches builds 1..3 producer batches in one buffer with random
// record counts and sizes.
func recentTestBatches(t *testing.T, rng *rand.Rand, ts int64) []byte {
	var buf []byte
	for k := 1 + rng.IntN(3); k > 0; k-- {
		buf = append(buf, testBatch(t, 1+rng.IntN(5), rng.IntN(300), ts)...)
	}
	return buf
}

// TestStorageRecentBatchesRandomized drives a log through random leader
// appends (several batches per append), follower appends with offset gaps,
// truncations (mostly near the end, as leader-epoch truncation does), full
// truncations, rolls, DeleteRecords, retention and clean and unclean
// restarts, and checks the view of recent batches against the file after
// every operation (checkRecentPlaces). Seeds are logged.
func TestStorageRecentBatchesRandomized(t *testing.T) {
	seeds := []uint64{1, 7, 99, 2026}
	iters := 400
	if testing.Short() {
		seeds, iters = seeds[:2], 200
	}
	for _, seed := range seeds {
		t.Logf("seed %d", seed)
		runRecentModel(t, seed, iters)
	}
}

func runRecentModel(t *testing.T, seed uint64, iters int) {
	rng := rand.New(rand.NewPCG(seed, 11))
	r := &recentRun{t: t, rng: rng, seed: seed, dir: filepath.Join(t.TempDir(), "t-0"), clock: newFakeClock()}
	r.cfg = smallConfig()
	r.cfg.SegmentBytes = int32(3000 + rng.IntN(9000))
	r.cfg.IndexIntervalBytes = int32(rng.IntN(2048))
	r.l = openTestLog(t, r.dir, r.cfg, r.clock, quietLog)
	defer func() { r.l.Close() }()
	for r.i = 0; r.i < iters; r.i++ {
		op := r.step()
		r.clock.Advance(1000)
		if rng.IntN(2) == 0 {
			r.l.SetHighWatermark(r.l.LogStartOffset() + rng.Int64N(r.l.LogEndOffset()-r.l.LogStartOffset()+1))
		}
		checkRecentPlaces(t, r.l, rng, fmt.Sprintf("seed %d iter %d after %s", seed, r.i, op))
	}
}

// recentRun is one seed's run of runRecentModel.
type recentRun struct {
	t     *testing.T
	rng   *rand.Rand
	seed  uint64
	i     int
	dir   string
	clock *fakeClock
	cfg   Config
	l     *Log
	epoch int32
}

// step applies one random operation to the log and names it.
func (r *recentRun) step() string {
	t, l, rng := r.t, r.l, r.rng
	leo, start := l.LogEndOffset(), l.LogStartOffset()
	switch x := rng.IntN(100); {
	case x < 45:
		if _, err := l.AppendAsLeader(recentTestBatches(t, rng, r.clock.Now().UnixMilli()), r.epoch); err != nil {
			t.Fatalf("seed %d iter %d: append-leader: %v", r.seed, r.i, err)
		}
		return "append-leader"
	case x < 65:
		r.appendFollower(leo)
		return "append-follower"
	case x < 77:
		r.truncateTo(max(start, leo-rng.Int64N(2*recentBatchesWindow)))
		return "truncate-near-end"
	case x < 80:
		r.truncateTo(start + rng.Int64N(leo-start+1))
		return "truncate"
	case x < 82:
		if err := l.TruncateFullyAndStartAt(leo + rng.Int64N(5)); err != nil {
			t.Fatal(err)
		}
		r.epoch++
		return "truncate-fully"
	case x < 86:
		if err := l.Roll(); err != nil {
			t.Fatal(err)
		}
		return "roll"
	case x < 90:
		l.SetHighWatermark(start + rng.Int64N(leo-start+1))
		if _, err := l.DeleteRecordsBefore(l.HighWatermark()); err != nil {
			t.Fatal(err)
		}
		return "delete-records"
	case x < 93:
		r.retention(leo)
		return "retention"
	case x < 97:
		if err := l.Close(); err != nil {
			t.Fatal(err)
		}
		r.l = openTestLog(t, r.dir, r.cfg, r.clock, func(o *LogOptions) { quietLog(o); o.LogStartOffset = start })
		return "restart-clean"
	default:
		r.restartCrash(start)
		return "restart-crash"
	}
}

// appendFollower appends batches as a follower from leo, with offset gaps
// as after compaction.
func (r *recentRun) appendFollower(leo int64) {
	buf := recentTestBatches(r.t, r.rng, r.clock.Now().UnixMilli())
	next := leo + r.rng.Int64N(3)
	for rest := buf; len(rest) > 0; {
		b, tail, _ := record.NextBatch(rest)
		b.SetBaseOffset(next)
		b.SetPartitionLeaderEpoch(r.epoch)
		next = b.NextOffset() + r.rng.Int64N(2)
		rest = tail
	}
	if _, err := r.l.AppendAsFollower(buf); err != nil {
		r.t.Fatalf("seed %d iter %d: append-follower: %v", r.seed, r.i, err)
	}
}

func (r *recentRun) truncateTo(off int64) {
	if err := r.l.TruncateTo(off); err != nil {
		r.t.Fatalf("seed %d iter %d: truncate to %d: %v", r.seed, r.i, off, err)
	}
	r.epoch++
}

// retention deletes old segments under a random retention.bytes, the high
// watermark at leo.
func (r *recentRun) retention(leo int64) {
	retention := int64(r.rng.IntN(8000))
	r.l.SetHighWatermark(leo)
	retainBytes(r.t, r.l, r.cfg, retention)
}

// restartCrash drops the log's file handles as a crash would and opens it
// again without a clean shutdown.
func (r *recentRun) restartCrash(start int64) {
	rp := r.l.RecoveryPoint()
	crashClose(r.l)
	r.l = openTestLog(r.t, r.dir, r.cfg, r.clock, func(o *LogOptions) {
		quietLog(o)
		o.CleanShutdown, o.RecoveryPoint, o.LogStartOffset = false, rp, start
	})
}

// TestStorageRecentBatchesNoReads shows what the view buys: with the
// default index interval, a follower or tail consumer fetch at or a few
// batches below the log end reads nothing from the .log (no pread), while
// a fetch far back does.
func TestStorageRecentBatchesNoReads(t *testing.T) {
	l, cfs := lookupBenchLog(t, 500)
	defer l.Close()
	leo := l.LogEndOffset()
	l.SetHighWatermark(leo - 1)
	for _, c := range []struct {
		offset, upTo int64
		maxBytes     int
	}{{leo, leo, 1 << 20}, {leo - 1, leo, 1 << 20}, {leo - 5, leo, 1 << 20}, {leo - 5, leo - 1, 1 << 20}, {leo - 8, leo, 500}, {leo - 15, leo, 0}} {
		before := cfs.reads.Load()
		res, err := l.Read(c.offset, c.maxBytes, c.upTo, true)
		if err != nil {
			t.Fatal(err)
		}
		if n := cfs.reads.Load() - before; n != 0 {
			t.Errorf("read at %d (upTo %d, max %d): %d preads, want 0", c.offset, c.upTo, c.maxBytes, n)
		}
		if c.offset < c.upTo && (len(res.Regions) != 1 || res.Regions[0].FirstOffset != c.offset) {
			t.Errorf("read at %d: regions %+v", c.offset, res.Regions)
		}
	}
	before := cfs.reads.Load()
	if _, err := l.Read(leo-400, 1<<20, leo, true); err != nil {
		t.Fatal(err)
	}
	if cfs.reads.Load() == before {
		t.Errorf("a read far back did not touch the file: the test does not measure what it claims")
	}
}

// Readers fetching at and just below the log end run lock-free against a
// writer that appends, truncates near the end (as a follower after a
// leader change) and rolls. A read is checked against the batches it
// returned: whole, valid, and, when no truncation ran meanwhile, starting
// with the batch holding the offset and ending at or below the end it read
// (run under -race).
func TestStorageRecentBatchesConcurrentTruncation(t *testing.T) {
	clock := newFakeClock()
	cfg := smallConfig()
	cfg.SegmentBytes = 16 << 10
	l := openTestLog(t, filepath.Join(t.TempDir(), "t-0"), cfg, clock, func(o *LogOptions) { o.Logger = nil })
	defer l.Close()
	var done atomic.Bool
	var wg sync.WaitGroup
	errs := make(chan error, 4)
	report := func(err error) {
		select {
		case errs <- err:
		default:
		}
	}
	wg.Add(1)
	go func() { // writer
		defer wg.Done()
		defer done.Store(true)
		rng := rand.New(rand.NewPCG(5, 5))
		for i := 0; i < 1500; i++ {
			var err error
			switch r := rng.IntN(20); {
			case r < 16:
				_, err = l.AppendAsLeader(recentTestBatches(t, rng, 0), int32(i))
			case r < 19:
				err = l.TruncateTo(max(l.LogStartOffset(), l.LogEndOffset()-rng.Int64N(10)))
			default:
				err = l.Roll()
			}
			if err != nil {
				report(err)
				return
			}
		}
	}()
	for r := 0; r < 2; r++ {
		wg.Add(1)
		go func(seed uint64) { // readers
			defer wg.Done()
			rng := rand.New(rand.NewPCG(seed, 3))
			for i := 0; i < 200000 && !done.Load(); i++ {
				l.mu.Lock() // no truncation is under way while mu is held
				gen := l.truncations.Load()
				end := l.LogEndOffset()
				l.mu.Unlock()
				off := max(l.LogStartOffset(), end-rng.Int64N(12))
				res, err := l.Read(off, []int{300, 1 << 20}[rng.IntN(2)], end, true)
				if err != nil {
					if l.truncations.Load() != gen {
						continue // the offset may have left the log
					}
					report(err)
					return
				}
				var buf bytes.Buffer
				if _, err := res.WriteTo(&buf); err != nil {
					continue // a segment deleted by truncation: closed file
				}
				stable := l.truncations.Load() == gen
				first := true
				for rest := buf.Bytes(); len(rest) > 0; first = false {
					b, r, err := record.NextBatch(rest)
					if err != nil || b.Validate(record.Limits{}) != nil {
						if !stable {
							break // bytes rewritten under the read
						}
						report(errorf("read at %d returned a broken batch: %v", off, err))
						return
					}
					if stable && (b.LastOffset() >= end || (first && (b.BaseOffset() > off || b.LastOffset() < off))) {
						report(errorf("read at %d (end %d) returned batch %d..%d", off, end, b.BaseOffset(), b.LastOffset()))
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
