package storage

import (
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"time"

	"samsa/broker/record"
	"samsa/kafka"
)

// Kafka 2.8's cleaner keeps the last batch of a producer only while the
// producer is in the log's producer table (Cleaner.cleanSegments reads
// log.lastRecordsOfActiveProducers; cleanInto's isBatchLastRecordOfProducer
// answers RETAIN_EMPTY for it). These tests pin that rule, with the log's
// injected clock driving expiry.

// producerTestExpiration is the producer expiry these tests configure.
const producerTestExpiration = time.Minute

// openProducerCleanerLog opens partition t-0 under root with the fake
// clock; clean says whether the previous shutdown was clean.
func openProducerCleanerLog(t *testing.T, root string, clock *fakeClock, clean bool) *Log {
	t.Helper()
	cfg := cleanerTestConfig()
	cfg.ProducerIDExpirationMs = producerTestExpiration.Milliseconds()
	l := openTestLog(t, filepath.Join(root, "t-0"), cfg, clock, func(o *LogOptions) { o.CleanShutdown = clean })
	t.Cleanup(func() { l.Close() })
	return l
}

// producerAppend appends one idempotent batch of pid holding keys (value
// v<seq>), timestamped with the clock, and returns the append's answer.
func producerAppend(t *testing.T, l *Log, clock *fakeClock, pid int64, seq int32, keys ...string) AppendInfo {
	t.Helper()
	recs := make([]record.Record, len(keys))
	for i, k := range keys {
		recs[i] = record.Record{OffsetDelta: int32(i), Key: []byte(k), Value: []byte("v")}
	}
	h := record.NewBuildHeader(0, clock.Now().UnixMilli())
	h.ProducerID, h.ProducerEpoch, h.BaseSequence = pid, 0, seq
	b, err := record.Build(h, recs, record.CodecNone)
	if err != nil {
		t.Fatal(err)
	}
	return appendLeader(t, l, b)
}

// pbatch is a batch header as the producer tests compare it.
type pbatch struct {
	base, last, pid int64
	seq, n          int32
}

// logBatches lists the headers of every batch in the log.
func logBatches(t *testing.T, l *Log) []pbatch {
	t.Helper()
	var out []pbatch
	for _, s := range l.Segments() {
		_, stop, err := ScanBatches(s.log, s.Size(), s.base, func(_ int64, b record.Batch) error {
			out = append(out, pbatch{b.BaseOffset(), b.LastOffset(), b.ProducerID(), b.BaseSequence(), b.NumRecords()})
			return nil
		})
		if err != nil || stop != nil {
			t.Fatalf("segment %d: %v %v", s.base, err, stop)
		}
	}
	return out
}

// lastBatches maps each producer of the table to its epoch and last batch.
func lastBatches(l *Log) map[int64][2]any {
	out := map[int64][2]any{}
	for _, e := range l.ProducerStates() {
		if n := len(e.Batches); n > 0 {
			out[e.ProducerID] = [2]any{e.Epoch, e.Batches[n-1]}
		}
	}
	return out
}

// TestStorageCleanerExpiredProducerBatchRemoved: the last batch of an
// expired producer is cleaned like any other once a newer record has its
// key, whether retention already dropped the producer from the table or
// only the clock says it expired; a live producer's last batch stays
// (emptied) until that producer expires too, and then the next pass
// removes the empty batch.
func TestStorageCleanerExpiredProducerBatchRemoved(t *testing.T) {
	for _, retention := range []bool{false, true} {
		name := map[bool]string{false: "expired by clock", true: "removed by retention"}[retention]
		t.Run(name, func(t *testing.T) {
			root, clock := t.TempDir(), newFakeClock()
			l := openProducerCleanerLog(t, root, clock, true)
			producerAppend(t, l, clock, 5, 0, "a") // offset 0: expires
			clock.Advance(2 * producerTestExpiration)
			producerAppend(t, l, clock, 9, 0, "b")                                                                   // offset 1: live
			appendBatch(t, l, record.CodecNone, clock.Now().UnixMilli(), ckv{"a", "2", false}, ckv{"b", "2", false}) // 2-3
			mustRoll(t, l)
			appendBatch(t, l, record.CodecNone, clock.Now().UnixMilli(), ckv{"x", "x", false}) // 4, active
			l.SetHighWatermark(l.LogEndOffset())
			if retention {
				if n := l.RemoveExpiredProducers(); n != 1 {
					t.Fatalf("retention removed %d producers, want 1", n)
				}
			} else if _, ok := lastBatches(l)[5]; !ok {
				t.Fatal("producer 5 left the table before retention ran")
			}
			c := newTestCleaner(l)
			if !cleanOnce(t, c) {
				t.Fatal("nothing cleaned")
			}
			want := []pbatch{{1, 1, 9, 0, 0}, {2, 3, -1, -1, 2}, {4, 4, -1, -1, 1}}
			if got := logBatches(t, l); !reflect.DeepEqual(got, want) {
				t.Fatalf("after the first pass %+v, want %+v", got, want)
			}
			// Producer 9 expires too; the next pass (the log has new dirty
			// data) removes its empty batch.
			clock.Advance(2 * producerTestExpiration)
			appendBatch(t, l, record.CodecNone, clock.Now().UnixMilli(), ckv{"y", "y", false}) // 5
			mustRoll(t, l)
			appendBatch(t, l, record.CodecNone, clock.Now().UnixMilli(), ckv{"z", "z", false}) // 6, active
			l.SetHighWatermark(l.LogEndOffset())
			if !cleanOnce(t, c) {
				t.Fatal("second pass cleaned nothing")
			}
			want = []pbatch{{2, 3, -1, -1, 2}, {4, 4, -1, -1, 1}, {5, 5, -1, -1, 1}, {6, 6, -1, -1, 1}}
			if got := logBatches(t, l); !reflect.DeepEqual(got, want) {
				t.Fatalf("after the second pass %+v, want %+v", got, want)
			}
		})
	}
}

// TestStorageCleanerLiveProducerRetryAfterClean: a live producer's last
// batch survives cleaning as an empty batch with its offsets and
// sequences, so a retry of it is answered as a duplicate with the original
// offsets after the pass, after a clean restart (from the snapshot) and
// after an unclean restart without snapshots (from the log alone), and
// the producer's next sequence is accepted.
func TestStorageCleanerLiveProducerRetryAfterClean(t *testing.T) {
	root, clock := t.TempDir(), newFakeClock()
	l := openProducerCleanerLog(t, root, clock, true)
	producerAppend(t, l, clock, 7, 0, "k1")                                                                                           // offset 0
	producerAppend(t, l, clock, 7, 1, "k2", "k3")                                                                                     // 1-2
	appendBatch(t, l, record.CodecNone, clock.Now().UnixMilli(), ckv{"k1", "b", false}, ckv{"k2", "b", false}, ckv{"k3", "b", false}) // 3-5
	mustRoll(t, l)
	appendBatch(t, l, record.CodecNone, clock.Now().UnixMilli(), ckv{"x", "x", false}) // 6, active
	l.SetHighWatermark(l.LogEndOffset())
	if !cleanOnce(t, newTestCleaner(l)) {
		t.Fatal("nothing cleaned")
	}
	want := []pbatch{{1, 2, 7, 1, 0}, {3, 5, -1, -1, 3}, {6, 6, -1, -1, 1}}
	if got := logBatches(t, l); !reflect.DeepEqual(got, want) {
		t.Fatalf("after cleaning %+v, want %+v", got, want)
	}
	retry := func(l *Log, when string) {
		t.Helper()
		leo := l.LogEndOffset()
		info := producerAppend(t, l, clock, 7, 1, "k2", "k3")
		if !info.Duplicate || info.FirstOffset != 1 || info.LastOffset != 2 || l.LogEndOffset() != leo {
			t.Fatalf("%s: retry answered %+v (log end %d → %d), want a duplicate at 1-2", when, info, leo, l.LogEndOffset())
		}
	}
	retry(l, "after cleaning")
	clock.Advance(producerTestExpiration / 2) // still live
	l.Close()
	l = openProducerCleanerLog(t, root, clock, true)
	retry(l, "after a clean restart")
	l.Close()
	removeProducerSnapshots(t, filepath.Join(root, "t-0"))
	l = openProducerCleanerLog(t, root, clock, false)
	retry(l, "after an unclean restart without snapshots")
	if info := producerAppend(t, l, clock, 7, 3, "k4"); info.Duplicate || info.FirstOffset != 7 {
		t.Fatalf("next sequence answered %+v, want appended at 7", info)
	}
}

// removeProducerSnapshots deletes every producer snapshot in dir.
func removeProducerSnapshots(t *testing.T, dir string) {
	t.Helper()
	for _, name := range mustReadDir(t, dir) {
		if strings.HasSuffix(name, ".snapshot") {
			if err := os.Remove(filepath.Join(dir, name)); err != nil {
				t.Fatal(err)
			}
		}
	}
}

// TestStorageCleanerCheckpointAgreesWithProducerSnapshot: after a pass and
// a clean restart, the cleaner checkpoint is where the pass ended and a new
// cleaner finds nothing to clean; the producer table loaded from the
// snapshot equals the one a full replay of the cleaned log builds (the log
// holds the last batch of every producer the snapshot keeps, and none of
// the expired producer the snapshot load drops).
func TestStorageCleanerCheckpointAgreesWithProducerSnapshot(t *testing.T) {
	root, clock := t.TempDir(), newFakeClock()
	tp := kafka.TopicPartition{Topic: "t", Partition: 0}
	l := openProducerCleanerLog(t, root, clock, true)
	producerAppend(t, l, clock, 2, 0, "a") // offset 0: expires
	clock.Advance(2 * producerTestExpiration)
	producerAppend(t, l, clock, 1, 0, "b")                                                                                         // 1
	producerAppend(t, l, clock, 1, 1, "c")                                                                                         // 2: producer 1's last
	appendBatch(t, l, record.CodecNone, clock.Now().UnixMilli(), ckv{"a", "2", false}, ckv{"b", "2", false}, ckv{"c", "2", false}) // 3-5
	mustRoll(t, l)
	appendBatch(t, l, record.CodecNone, clock.Now().UnixMilli(), ckv{"x", "x", false}) // 6, active
	l.SetHighWatermark(l.LogEndOffset())
	if !cleanOnce(t, newTestCleaner(l)) {
		t.Fatal("nothing cleaned")
	}
	cleanedTo := readCleanerCheckpoint(t, root)[tp]
	if cleanedTo != 6 {
		t.Fatalf("checkpoint %d, want 6", cleanedTo)
	}
	wantBatches := []pbatch{{2, 2, 1, 1, 0}, {3, 5, -1, -1, 3}, {6, 6, -1, -1, 1}}
	if got := logBatches(t, l); !reflect.DeepEqual(got, wantBatches) {
		t.Fatalf("after cleaning %+v, want %+v", got, wantBatches)
	}
	l.Close()

	l = openProducerCleanerLog(t, root, clock, true)
	fromSnapshot := lastBatches(l)
	if _, ok := fromSnapshot[2]; ok || len(fromSnapshot) != 1 {
		t.Fatalf("table from the snapshot %+v, want producer 1 only", fromSnapshot)
	}
	if got := readCleanerCheckpoint(t, root)[tp]; got != cleanedTo {
		t.Fatalf("checkpoint %d after restart, want %d", got, cleanedTo)
	}
	if cleanOnce(t, newTestCleaner(l)) {
		t.Fatal("a new cleaner cleaned the clean log again")
	}
	if got := logBatches(t, l); !reflect.DeepEqual(got, wantBatches) {
		t.Fatalf("after restart %+v, want %+v", got, wantBatches)
	}
	l.Close()

	removeProducerSnapshots(t, filepath.Join(root, "t-0"))
	l = openProducerCleanerLog(t, root, clock, false)
	if fromLog := lastBatches(l); !reflect.DeepEqual(fromLog, fromSnapshot) {
		t.Fatalf("table replayed from the log %+v, from the snapshot %+v", fromLog, fromSnapshot)
	}
}
