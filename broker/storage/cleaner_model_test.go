package storage

import (
	"bytes"
	"fmt"
	"math/rand/v2"
	"os"
	"reflect"
	"testing"

	"samsa/broker/record"
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
			tp := TopicPartition{Topic: "t", Partition: 0}
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
