package storage

import (
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"testing"
	"time"

	"samsa/broker/record"
)

// idemBatch builds an idempotent producer batch of n records starting at
// sequence seq, with CreateTime ts.
func idemBatch(tb testing.TB, pid int64, epoch int16, seq int32, n int, ts int64) []byte {
	tb.Helper()
	recs := make([]record.Record, n)
	for i := range recs {
		recs[i] = record.Record{OffsetDelta: int32(i), Key: []byte(fmt.Sprintf("k%d", i)), Value: []byte(fmt.Sprintf("p%d-s%d-%0100d", pid, int(seq)+i, 0))}
	}
	h := record.NewBuildHeader(0, ts)
	h.ProducerID, h.ProducerEpoch, h.BaseSequence = pid, epoch, seq
	b, err := record.Build(h, recs, record.CodecNone)
	if err != nil {
		tb.Fatalf("build batch: %v", err)
	}
	return b
}

func appendLeader(tb testing.TB, l *Log, b []byte) AppendInfo {
	tb.Helper()
	info, err := l.AppendAsLeader(b, 0)
	if err != nil {
		tb.Fatalf("append: %v", err)
	}
	return info
}

func producerEntry(tb testing.TB, l *Log, pid int64) ProducerEntry {
	tb.Helper()
	for _, e := range l.ProducerStates() {
		if e.ProducerID == pid {
			return e
		}
	}
	tb.Fatalf("no state for producer %d in %+v", pid, l.ProducerStates())
	return ProducerEntry{}
}

// Kafka 2.8 Log.analyzeAndValidateProducerState: a batch equal (producer,
// epoch, sequence range) to one of the producer's last five batches is not
// appended again; the append answers with the original offsets.
func TestStorageProducerDuplicateReturnsOriginalOffsets(t *testing.T) {
	clock := newFakeClock()
	l := openTestLog(t, t.TempDir(), DefaultConfig(), clock, nil)
	defer l.Close()
	ts := clock.Now().UnixMilli()
	appendLeader(t, l, testBatch(t, 2, 10, ts)) // offsets 0-1, no producer
	first := appendLeader(t, l, idemBatch(t, 7, 0, 0, 3, ts))
	if first.FirstOffset != 2 || first.LastOffset != 4 || first.Duplicate {
		t.Fatalf("first append %+v", first)
	}
	for seq := int32(3); seq < 12; seq += 3 {
		appendLeader(t, l, idemBatch(t, 7, 0, seq, 3, ts))
	}
	leo := l.LogEndOffset()
	// The second batch (sequences 3-5) is among the last five batches.
	dup := appendLeader(t, l, idemBatch(t, 7, 0, 3, 3, ts))
	if !dup.Duplicate || dup.FirstOffset != 5 || dup.LastOffset != 7 {
		t.Fatalf("duplicate append %+v, want offsets 5-7 marked duplicate", dup)
	}
	if l.LogEndOffset() != leo {
		t.Fatalf("log end moved from %d to %d on a duplicate", leo, l.LogEndOffset())
	}
	if got := readBatches(t, l, 0, l.LogEndOffset()); len(got) != 5 {
		t.Fatalf("%d batches in the log, want 5", len(got))
	}
	// Five more batches push sequences 0-2 out of the window: a retry of
	// them is now out of order, as in Kafka.
	for seq := int32(12); seq < 27; seq += 3 {
		appendLeader(t, l, idemBatch(t, 7, 0, seq, 3, ts))
	}
	_, err := l.AppendAsLeader(idemBatch(t, 7, 0, 0, 3, ts), 0)
	errorIs(t, err, ErrOutOfOrderSequence)
}

// Kafka 2.8 ProducerAppendInfo.checkSequence and checkProducerEpoch.
func TestStorageProducerSequenceAndEpochChecks(t *testing.T) {
	clock := newFakeClock()
	ts := clock.Now().UnixMilli()
	cases := []struct {
		name  string
		setup [][3]int64 // pid, epoch, first seq of 2-record batches appended first
		pid   int64
		epoch int16
		seq   int32
		want  error
	}{
		{"first batch at 0", nil, 1, 0, 0, nil},
		{"unknown producer not at 0", nil, 1, 0, 5, ErrUnknownProducerID},
		{"next in sequence", [][3]int64{{1, 0, 0}}, 1, 0, 2, nil},
		{"gap", [][3]int64{{1, 0, 0}}, 1, 0, 3, ErrOutOfOrderSequence},
		{"overlap, not a duplicate", [][3]int64{{1, 0, 0}}, 1, 0, 1, ErrOutOfOrderSequence},
		{"older epoch", [][3]int64{{1, 3, 0}}, 1, 2, 2, ErrInvalidProducerEpoch},
		{"newer epoch at 0", [][3]int64{{1, 3, 0}}, 1, 4, 0, nil},
		{"newer epoch not at 0", [][3]int64{{1, 3, 0}}, 1, 4, 2, ErrOutOfOrderSequence},
		{"other producer independent", [][3]int64{{1, 0, 0}}, 2, 0, 0, nil},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			l := openTestLog(t, t.TempDir(), DefaultConfig(), clock, nil)
			defer l.Close()
			for _, s := range tc.setup {
				appendLeader(t, l, idemBatch(t, s[0], int16(s[1]), int32(s[2]), 2, ts))
			}
			leo := l.LogEndOffset()
			_, err := l.AppendAsLeader(idemBatch(t, tc.pid, tc.epoch, tc.seq, 2, ts), 0)
			if tc.want == nil {
				if err != nil {
					t.Fatalf("append: %v", err)
				}
				return
			}
			errorIs(t, err, tc.want)
			if l.LogEndOffset() != leo {
				t.Fatalf("a rejected batch moved the log end")
			}
		})
	}
}

// A batch with a producer id but no sequence is INVALID_RECORD (Kafka's
// LogValidator.validateBatch).
func TestStorageProducerBatchWithoutSequenceRejected(t *testing.T) {
	clock := newFakeClock()
	l := openTestLog(t, t.TempDir(), DefaultConfig(), clock, nil)
	defer l.Close()
	_, err := l.AppendAsLeader(idemBatch(t, 3, 0, record.NoSequence, 1, clock.Now().UnixMilli()), 0)
	errorIs(t, err, record.ErrInvalidRecord)
}

// Sequences wrap from MaxInt32 to 0 (Kafka's inSequence).
func TestStorageProducerSequenceWraps(t *testing.T) {
	clock := newFakeClock()
	l := openTestLog(t, t.TempDir(), DefaultConfig(), clock, nil)
	defer l.Close()
	ts := clock.Now().UnixMilli()
	// Follower-style seeding: the state learns sequence MaxInt32-1..MaxInt32.
	b := idemBatch(t, 9, 0, 1<<31-2, 2, ts)
	record.Batch(b).SetBaseOffset(0)
	if _, err := l.AppendAsFollower(b); err != nil {
		t.Fatalf("follower append: %v", err)
	}
	appendLeader(t, l, idemBatch(t, 9, 0, 0, 2, ts))
	if e := producerEntry(t, l, 9); e.Batches[len(e.Batches)-1].LastSeq != 1 {
		t.Fatalf("state %+v", e)
	}
}

// Followers apply the leader's batches without validation (Kafka's
// AppendOrigin.Replication), so a new leader knows every producer.
func TestStorageProducerFollowerAppendUpdatesState(t *testing.T) {
	clock := newFakeClock()
	leader := openTestLog(t, t.TempDir(), DefaultConfig(), clock, nil)
	defer leader.Close()
	follower := openTestLog(t, t.TempDir(), DefaultConfig(), clock, nil)
	defer follower.Close()
	ts := clock.Now().UnixMilli()
	for seq := int32(0); seq < 9; seq += 3 {
		appendLeader(t, leader, idemBatch(t, 4, 1, seq, 3, ts))
	}
	for _, b := range readBatches(t, leader, 0, leader.LogEndOffset()) {
		if _, err := follower.AppendAsFollower(append([]byte(nil), b...)); err != nil {
			t.Fatalf("follower append: %v", err)
		}
	}
	if !reflect.DeepEqual(leader.ProducerStates(), follower.ProducerStates()) {
		t.Fatalf("leader state %+v, follower %+v", leader.ProducerStates(), follower.ProducerStates())
	}
	// The follower, once leader, recognises a retry.
	dup := appendLeader(t, follower, idemBatch(t, 4, 1, 6, 3, ts))
	if !dup.Duplicate || dup.FirstOffset != 6 {
		t.Fatalf("retry on the new leader: %+v", dup)
	}
}

// The state survives a clean restart through the snapshot written at close,
// named by the log end offset, and a crash through the snapshot written at
// the last roll plus a replay of the log after it.
func TestStorageProducerStateSurvivesRestart(t *testing.T) {
	for _, clean := range []bool{true, false} {
		t.Run(fmt.Sprintf("clean=%v", clean), func(t *testing.T) {
			clock := newFakeClock()
			dir := t.TempDir()
			cfg := smallConfig()
			l := openTestLog(t, dir, cfg, clock, nil)
			ts := clock.Now().UnixMilli()
			for i := range 40 {
				appendLeader(t, l, idemBatch(t, int64(i%3), 0, int32(i/3*2), 2, ts))
			}
			if l.NumSegments() < 3 {
				t.Fatalf("only %d segments; the test needs rolls", l.NumSegments())
			}
			want := l.ProducerStates()
			leo := l.LogEndOffset()
			reopenDir := dir
			if clean {
				if err := l.Close(); err != nil {
					t.Fatal(err)
				}
				snaps, _ := listProducerSnapshots(OSFS{}, dir)
				if len(snaps) == 0 || snaps[len(snaps)-1] != leo {
					t.Fatalf("snapshots %v, want the last at the log end %d", snaps, leo)
				}
			} else {
				// A crash: copy the files of the open log, as a kill -9
				// would leave them (no snapshot at the end).
				reopenDir = t.TempDir()
				copyDir(t, dir, reopenDir)
				defer l.Close()
			}
			l2 := openTestLog(t, reopenDir, cfg, clock, func(o *LogOptions) { o.CleanShutdown = clean })
			defer l2.Close()
			got := l2.ProducerStates()
			// A snapshot keeps only each producer's last batch.
			for i := range want {
				want[i].Batches = want[i].Batches[len(want[i].Batches)-1:]
				if !clean {
					got[i].Batches = got[i].Batches[len(got[i].Batches)-1:]
				}
			}
			if !reflect.DeepEqual(got, want) {
				t.Fatalf("state after restart\n got %+v\nwant %+v", got, want)
			}
			// The last batch of producer 1 is recognised as a duplicate and
			// the next sequence is accepted.
			last := want[1].Batches[0]
			dup := appendLeader(t, l2, idemBatch(t, 1, 0, last.FirstSeq, 2, ts))
			if !dup.Duplicate || dup.FirstOffset != last.FirstOffset {
				t.Fatalf("retry after restart: %+v, want duplicate of %+v", dup, last)
			}
			appendLeader(t, l2, idemBatch(t, 1, 0, last.LastSeq+1, 2, ts))
		})
	}
}

func copyDir(tb testing.TB, from, to string) {
	tb.Helper()
	entries, err := os.ReadDir(from)
	if err != nil {
		tb.Fatal(err)
	}
	for _, e := range entries {
		data, err := os.ReadFile(filepath.Join(from, e.Name()))
		if err != nil {
			tb.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(to, e.Name()), data, 0o644); err != nil {
			tb.Fatal(err)
		}
	}
}

// Truncation reloads the state from a snapshot at or below the new end and
// replays the log up to it (Kafka's truncateAndReload).
func TestStorageProducerStateTruncation(t *testing.T) {
	clock := newFakeClock()
	cfg := smallConfig()
	l := openTestLog(t, t.TempDir(), cfg, clock, nil)
	defer l.Close()
	ts := clock.Now().UnixMilli()
	var infos []AppendInfo
	for seq := int32(0); seq < 120; seq += 2 {
		infos = append(infos, appendLeader(t, l, idemBatch(t, 5, 0, seq, 2, ts)))
	}
	cut := infos[40].FirstOffset // keeps batches 0..39 (sequences 0..79)
	if err := l.TruncateTo(cut); err != nil {
		t.Fatal(err)
	}
	e := producerEntry(t, l, 5)
	if last := e.Batches[len(e.Batches)-1]; last.LastSeq != 79 || last.LastOffset != cut-1 {
		t.Fatalf("after truncation to %d the last batch is %+v", cut, last)
	}
	snaps, _ := l.ProducerSnapshotOffsets()
	for _, o := range snaps {
		if o > cut {
			t.Fatalf("snapshot %d survived truncation to %d", o, cut)
		}
	}
	// The truncated sequences are accepted again.
	if info := appendLeader(t, l, idemBatch(t, 5, 0, 80, 2, ts)); info.Duplicate || info.FirstOffset != cut {
		t.Fatalf("append after truncation %+v", info)
	}
	if err := l.TruncateFullyAndStartAt(500); err != nil {
		t.Fatal(err)
	}
	if s := l.ProducerStates(); len(s) != 0 {
		t.Fatalf("state after full truncation %+v", s)
	}
	if snaps, _ := l.ProducerSnapshotOffsets(); len(snaps) != 0 {
		t.Fatalf("snapshots after full truncation %v", snaps)
	}
}

// Deleting segments deletes their snapshots; producers stay (Kafka 2.8
// keeps producer state when the log start moves) until they expire after
// transactional.id.expiration.ms by their last batch's timestamp.
func TestStorageProducerSnapshotsFollowLogStartAndExpire(t *testing.T) {
	clock := newFakeClock()
	cfg := smallConfig()
	cfg.ProducerIDExpirationMs = 60_000
	l := openTestLog(t, t.TempDir(), cfg, clock, nil)
	defer l.Close()
	ts := clock.Now().UnixMilli()
	for seq := int32(0); seq < 80; seq += 2 {
		appendLeader(t, l, idemBatch(t, 6, 0, seq, 2, ts))
	}
	l.SetHighWatermark(l.LogEndOffset())
	segs := l.Segments()
	newStart := segs[len(segs)-1].BaseOffset()
	if _, err := l.DeleteRecordsBefore(newStart); err != nil {
		t.Fatal(err)
	}
	snaps, _ := l.ProducerSnapshotOffsets()
	if len(snaps) == 0 {
		t.Fatalf("no snapshot left")
	}
	for _, o := range snaps {
		if o < newStart {
			t.Fatalf("snapshot %d below the first segment %d kept", o, newStart)
		}
	}
	producerEntry(t, l, 6)
	clock.Advance(59 * time.Second)
	if n := l.RemoveExpiredProducers(); n != 0 {
		t.Fatalf("expired %d producers early", n)
	}
	clock.Advance(time.Second)
	if _, err := l.DeleteOldSegments(); err != nil {
		t.Fatal(err)
	}
	if s := l.ProducerStates(); len(s) != 0 {
		t.Fatalf("state after expiry %+v", s)
	}
	// An expired producer continuing its sequence is unknown.
	_, err := l.AppendAsLeader(idemBatch(t, 6, 0, 80, 2, clock.Now().UnixMilli()), 0)
	errorIs(t, err, ErrUnknownProducerID)
}

// A corrupt latest snapshot is deleted and the state is rebuilt from an
// older one and the log.
func TestStorageProducerCorruptSnapshotFallsBack(t *testing.T) {
	clock := newFakeClock()
	dir := t.TempDir()
	cfg := smallConfig()
	l := openTestLog(t, dir, cfg, clock, nil)
	ts := clock.Now().UnixMilli()
	for seq := int32(0); seq < 80; seq += 2 {
		appendLeader(t, l, idemBatch(t, 8, 2, seq, 2, ts))
	}
	want := l.ProducerStates()
	if err := l.Close(); err != nil {
		t.Fatal(err)
	}
	snaps, _ := listProducerSnapshots(OSFS{}, dir)
	latest := producerSnapshotPath(dir, snaps[len(snaps)-1])
	data, _ := os.ReadFile(latest)
	data[len(data)-1] ^= 0xff
	if err := os.WriteFile(latest, data, 0o644); err != nil {
		t.Fatal(err)
	}
	l2 := openTestLog(t, dir, cfg, clock, nil)
	defer l2.Close()
	got := producerEntry(t, l2, 8)
	if got.Epoch != 2 || got.Batches[len(got.Batches)-1] != want[0].Batches[len(want[0].Batches)-1] {
		t.Fatalf("state after corrupt snapshot %+v, want last batch %+v", got, want[0].Batches)
	}
}

// Several batches of one producer in one append (the group coordinator's or
// a converted message set's path) are checked in order against each other.
func TestStorageProducerSeveralBatchesInOneAppend(t *testing.T) {
	clock := newFakeClock()
	l := openTestLog(t, t.TempDir(), DefaultConfig(), clock, nil)
	defer l.Close()
	ts := clock.Now().UnixMilli()
	two := append(idemBatch(t, 3, 0, 0, 2, ts), idemBatch(t, 3, 0, 2, 2, ts)...)
	if info := appendLeader(t, l, two); info.LastOffset != 3 {
		t.Fatalf("append %+v", info)
	}
	gap := append(idemBatch(t, 3, 0, 4, 2, ts), idemBatch(t, 3, 0, 7, 1, ts)...)
	_, err := l.AppendAsLeader(gap, 0)
	errorIs(t, err, ErrOutOfOrderSequence)
	if l.LogEndOffset() != 4 {
		t.Fatalf("rejected append moved the log end to %d", l.LogEndOffset())
	}
}

// Without any snapshot, a clean start assumes no producer state (a log
// from before snapshots, Kafka's upgrade rule) and an unclean one replays
// the whole log.
func TestStorageProducerStateWithoutSnapshots(t *testing.T) {
	clock := newFakeClock()
	dir := t.TempDir()
	cfg := smallConfig()
	l := openTestLog(t, dir, cfg, clock, nil)
	ts := clock.Now().UnixMilli()
	for seq := int32(0); seq < 60; seq += 2 {
		appendLeader(t, l, idemBatch(t, 2, 0, seq, 2, ts))
	}
	if err := l.Close(); err != nil {
		t.Fatal(err)
	}
	removeSnapshots := func() {
		snaps, _ := listProducerSnapshots(OSFS{}, dir)
		for _, o := range snaps {
			if err := os.Remove(producerSnapshotPath(dir, o)); err != nil {
				t.Fatal(err)
			}
		}
	}
	removeSnapshots()
	l = openTestLog(t, dir, cfg, clock, nil)
	if s := l.ProducerStates(); len(s) != 0 {
		t.Fatalf("clean start without snapshots loaded %+v", s)
	}
	if err := l.Close(); err != nil {
		t.Fatal(err)
	}
	removeSnapshots()
	l = openTestLog(t, dir, cfg, clock, func(o *LogOptions) { o.CleanShutdown = false })
	defer l.Close()
	if e := producerEntry(t, l, 2); e.Batches[len(e.Batches)-1].LastSeq != 59 || len(e.Batches) != 5 {
		t.Fatalf("replayed state %+v", e)
	}
}
