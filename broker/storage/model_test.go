package storage

import (
	"bytes"
	"fmt"
	"math/rand/v2"
	"path/filepath"
	"testing"

	"samsa/broker/record"
)

// logModel is the in-memory truth a Log is compared against.
type logModel struct {
	batches [][]byte // every batch with lastOffset >= start, in order
	start   int64
	leo     int64
	hw      int64
	flushed int64 // recovery point the model may claim
}

func (m *logModel) truncateTo(off int64) {
	keep := m.batches[:0]
	for _, b := range m.batches {
		if record.Batch(b).LastOffset() < off {
			keep = append(keep, b)
		}
	}
	m.batches = keep
	if len(keep) > 0 {
		m.leo = record.Batch(keep[len(keep)-1]).NextOffset()
	} else if m.leo > off {
		// Every batch went: the log restarts at the first removed batch
		// or the start offset, whichever the log keeps.
		m.leo = -1
		return // the caller sets leo and hw from the log
	}
	m.hw = min(m.hw, m.leo)
}

// TestStorageModel drives a Log with random operations (appends, reads,
// rolls, truncations, DeleteRecords, retention by size, clean and unclean
// restarts) and compares every observable result with logModel. Seeds are
// logged; iterations are bounded.
func TestStorageModel(t *testing.T) {
	seeds := []uint64{1, 2, 3, 42, 2026}
	iters := 300
	if testing.Short() {
		seeds, iters = seeds[:2], 150
	}
	for _, seed := range seeds {
		t.Logf("seed %d", seed)
		runModel(t, seed, iters)
	}
}

func runModel(t *testing.T, seed uint64, iters int) {
	rng := rand.New(rand.NewPCG(seed, seed^0x9e3779b97f4a7c15))
	r := &modelRun{t: t, rng: rng, seed: seed, dir: filepath.Join(t.TempDir(), "t-0"), clock: newFakeClock(), m: &logModel{}}
	r.cfg = smallConfig()
	r.cfg.SegmentBytes = int32(2048 + rng.IntN(4096))
	r.cfg.IndexIntervalBytes = int32(rng.IntN(1024))
	r.l = openTestLog(t, r.dir, r.cfg, r.clock, quietLog)
	defer func() { r.l.Close() }()
	for r.i = 0; r.i < iters; r.i++ {
		if op, changed := r.step(); changed {
			r.verifyAll(op)
		}
	}
}

// quietLog silences a test log.
func quietLog(o *LogOptions) { o.Logger = nil }

// modelRun is one seed's run of TestStorageModel: the log under test, its
// model, and iteration i.
type modelRun struct {
	t     *testing.T
	rng   *rand.Rand
	seed  uint64
	i     int
	dir   string
	clock *fakeClock
	cfg   Config
	l     *Log
	m     *logModel
	epoch int32
}

func (r *modelRun) fatalf(format string, args ...any) {
	r.t.Helper()
	r.t.Fatalf("seed %d iter %d: "+format, append([]any{r.seed, r.i}, args...)...)
}

// step applies one random operation; changed is false when the log was
// only read or nothing happened (no verification needed).
func (r *modelRun) step() (op string, changed bool) {
	switch x := r.rng.IntN(100); {
	case x < 55:
		r.append()
		return "append", true
	case x < 70:
		r.read()
		return "read", false
	case x < 75:
		if err := r.l.Roll(); err != nil {
			r.t.Fatal(err)
		}
		return "roll", true
	case x < 80:
		return "truncate", r.truncate()
	case x < 85:
		if r.m.leo > r.m.start {
			r.m.hw = r.m.start + r.rng.Int64N(r.m.leo-r.m.start+1)
		}
		r.l.SetHighWatermark(r.m.hw)
		return "hw", true
	case x < 88:
		return "delete-records", r.deleteRecords()
	case x < 91:
		r.retention()
		return "retention", true
	case x < 96:
		r.restartClean()
		return "restart-clean", true
	default:
		r.restartCrash()
		return "restart-crash", true
	}
}

func (r *modelRun) append() {
	m := r.m
	b := testBatch(r.t, 1+r.rng.IntN(6), r.rng.IntN(300), r.clock.Now().UnixMilli())
	info, err := r.l.AppendAsLeader(b, r.epoch)
	if err != nil {
		r.fatalf("append: %v", err)
	}
	if info.FirstOffset != m.leo {
		r.fatalf("appended at %d, model LEO %d", info.FirstOffset, m.leo)
	}
	m.batches = append(m.batches, b)
	m.leo = info.LastOffset + 1
	r.clock.Advance(1000)
}

func (r *modelRun) read() {
	m, rng := r.m, r.rng
	if m.leo == m.start {
		return
	}
	off := m.start + rng.Int64N(m.leo-m.start)
	maxBytes := rng.IntN(3000)
	upTo := m.leo
	if rng.IntN(2) == 0 {
		upTo = m.hw
	}
	res, err := r.l.Read(off, maxBytes, upTo, rng.IntN(2) == 0)
	if err != nil {
		r.fatalf("read %d: %v", off, err)
	}
	checkRead(r.t, m, res, off, maxBytes, upTo)
}

func (r *modelRun) truncate() bool {
	m := r.m
	if m.leo == m.start {
		return false
	}
	off := m.start + r.rng.Int64N(m.leo-m.start+1)
	if err := r.l.TruncateTo(off); err != nil {
		r.fatalf("truncate to %d: %v", off, err)
	}
	before := m.leo
	m.truncateTo(off)
	if m.leo == -1 {
		// Every batch went: the log ends at the kept segment's base
		// or restarts at off when the start offset's batch went.
		m.leo = r.l.LogEndOffset()
		if m.leo > off || m.leo < m.start || m.leo > before {
			r.fatalf("emptied log ends at %d after truncate to %d (start %d)", m.leo, off, m.start)
		}
		m.start = r.l.LogStartOffset()
		m.hw = min(max(m.hw, m.start), m.leo)
	}
	r.epoch++
	return true
}

func (r *modelRun) deleteRecords() bool {
	m := r.m
	if m.hw <= m.start {
		return false
	}
	off := m.start + r.rng.Int64N(m.hw-m.start+1)
	got, err := r.l.DeleteRecordsBefore(off)
	if err != nil || got != off {
		r.fatalf("DeleteRecordsBefore(%d) = %d, %v", off, got, err)
	}
	m.start = off
	m.dropBelowStart()
	return true
}

// retention deletes old segments under a random retention.bytes.
func (r *modelRun) retention() {
	retainBytes(r.t, r.l, r.cfg, int64(r.rng.IntN(8000)))
	if r.l.LogStartOffset() < r.m.start || r.l.LogStartOffset() > r.m.hw {
		r.fatalf("retention moved start to %d (model %d, hw %d)", r.l.LogStartOffset(), r.m.start, r.m.hw)
	}
	r.m.start = r.l.LogStartOffset()
	r.m.dropBelowStart()
}

// restartClean closes the log (flushed or not) and opens it again.
func (r *modelRun) restartClean() {
	if r.rng.IntN(2) == 0 {
		if err := r.l.Flush(); err != nil {
			r.t.Fatal(err)
		}
	}
	rp := r.l.RecoveryPoint()
	if err := r.l.Close(); err != nil {
		r.t.Fatal(err)
	}
	r.l = openTestLog(r.t, r.dir, r.cfg, r.clock, func(o *LogOptions) {
		quietLog(o)
		o.RecoveryPoint, o.LogStartOffset, o.HighWatermark = rp, r.m.start, r.m.hw
	})
}

// restartCrash drops the log's file handles as a crash would and opens it
// again without a clean shutdown.
func (r *modelRun) restartCrash() {
	rp := r.l.RecoveryPoint()
	crashClose(r.l)
	r.l = openTestLog(r.t, r.dir, r.cfg, r.clock, func(o *LogOptions) {
		quietLog(o)
		o.CleanShutdown = false
		o.RecoveryPoint, o.LogStartOffset, o.HighWatermark = rp, r.m.start, r.m.hw
	})
}

// retainBytes deletes l's old segments under retention.bytes = retention,
// then restores cfg.
func retainBytes(t *testing.T, l *Log, cfg Config, retention int64) {
	t.Helper()
	c := cfg
	c.RetentionBytes = retention
	if err := l.SetConfig(c); err != nil {
		t.Fatal(err)
	}
	if _, err := l.DeleteOldSegments(); err != nil {
		t.Fatal(err)
	}
	if err := l.SetConfig(cfg); err != nil {
		t.Fatal(err)
	}
}

// crashClose drops l's file handles as a crash would: no trimming of the
// indexes, no final time index entry, nothing flushed.
func crashClose(l *Log) {
	l.mu.Lock()
	l.mu.closed = true
	for _, s := range *l.segments.Load() {
		s.closeHandles()
	}
	l.mu.Unlock()
}

// verifyAll compares the log's offsets and every batch with the model.
func (r *modelRun) verifyAll(op string) {
	t, l, m := r.t, r.l, r.m
	t.Helper()
	seed, i := r.seed, r.i
	checkRecentPlaces(t, l, r.rng, fmt.Sprintf("seed %d iter %d after %s", seed, i, op))
	if l.LogEndOffset() != m.leo || l.LogStartOffset() != m.start || l.HighWatermark() != m.hw {
		t.Fatalf("seed %d iter %d after %s: log (start %d, end %d, hw %d), model (%d, %d, %d)",
			seed, i, op, l.LogStartOffset(), l.LogEndOffset(), l.HighWatermark(), m.start, m.leo, m.hw)
	}
	got := readBatches(t, l, m.start, m.leo)
	if len(got) != len(m.batches) {
		t.Fatalf("seed %d iter %d after %s: %d batches, model %d", seed, i, op, len(got), len(m.batches))
	}
	for k := range got {
		if !bytes.Equal(got[k], m.batches[k]) {
			t.Fatalf("seed %d iter %d after %s: batch %d differs", seed, i, op, k)
		}
	}
}

func (m *logModel) dropBelowStart() {
	keep := m.batches[:0]
	for _, b := range m.batches {
		if record.Batch(b).LastOffset() >= m.start {
			keep = append(keep, b)
		}
	}
	m.batches = keep
}

// checkRead compares one Read with the model: whole batches in order,
// starting with the batch holding off (or the next one), all below upTo,
// within maxBytes unless a single batch was returned.
func checkRead(t *testing.T, m *logModel, res ReadResult, off int64, maxBytes int, upTo int64) {
	t.Helper()
	got := readAllBatches(t, res)
	var want [][]byte
	size := 0
	for _, b := range m.batches {
		rb := record.Batch(b)
		if rb.LastOffset() < off || rb.LastOffset() >= upTo {
			continue
		}
		want = append(want, b)
	}
	for k, b := range got {
		if k >= len(want) || !bytes.Equal(b, want[k]) {
			t.Fatalf("read at %d (max %d, upTo %d): batch %d not the model's", off, maxBytes, upTo, k)
		}
		size += len(b)
	}
	if len(got) > 1 && size > maxBytes {
		t.Fatalf("read at %d returned %d bytes over maxBytes %d", off, size, maxBytes)
	}
	if len(got) < len(want) && len(got) > 0 && size+len(want[len(got)]) <= maxBytes {
		// Reads stop at a segment end, so a short read is allowed only
		// when the next batch lives in another segment; checked loosely
		// by requiring progress (at least one batch).
		_ = size
	}
	if len(want) > 0 && len(got) == 0 && maxBytes >= len(want[0]) {
		t.Fatalf("read at %d (max %d, upTo %d) returned nothing", off, maxBytes, upTo)
	}
}
