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
	type sent struct {
		seq, n      int32
		first, last int64
		keys        []string
	}
	for seed := uint64(1); seed <= 4; seed++ {
		t.Run(fmt.Sprint("seed", seed), func(t *testing.T) {
			rng := rand.New(rand.NewPCG(seed, 7))
			root, clock := t.TempDir(), newFakeClock()
			l := openProducerCleanerLog(t, root, clock, true)
			tp := kafka.TopicPartition{Topic: "t", Partition: 0}
			last := map[int64]*sent{} // per producer id: its last batch, while in the table
			var history []crec
			retries, emptied := 0, 0
			inTable := func(pid int64) bool {
				for _, e := range l.ProducerStates() {
					if e.ProducerID == pid {
						return true
					}
				}
				return false
			}
			for round := 0; round < 5; round++ {
				for op := 0; op < 40; op++ {
					switch r := rng.IntN(20); {
					case r < 2:
						mustRoll(t, l)
					case r < 4:
						clock.Advance(time.Duration(rng.IntN(40)) * time.Second)
					case r < 5:
						l.RemoveExpiredProducers()
					default:
						n := 1 + rng.IntN(3)
						keys := make([]string, n)
						for i := range keys {
							keys[i] = fmt.Sprintf("k%d", rng.IntN(10))
						}
						base := l.LogEndOffset()
						if r < 12 {
							pid := int64(1 + rng.IntN(4))
							seq := int32(0)
							if p := last[pid]; p != nil && inTable(pid) {
								seq = p.seq + p.n
							}
							info := producerAppend(t, l, clock, pid, seq, keys...)
							last[pid] = &sent{seq, int32(n), info.FirstOffset, info.LastOffset, keys}
						} else {
							recs := make([]ckv, n)
							for i, k := range keys {
								recs[i] = ckv{key: k, value: "v", tomb: rng.IntN(6) == 0}
								if recs[i].tomb {
									recs[i].value = ""
								}
							}
							appendBatch(t, l, record.CodecNone, clock.Now().UnixMilli(), recs...)
							for i, r := range recs {
								history = append(history, crec{base + int64(i), r.key, r.value, r.tomb})
							}
							continue
						}
						for i, k := range keys {
							history = append(history, crec{base + int64(i), k, "v", false})
						}
					}
				}
				l.SetHighWatermark(l.LogEndOffset() - int64(rng.IntN(3)))
				nowMs := clock.Now().UnixMilli()
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
				checkCompacted(t, history, readRecords(t, l), readCleanerCheckpoint(t, root)[tp])
				batches := logBatches(t, l)
				for pid, off := range active {
					found := false
					for _, b := range batches {
						found = found || (b.pid == pid && b.last == off && b.seq == last[pid].seq)
					}
					if !found {
						t.Fatalf("round %d: last batch (offset %d) of active producer %d is gone: %+v", round, off, pid, batches)
					}
				}
				for _, b := range batches {
					if b.n == 0 {
						emptied++
					}
					if passes > 0 && b.n == 0 && (b.pid < 0 || active[b.pid] != b.last) {
						t.Fatalf("round %d: empty batch %+v of a producer not active (%v)", round, b, active)
					}
				}
				// Restart, and retry every live producer's last batch.
				l.Close()
				clean := round%2 == 0
				if !clean {
					removeProducerSnapshots(t, filepath.Join(root, "t-0"))
				}
				l = openProducerCleanerLog(t, root, clock, clean)
				for pid, p := range last {
					if !inTable(pid) {
						delete(last, pid) // expired: it starts again at sequence 0
						continue
					}
					if clock.Now().UnixMilli()-producerEntry(t, l, pid).LastTimestamp >= producerTestExpiration.Milliseconds() {
						continue // expired (an unclean replay keeps it in the table): nothing promised
					}
					leo := l.LogEndOffset()
					retries++
					info := producerAppend(t, l, clock, pid, p.seq, p.keys...)
					if !info.Duplicate || info.FirstOffset != p.first || info.LastOffset != p.last || l.LogEndOffset() != leo {
						t.Fatalf("round %d (clean restart %v): retry of producer %d's last batch answered %+v, want a duplicate at %d-%d",
							round, clean, pid, info, p.first, p.last)
					}
				}
			}
			if retries == 0 || emptied == 0 {
				t.Fatalf("workload too weak: %d retries after restarts, %d empty batches seen", retries, emptied)
			}
		})
	}
}
