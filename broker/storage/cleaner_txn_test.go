package storage

import (
	"testing"

	"samsa/broker/record"
)

// txnKV builds a transactional batch of pid with one record key=value.
func txnKV(t *testing.T, pid int64, seq int32, key, value string, ts int64) []byte {
	t.Helper()
	h := record.NewBuildHeader(0, ts)
	h.ProducerID, h.ProducerEpoch, h.BaseSequence, h.Transactional = pid, 0, seq, true
	b, err := record.Build(h, []record.Record{{Key: []byte(key), Value: []byte(value)}}, record.CodecNone)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// Kafka 2.8 Cleaner: aborted data is removed whatever its key and never
// shadows an older committed value; nothing at or after the first unstable
// offset (an open transaction) is cleaned; a marker stays while a batch of
// its transaction is left (a kept ABORT keeps its .txnindex entry in the
// cleaned segment) and goes at the next pass past the delete horizon.
func TestStorageCleanerTransactions(t *testing.T) {
	root := t.TempDir()
	cfg := cleanerTestConfig()
	cfg.DeleteRetentionMs = 0 // the horizon is the last clean segment's time
	l := openCleanerTestLog(t, root, cfg)
	ts := int64(1_700_000_000_000)
	appendBatch(t, l, record.CodecNone, ts, ckv{key: "k", value: "committed"})  // 0
	appendLeader(t, l, txnKV(t, 7, 0, "k", "aborted", ts))                      // 1
	appendMarker(t, l, 7, 0, false, 1)                                          // 2
	appendLeader(t, l, txnKV(t, 8, 0, "j", "kept", ts))                         // 3
	appendMarker(t, l, 8, 0, true, 1)                                           // 4
	open := appendLeader(t, l, txnKV(t, 9, 0, "k", "open", ts)).FirstOffset     // 5
	appendBatch(t, l, record.CodecNone, ts, ckv{key: "k", value: "after-open"}) // 6
	mustRoll(t, l)
	appendBatch(t, l, record.CodecNone, ts, ckv{key: "z", value: "active"})
	l.SetHighWatermark(l.LogEndOffset())
	if fu, ok := l.FirstUnstableOffset(); !ok || fu != open {
		t.Fatalf("first unstable %d %v, want %d", fu, ok, open)
	}
	cleanOnce(t, newTestCleaner(l))
	var got []string
	for _, r := range readRecords(t, l) {
		if r.key == "k" || r.key == "j" {
			got = append(got, r.value)
		}
	}
	// "aborted" goes; "committed" survives (the aborted value does not
	// shadow it) up to the open transaction, which is not cleaned.
	want := []string{"committed", "kept", "open", "after-open"}
	if len(got) != len(want) {
		t.Fatalf("values after cleaning %q, want %q", got, want)
	}
	for i := range want {
		if got[i] != want[i] {
			t.Fatalf("values after cleaning %q, want %q", got, want)
		}
	}
	if got := markerPids(t, l); len(got) != 2 || got[0] != 7 || got[1] != 8 {
		t.Fatalf("markers after the first pass: producers %v, want [7 8]", got)
	}
	if es := l.Segments()[0].txnIndex.Entries(); len(es) != 1 || es[0].ProducerID != 7 {
		t.Fatalf("cleaned segment's txnindex %+v", es)
	}
	_, _, aborted, err := l.ReadCommitted(0, 1<<20, true)
	if err != nil || len(aborted) != 1 || aborted[0].ProducerID != 7 {
		t.Fatalf("read committed after cleaning: %+v %v", aborted, err)
	}

	// The open transaction commits and producer 7 writes a committed
	// transaction, so its emptied aborted batch is no longer its last one.
	// Past the horizon, the pass after the aborted batch is gone drops the
	// ABORT marker (Kafka's lastObservedBatchOffset keeps it one pass
	// longer) with its index entry; COMMIT markers whose data is left stay.
	appendMarker(t, l, 9, 0, true, 1)
	appendLeader(t, l, txnKV(t, 7, 1, "q", "later", ts))
	appendMarker(t, l, 7, 0, true, 1)
	for pass := 0; pass < 2; pass++ {
		mustRoll(t, l)
		appendBatch(t, l, record.CodecNone, ts, ckv{key: "y", value: "more"})
		l.SetHighWatermark(l.LogEndOffset())
		cleanOnce(t, newTestCleaner(l))
	}
	if got := markerPids(t, l); len(got) != 3 || got[0] != 8 || got[1] != 9 || got[2] != 7 {
		t.Fatalf("markers after two more passes: producers %v, want [8 9 7]", got)
	}
	for _, s := range l.Segments() {
		if es := s.txnIndex.Entries(); len(es) != 0 {
			t.Fatalf("segment %d keeps txnindex entries %+v", s.base, es)
		}
	}
}

// markerPids returns the producer ids of the log's control batches.
func markerPids(t *testing.T, l *Log) []int64 {
	t.Helper()
	var out []int64
	for _, s := range l.Segments() {
		ScanBatches(s.log, s.Size(), s.base, func(_ int64, b record.Batch) error {
			if b.IsControl() {
				out = append(out, b.ProducerID())
			}
			return nil
		})
	}
	return out
}

// Kafka 2.8's isBatchLastRecordOfProducer for a producer whose last write
// was a marker: the cleaner keeps that producer's markers of its current
// epoch and cleans those of older epochs like any other (past the delete
// horizon, no data of their transaction left).
func TestStorageCleanerKeepsCurrentEpochMarkers(t *testing.T) {
	root := t.TempDir()
	cfg := cleanerTestConfig()
	cfg.DeleteRetentionMs = 0
	l := openCleanerTestLog(t, root, cfg)
	ts := int64(1_700_000_000_000)
	appendBatch(t, l, record.CodecNone, ts, ckv{key: "k", value: "v"})
	appendMarker(t, l, 5, 0, false, 1) // an abort with no data, epoch 0
	appendMarker(t, l, 5, 1, false, 1) // fenced: epoch 1, still no data
	for pass := 0; pass < 2; pass++ {
		mustRoll(t, l)
		appendBatch(t, l, record.CodecNone, ts, ckv{key: "y", value: "more"})
		l.SetHighWatermark(l.LogEndOffset())
		cleanOnce(t, newTestCleaner(l))
	}
	var epochs []int16
	for _, s := range l.Segments() {
		ScanBatches(s.log, s.Size(), s.base, func(_ int64, b record.Batch) error {
			if b.IsControl() {
				epochs = append(epochs, b.ProducerEpoch())
			}
			return nil
		})
	}
	if len(epochs) != 1 || epochs[0] != 1 {
		t.Fatalf("markers left of the active producer: epochs %v, want [1]", epochs)
	}
}
