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
	dir := filepath.Join(t.TempDir(), "t-0")
	clock := newFakeClock()
	cfg := smallConfig()
	cfg.SegmentBytes = int32(2048 + rng.IntN(4096))
	cfg.IndexIntervalBytes = int32(rng.IntN(1024))
	quiet := func(o *LogOptions) { o.Logger = nil }
	l := openTestLog(t, dir, cfg, clock, quiet)
	defer func() { l.Close() }()
	m := &logModel{}
	epoch := int32(0)

	verifyAll := func(op string, i int) {
		t.Helper()
		checkRecentPlaces(t, l, rng, fmt.Sprintf("seed %d iter %d after %s", seed, i, op))
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

	for i := 0; i < iters; i++ {
		op := ""
		switch r := rng.IntN(100); {
		case r < 55:
			op = "append"
			b := testBatch(t, 1+rng.IntN(6), rng.IntN(300), clock.Now().UnixMilli())
			info, err := l.AppendAsLeader(b, epoch)
			if err != nil {
				t.Fatalf("seed %d iter %d: append: %v", seed, i, err)
			}
			if info.FirstOffset != m.leo {
				t.Fatalf("seed %d iter %d: appended at %d, model LEO %d", seed, i, info.FirstOffset, m.leo)
			}
			m.batches = append(m.batches, b)
			m.leo = info.LastOffset + 1
			clock.Advance(1000)
		case r < 70:
			op = "read"
			if m.leo == m.start {
				continue
			}
			off := m.start + rng.Int64N(m.leo-m.start)
			maxBytes := rng.IntN(3000)
			upTo := m.leo
			if rng.IntN(2) == 0 {
				upTo = m.hw
			}
			res, err := l.Read(off, maxBytes, upTo, rng.IntN(2) == 0)
			if err != nil {
				t.Fatalf("seed %d iter %d: read %d: %v", seed, i, off, err)
			}
			checkRead(t, m, res, off, maxBytes, upTo)
		case r < 75:
			op = "roll"
			if err := l.Roll(); err != nil {
				t.Fatal(err)
			}
		case r < 80:
			op = "truncate"
			if m.leo == m.start {
				continue
			}
			off := m.start + rng.Int64N(m.leo-m.start+1)
			if err := l.TruncateTo(off); err != nil {
				t.Fatalf("seed %d iter %d: truncate to %d: %v", seed, i, off, err)
			}
			before := m.leo
			m.truncateTo(off)
			if m.leo == -1 {
				// Every batch went: the log ends at the kept segment's base
				// or restarts at off when the start offset's batch went.
				m.leo = l.LogEndOffset()
				if m.leo > off || m.leo < m.start || m.leo > before {
					t.Fatalf("seed %d iter %d: emptied log ends at %d after truncate to %d (start %d)", seed, i, m.leo, off, m.start)
				}
				m.start = l.LogStartOffset()
				m.hw = min(max(m.hw, m.start), m.leo)
			}
			epoch++
		case r < 85:
			op = "hw"
			if m.leo > m.start {
				m.hw = m.start + rng.Int64N(m.leo-m.start+1)
			}
			l.SetHighWatermark(m.hw)
		case r < 88:
			op = "delete-records"
			if m.hw <= m.start {
				continue
			}
			off := m.start + rng.Int64N(m.hw-m.start+1)
			got, err := l.DeleteRecordsBefore(off)
			if err != nil || got != off {
				t.Fatalf("seed %d iter %d: DeleteRecordsBefore(%d) = %d, %v", seed, i, off, got, err)
			}
			m.start = off
			m.dropBelowStart()
		case r < 91:
			op = "retention"
			c := cfg
			c.RetentionBytes = int64(rng.IntN(8000))
			if err := l.SetConfig(c); err != nil {
				t.Fatal(err)
			}
			if _, err := l.DeleteOldSegments(); err != nil {
				t.Fatal(err)
			}
			if err := l.SetConfig(cfg); err != nil {
				t.Fatal(err)
			}
			if l.LogStartOffset() < m.start || l.LogStartOffset() > m.hw {
				t.Fatalf("seed %d iter %d: retention moved start to %d (model %d, hw %d)", seed, i, l.LogStartOffset(), m.start, m.hw)
			}
			m.start = l.LogStartOffset()
			m.dropBelowStart()
		case r < 96:
			op = "restart-clean"
			if rng.IntN(2) == 0 {
				if err := l.Flush(); err != nil {
					t.Fatal(err)
				}
			}
			rp := l.RecoveryPoint()
			if err := l.Close(); err != nil {
				t.Fatal(err)
			}
			l = openTestLog(t, dir, cfg, clock, func(o *LogOptions) {
				quiet(o)
				o.RecoveryPoint, o.LogStartOffset, o.HighWatermark = rp, m.start, m.hw
			})
		default:
			op = "restart-crash"
			rp := l.RecoveryPoint()
			l.mu.Lock()
			l.mu.closed = true
			for _, s := range *l.segments.Load() {
				s.closeHandles() // no trimming, no final time index entry
			}
			l.mu.Unlock()
			l = openTestLog(t, dir, cfg, clock, func(o *LogOptions) {
				quiet(o)
				o.CleanShutdown = false
				o.RecoveryPoint, o.LogStartOffset, o.HighWatermark = rp, m.start, m.hw
			})
		}
		if op == "read" {
			continue
		}
		verifyAll(op, i)
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
