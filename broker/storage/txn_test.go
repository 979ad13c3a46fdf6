package storage

import (
	"bytes"
	"encoding/hex"
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"testing"

	"samsa/broker/record"
)

// txnBatch builds a transactional batch of n records of producer pid.
func txnBatch(tb testing.TB, pid int64, epoch int16, seq int32, n int, ts int64) []byte {
	tb.Helper()
	b := record.Batch(idemBatch(tb, pid, epoch, seq, n, ts))
	recs, err := b.Records(0)
	if err != nil {
		tb.Fatal(err)
	}
	h := record.NewBuildHeader(0, ts)
	h.ProducerID, h.ProducerEpoch, h.BaseSequence, h.Transactional = pid, epoch, seq, true
	out, err := record.Build(h, recs, record.CodecNone)
	if err != nil {
		tb.Fatal(err)
	}
	return out
}

func appendMarker(tb testing.TB, l *Log, pid int64, epoch int16, commit bool, coordEpoch int32) AppendInfo {
	tb.Helper()
	info, err := l.AppendEndTxnMarker(pid, epoch, record.EndTxnMarker{Commit: commit, CoordinatorEpoch: coordEpoch}, 0)
	if err != nil {
		tb.Fatalf("marker: %v", err)
	}
	return info
}

// Golden bytes of one .txnindex entry (Kafka 2.8 AbortedTxn: version int16
// 0, producer id, first offset, last offset, last stable offset; 34 bytes).
func TestStorageTxnIndexEntryGolden(t *testing.T) {
	e := AbortedTxn{ProducerID: 0x0102030405060708, FirstOffset: 10, LastOffset: 42, LastStableOffset: 43}
	got := hex.EncodeToString(AppendAbortedTxn(nil, e))
	want := "0000" + "0102030405060708" + "000000000000000a" + "000000000000002a" + "000000000000002b"
	if got != want {
		t.Fatalf("entry bytes\n got %s\nwant %s", got, want)
	}
	dec, err := DecodeTxnIndex(AppendAbortedTxn(nil, e), 0)
	if err != nil || len(dec) != 1 || dec[0] != e {
		t.Fatalf("decode: %+v, %v", dec, err)
	}
	// A torn tail keeps the valid prefix and reports corruption.
	two := append(AppendAbortedTxn(nil, e), 0, 0, 1)
	if dec, err := DecodeTxnIndex(two, 0); len(dec) != 1 || err == nil {
		t.Fatalf("torn: %+v, %v", dec, err)
	}
}

func FuzzStorageTxnIndexDecode(f *testing.F) {
	f.Add(AppendAbortedTxn(nil, AbortedTxn{1, 0, 5, 6}), int64(0))
	f.Add(AppendAbortedTxn(AppendAbortedTxn(nil, AbortedTxn{1, 0, 5, 6}), AbortedTxn{2, 3, 9, 10}), int64(4))
	f.Add([]byte{0, 1, 2}, int64(-1))
	f.Fuzz(func(t *testing.T, data []byte, base int64) {
		es, err := DecodeTxnIndex(data, base)
		if len(es) > len(data)/txnIndexEntrySize {
			t.Fatalf("%d entries from %d bytes", len(es), len(data))
		}
		var re []byte
		for _, e := range es {
			re = AppendAbortedTxn(re, e)
		}
		if !bytes.Equal(re, data[:len(re)]) {
			t.Fatal("valid prefix does not re-encode to the input")
		}
		if err == nil && len(re) != len(data) {
			t.Fatal("no error but bytes left")
		}
	})
}

// Kafka 2.8: the LSO stops at the first offset of an open transaction; an
// ABORT marker indexes the transaction in the marker's segment's .txnindex,
// and read_committed reads list it; COMMIT indexes nothing.
func TestStorageTxnLastStableOffsetAndAbortedIndex(t *testing.T) {
	clock := newFakeClock()
	l := openTestLog(t, t.TempDir(), DefaultConfig(), clock, nil)
	defer l.Close()
	ts := clock.Now().UnixMilli()
	appendLeader(t, l, testBatch(t, 2, 10, ts))          // 0-1
	a := appendLeader(t, l, txnBatch(t, 7, 0, 0, 3, ts)) // 2-4, txn of 7
	b := appendLeader(t, l, txnBatch(t, 8, 0, 0, 2, ts)) // 5-6, txn of 8
	appendLeader(t, l, txnBatch(t, 7, 0, 3, 1, ts))      // 7
	l.SetHighWatermark(l.LogEndOffset())
	if got := l.LastStableOffset(); got != a.FirstOffset {
		t.Fatalf("LSO %d, want %d (first offset of the open transaction)", got, a.FirstOffset)
	}
	// A non-transactional batch of producer 7 while its txn is open.
	if _, err := l.AppendAsLeader(idemBatch(t, 7, 0, 4, 1, ts), 0); err == nil {
		t.Fatal("non-transactional batch inside an open transaction accepted")
	} else {
		errorIs(t, err, ErrInvalidTxnState)
	}
	abort := appendMarker(t, l, 7, 0, false, 3) // 8
	// The marker is not below the HW yet: the aborted txn still holds the LSO.
	if got := l.LastStableOffset(); got != a.FirstOffset {
		t.Fatalf("LSO before the marker is replicated: %d, want %d", got, a.FirstOffset)
	}
	l.SetHighWatermark(l.LogEndOffset())
	if got := l.LastStableOffset(); got != b.FirstOffset {
		t.Fatalf("LSO %d, want %d (producer 8's open txn)", got, b.FirstOffset)
	}
	commit := appendMarker(t, l, 8, 0, true, 3) // 9
	l.SetHighWatermark(l.LogEndOffset())
	if got, hw := l.LastStableOffset(), l.HighWatermark(); got != hw {
		t.Fatalf("LSO %d, want the HW %d", got, hw)
	}
	_ = commit
	want := []AbortedTxn{{ProducerID: 7, FirstOffset: 2, LastOffset: abort.FirstOffset, LastStableOffset: b.FirstOffset}}
	if got := l.activeLocked().txnIndex.Entries(); !reflect.DeepEqual(got, want) {
		t.Fatalf("txnindex %+v, want %+v", got, want)
	}
	raw, err := os.ReadFile(filepath.Join(l.Dir(), fmt.Sprintf("%020d.txnindex", 0)))
	if err != nil || !bytes.Equal(raw, AppendAbortedTxn(nil, want[0])) {
		t.Fatalf(".txnindex file %x (%v)", raw, err)
	}
	_, lso, aborted, err := l.ReadCommitted(0, 1<<20, true)
	if err != nil || lso != l.HighWatermark() || !reflect.DeepEqual(aborted, want) {
		t.Fatalf("read committed: lso %d aborted %+v err %v", lso, aborted, err)
	}
	// Reading after the marker needs no aborted transaction.
	if _, _, aborted, _ := l.ReadCommitted(abort.FirstOffset+1, 1<<20, true); len(aborted) != 0 {
		t.Fatalf("aborted after the marker: %+v", aborted)
	}
}

// Kafka 2.8 appendEndTxnMarker: an older producer epoch is
// INVALID_PRODUCER_EPOCH, an older coordinator epoch
// TRANSACTION_COORDINATOR_FENCED.
func TestStorageTxnMarkerFencing(t *testing.T) {
	clock := newFakeClock()
	l := openTestLog(t, t.TempDir(), DefaultConfig(), clock, nil)
	defer l.Close()
	ts := clock.Now().UnixMilli()
	appendLeader(t, l, txnBatch(t, 5, 2, 0, 1, ts))
	appendMarker(t, l, 5, 2, true, 7)
	appendLeader(t, l, txnBatch(t, 5, 2, 1, 1, ts))
	_, err := l.AppendEndTxnMarker(5, 2, record.EndTxnMarker{Commit: true, CoordinatorEpoch: 6}, 0)
	errorIs(t, err, ErrTransactionCoordinatorFenced)
	_, err = l.AppendEndTxnMarker(5, 1, record.EndTxnMarker{Commit: true, CoordinatorEpoch: 7}, 0)
	errorIs(t, err, ErrInvalidProducerEpoch)
	if e := producerEntry(t, l, 5); e.CurrentTxnFirstOffset < 0 || e.CoordinatorEpoch != 7 {
		t.Fatalf("entry after refused markers: %+v", e)
	}
	// Clients may not write control batches.
	h := record.NewBuildHeader(0, ts)
	h.ProducerID, h.ProducerEpoch = 5, 2
	mb, _ := record.BuildEndTxnMarker(h, record.EndTxnMarker{})
	_, err = l.AppendAsLeader(mb, 0)
	errorIs(t, err, record.ErrInvalidRecord)
}

// A hard kill: the .txnindex of the recovered segments is rebuilt from the
// log (Kafka's recoverSegment), the LSO from the producer state, and the
// followers' appends of markers index aborts too.
func TestStorageTxnRecoveryRebuildsIndexAndLSO(t *testing.T) {
	clock := newFakeClock()
	dir := t.TempDir()
	cfg := smallConfig()
	l := openTestLog(t, dir, cfg, clock, nil)
	defer l.Close()
	ts := clock.Now().UnixMilli()
	var want []AbortedTxn
	for i := range 30 {
		pid := int64(100 + i%2)
		seq := int32(i / 2 * 6)
		first := appendLeader(t, l, txnBatch(t, pid, 0, seq, 6, ts)).FirstOffset
		m := appendMarker(t, l, pid, 0, i%3 != 0, 1)
		if i%3 == 0 {
			want = append(want, AbortedTxn{ProducerID: pid, FirstOffset: first, LastOffset: m.FirstOffset, LastStableOffset: m.FirstOffset + 1})
		}
	}
	open := appendLeader(t, l, txnBatch(t, 300, 0, 0, 2, ts)).FirstOffset
	l.SetHighWatermark(l.LogEndOffset())
	if l.NumSegments() < 3 {
		t.Fatalf("only %d segments", l.NumSegments())
	}
	all := func(l *Log) []AbortedTxn {
		var out []AbortedTxn
		for _, s := range l.Segments() {
			out = append(out, s.txnIndex.Entries()...)
		}
		return out
	}
	if got := all(l); !reflect.DeepEqual(got, want) {
		t.Fatalf("entries\n got %+v\nwant %+v", got, want)
	}
	crashed := t.TempDir()
	copyDir(t, dir, crashed)
	// Damage the indexes a crash may lose: remove every .txnindex.
	files, _ := filepath.Glob(filepath.Join(crashed, "*.txnindex"))
	if len(files) == 0 {
		t.Fatal("no .txnindex files written")
	}
	for _, f := range files {
		os.Remove(f)
	}
	l2 := openTestLog(t, crashed, cfg, clock, func(o *LogOptions) {
		o.CleanShutdown = false
		o.HighWatermark = l.HighWatermark()
	})
	defer l2.Close()
	if got := all(l2); !reflect.DeepEqual(got, want) {
		t.Fatalf("entries after recovery\n got %+v\nwant %+v", got, want)
	}
	if got := l2.LastStableOffset(); got != open {
		t.Fatalf("LSO after recovery %d, want %d", got, open)
	}
	// A follower copying the log indexes the same aborts.
	f := openTestLog(t, t.TempDir(), cfg, clock, nil)
	defer f.Close()
	for _, b := range readBatches(t, l, 0, l.LogEndOffset()) {
		if _, err := f.AppendAsFollower(b); err != nil {
			t.Fatal(err)
		}
	}
	if got := all(f); !reflect.DeepEqual(got, want) {
		t.Fatalf("follower entries\n got %+v\nwant %+v", got, want)
	}
	// Truncation drops the entries at and after the truncation point.
	cut := want[len(want)-1].LastOffset
	if err := f.TruncateTo(cut); err != nil {
		t.Fatal(err)
	}
	if got := all(f); !reflect.DeepEqual(got, want[:len(want)-1]) {
		t.Fatalf("after truncation to %d: %+v", cut, got)
	}
}

// Kafka's v1 snapshot keeps current_txn_first_offset: after a clean
// restart (no replay) the open transaction still holds the LSO, and the
// .txnindex files are read back as they were.
func TestStorageTxnCleanRestartKeepsOpenTxn(t *testing.T) {
	clock := newFakeClock()
	dir := t.TempDir()
	l := openTestLog(t, dir, DefaultConfig(), clock, nil)
	ts := clock.Now().UnixMilli()
	appendLeader(t, l, txnBatch(t, 1, 0, 0, 2, ts))
	abort := appendMarker(t, l, 1, 0, false, 2)
	open := appendLeader(t, l, txnBatch(t, 2, 0, 0, 2, ts)).FirstOffset
	l.SetHighWatermark(l.LogEndOffset())
	hw := l.HighWatermark()
	if err := l.Close(); err != nil {
		t.Fatal(err)
	}
	l2 := openTestLog(t, dir, DefaultConfig(), clock, func(o *LogOptions) { o.HighWatermark = hw })
	defer l2.Close()
	if got := l2.LastStableOffset(); got != open {
		t.Fatalf("LSO after a clean restart %d, want %d", got, open)
	}
	want := []AbortedTxn{{ProducerID: 1, FirstOffset: 0, LastOffset: abort.FirstOffset, LastStableOffset: abort.FirstOffset + 1}}
	if got := l2.Segments()[0].txnIndex.Entries(); !reflect.DeepEqual(got, want) {
		t.Fatalf("txnindex after restart %+v, want %+v", got, want)
	}
	if e := producerEntry(t, l2, 2); e.CurrentTxnFirstOffset != open {
		t.Fatalf("producer 2 after restart: %+v", e)
	}
}
