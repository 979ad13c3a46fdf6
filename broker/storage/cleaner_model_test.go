package storage

import (
	"bytes"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"reflect"
	"testing"
	"time"

	"samsa/broker/record"
	"samsa/kafka"
)

// TestStorageCleanerRandomized runs random workloads (few keys, tombstones,
// rolls, mixed codecs, several passes with appends in between) and checks
// compaction's invariants against the uncleaned history after every pass:
//   - every remaining record existed before with the same offset, key and
//     value (offsets never change, nothing is invented);
//   - the latest record of every key is still there (tombstones included,
//     since delete.retention.ms is not reached);
//   - below the checkpointed offset each key appears at most once;
//   - the active segment's bytes, the log end offset and the high
//     watermark are unchanged;
//   - the log reopens with the same records.
func TestStorageCleanerRandomized(t *testing.T) {
	codecs := []record.Codec{record.CodecNone, record.CodecGzip, record.CodecSnappy, record.CodecLZ4, record.CodecZstd}
	for seed := uint64(1); seed <= 6; seed++ {
		t.Run(fmt.Sprint("seed", seed), func(t *testing.T) {
			rng := rand.New(rand.NewPCG(seed, 99))
			root := t.TempDir()
			cfg := cleanerTestConfig()
			cfg.SegmentBytes = 400 + rng.Int32N(600) // small: several cleaning groups
			l := openCleanerTestLog(t, root, cfg)
			c := newTestCleaner(l)
			tp := kafka.TopicPartition{Topic: "t", Partition: 0}
			var history []crec // every record ever appended
			for round := 0; round < 4; round++ {
				for op := 0; op < 40; op++ {
					if rng.IntN(8) == 0 {
						mustRoll(t, l)
						continue
					}
					n := 1 + rng.IntN(4)
					recs := make([]ckv, n)
					for i := range recs {
						recs[i] = ckv{key: fmt.Sprintf("k%d", rng.IntN(12)), value: fmt.Sprintf("v%d", rng.IntN(1000)), tomb: rng.IntN(6) == 0}
						if recs[i].tomb {
							recs[i].value = ""
						}
					}
					base := l.LogEndOffset()
					appendBatch(t, l, codecs[rng.IntN(len(codecs))], 1000, recs...)
					for i, r := range recs {
						history = append(history, crec{base + int64(i), r.key, r.value, r.tomb})
					}
				}
				l.SetHighWatermark(l.LogEndOffset() - int64(rng.IntN(3)))
				segs := l.Segments()
				active := segs[len(segs)-1]
				activeBefore, err := os.ReadFile(active.logPath)
				if err != nil {
					t.Fatal(err)
				}
				leo, hw := l.LogEndOffset(), l.HighWatermark()
				for i := 0; i < 10 && cleanOnce(t, c); i++ {
				}
				checkRecentPlaces(t, l, rng, fmt.Sprintf("round %d after cleaning", round))
				got := readRecords(t, l)
				checkCompacted(t, history, got, readCleanerCheckpoint(t, root)[tp])
				activeAfter, err := os.ReadFile(active.logPath)
				if err != nil || !bytes.Equal(activeBefore, activeAfter) {
					t.Fatalf("round %d: active segment changed (%v)", round, err)
				}
				if l.LogEndOffset() != leo || l.HighWatermark() != hw {
					t.Fatalf("round %d: LEO/HW %d/%d, want %d/%d", round, l.LogEndOffset(), l.HighWatermark(), leo, hw)
				}
			}
			want := readRecords(t, l)
			if len(want) >= len(history) {
				t.Fatalf("nothing was compacted: %d of %d records left", len(want), len(history))
			}
			l.Close()
			l2 := openCleanerTestLog(t, root, cfg)
			if got := readRecords(t, l2); !reflect.DeepEqual(got, want) {
				t.Fatalf("reopened log differs:\n got %v\nwant %v", got, want)
			}
		})
	}
}

// checkCompacted checks the invariants listed on TestStorageCleanerRandomized.
func checkCompacted(t *testing.T, history, got []crec, cleanedTo int64) {
	t.Helper()
	byOffset := make(map[int64]crec, len(history))
	latest := make(map[string]int64)
	for _, r := range history {
		byOffset[r.offset] = r
		latest[r.key] = r.offset
	}
	present := make(map[int64]bool, len(got))
	seenBelow := make(map[string]bool)
	prev := int64(-1)
	for _, r := range got {
		if r.offset <= prev {
			t.Fatalf("offsets not increasing at %d after %d", r.offset, prev)
		}
		prev = r.offset
		if h, ok := byOffset[r.offset]; !ok || h != r {
			t.Fatalf("record %+v does not match history %+v", r, h)
		}
		present[r.offset] = true
		if r.offset < cleanedTo {
			if seenBelow[r.key] {
				t.Fatalf("key %q twice below cleaned offset %d", r.key, cleanedTo)
			}
			seenBelow[r.key] = true
		}
	}
	for k, off := range latest {
		if !present[off] {
			t.Fatalf("latest record of %q (offset %d) was removed", k, off)
		}
	}
}

// TestStorageCleanerProducersRandomized runs random workloads of
// idempotent producers and plain batches, with the log's clock moving,
// retention's producer expiry, rolls, several passes and restarts (clean
// ones from the snapshot, unclean ones without any snapshot), and checks
// Kafka 2.8's producer rule besides TestStorageCleanerRandomized's record
// invariants:
//   - after the passes, the last data batch of every producer that was
//     active (in the table and not expired by the clock) is in the log
//     with its offsets and sequence;
//   - an empty batch is left only for such a producer: an expired
//     producer's batch is removed once its records are superseded;
//   - after a restart, a retry of the last batch of every producer not
//     expired is a duplicate answered with the original offsets.
func TestStorageCleanerProducersRandomized(t *testing.T) {
	for seed := uint64(1); seed <= 4; seed++ {
		t.Run(fmt.Sprint("seed", seed), func(t *testing.T) {
			root, clock := t.TempDir(), newFakeClock()
			r := &cleanerProducersRun{t: t, rng: rand.New(rand.NewPCG(seed, 7)), root: root, clock: clock,
				l: openProducerCleanerLog(t, root, clock, true), last: map[int64]*producerSent{}}
			for round := 0; round < 5; round++ {
				for op := 0; op < 40; op++ {
					r.op()
				}
				r.cleanAndCheck(round)
				r.restartAndRetry(round)
			}
			if r.retries == 0 || r.emptied == 0 {
				t.Fatalf("workload too weak: %d retries after restarts, %d empty batches seen", r.retries, r.emptied)
			}
		})
	}
}

// producerSent is a producer's last batch.
type producerSent struct {
	seq, n      int32
	first, last int64
	keys        []string
}

// cleanerProducersRun is one seed's run of
// TestStorageCleanerProducersRandomized.
type cleanerProducersRun struct {
	t       *testing.T
	rng     *rand.Rand
	root    string
	clock   *fakeClock
	l       *Log
	last    map[int64]*producerSent // per producer id: its last batch, while in the table
	history []crec
	retries int // retried last batches after restarts
	emptied int // empty batches seen after cleaning
}

func (r *cleanerProducersRun) inTable(pid int64) bool {
	for _, e := range r.l.ProducerStates() {
		if e.ProducerID == pid {
			return true
		}
	}
	return false
}

// op is one random operation: a roll, time passing, producer expiry, or an
// append by an idempotent producer or by none.
func (r *cleanerProducersRun) op() {
	t, l, rng := r.t, r.l, r.rng
	switch x := rng.IntN(20); {
	case x < 2:
		mustRoll(t, l)
	case x < 4:
		r.clock.Advance(time.Duration(rng.IntN(40)) * time.Second)
	case x < 5:
		l.RemoveExpiredProducers()
	default:
		n := 1 + rng.IntN(3)
		keys := make([]string, n)
		for i := range keys {
			keys[i] = fmt.Sprintf("k%d", rng.IntN(10))
		}
		if x < 12 {
			r.producerAppend(keys)
		} else {
			r.plainAppend(keys)
		}
	}
}

// producerAppend appends keys as the next batch of a random producer id
// (sequence 0 when it is not in the table).
func (r *cleanerProducersRun) producerAppend(keys []string) {
	base := r.l.LogEndOffset()
	pid := int64(1 + r.rng.IntN(4))
	seq := int32(0)
	if p := r.last[pid]; p != nil && r.inTable(pid) {
		seq = p.seq + p.n
	}
	info := producerAppend(r.t, r.l, r.clock, pid, seq, keys...)
	r.last[pid] = &producerSent{seq, int32(len(keys)), info.FirstOffset, info.LastOffset, keys}
	for i, k := range keys {
		r.history = append(r.history, crec{base + int64(i), k, "v", false})
	}
}

// plainAppend appends keys without a producer id, some as tombstones.
func (r *cleanerProducersRun) plainAppend(keys []string) {
	base := r.l.LogEndOffset()
	recs := make([]ckv, len(keys))
	for i, k := range keys {
		recs[i] = ckv{key: k, value: "v", tomb: r.rng.IntN(6) == 0}
		if recs[i].tomb {
			recs[i].value = ""
		}
	}
	appendBatch(r.t, r.l, record.CodecNone, r.clock.Now().UnixMilli(), recs...)
	for i, rc := range recs {
		r.history = append(r.history, crec{base + int64(i), rc.key, rc.value, rc.tomb})
	}
}

// cleanAndCheck moves the high watermark, cleans the log and checks the
// compaction, that every active producer's last batch survives, and that
// only those may be left empty.
func (r *cleanerProducersRun) cleanAndCheck(round int) {
	t, l := r.t, r.l
	tp := kafka.TopicPartition{Topic: "t", Partition: 0}
	l.SetHighWatermark(l.LogEndOffset() - int64(r.rng.IntN(3)))
	nowMs := r.clock.Now().UnixMilli()
	active := map[int64]int64{} // producer id → last data offset
	for _, e := range l.ProducerStates() {
		if len(e.Batches) > 0 && nowMs-e.LastTimestamp < producerTestExpiration.Milliseconds() {
			active[e.ProducerID] = e.Batches[len(e.Batches)-1].LastOffset
		}
	}
	c := newTestCleaner(l)
	passes := 0
	for passes < 10 && cleanOnce(t, c) {
		passes++
	}
	checkCompacted(t, r.history, readRecords(t, l), readCleanerCheckpoint(t, r.root)[tp])
	batches := logBatches(t, l)
	for pid, off := range active {
		found := false
		for _, b := range batches {
			found = found || (b.pid == pid && b.last == off && b.seq == r.last[pid].seq)
		}
		if !found {
			t.Fatalf("round %d: last batch (offset %d) of active producer %d is gone: %+v", round, off, pid, batches)
		}
	}
	for _, b := range batches {
		if b.n == 0 {
			r.emptied++
		}
		if passes > 0 && b.n == 0 && (b.pid < 0 || active[b.pid] != b.last) {
			t.Fatalf("round %d: empty batch %+v of a producer not active (%v)", round, b, active)
		}
	}
}

// restartAndRetry restarts the log (unclean, without producer snapshots,
// on odd rounds) and retries every live producer's last batch, which must
// be answered as a duplicate at its offsets.
func (r *cleanerProducersRun) restartAndRetry(round int) {
	t := r.t
	r.l.Close()
	clean := round%2 == 0
	if !clean {
		removeProducerSnapshots(t, filepath.Join(r.root, "t-0"))
	}
	r.l = openProducerCleanerLog(t, r.root, r.clock, clean)
	l := r.l
	for pid, p := range r.last {
		if !r.inTable(pid) {
			delete(r.last, pid) // expired: it starts again at sequence 0
			continue
		}
		if r.clock.Now().UnixMilli()-producerEntry(t, l, pid).LastTimestamp >= producerTestExpiration.Milliseconds() {
			continue // expired (an unclean replay keeps it in the table): nothing promised
		}
		leo := l.LogEndOffset()
		r.retries++
		info := producerAppend(t, l, r.clock, pid, p.seq, p.keys...)
		if !info.Duplicate || info.FirstOffset != p.first || info.LastOffset != p.last || l.LogEndOffset() != leo {
			t.Fatalf("round %d (clean restart %v): retry of producer %d's last batch answered %+v, want a duplicate at %d-%d",
				round, clean, pid, info, p.first, p.last)
		}
	}
}
