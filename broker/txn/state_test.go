package txn

import (
	"testing"

	"github.com/twmb/franz-go/pkg/kerr"

	"samsa/kafka"
)

// TestTxnStateTransitions checks every (from, to) pair against Kafka
// 2.8's validPreviousStates, written out here as a table.
func TestTxnStateTransitions(t *testing.T) {
	all := []State{Empty, Ongoing, PrepareCommit, PrepareAbort, CompleteCommit, CompleteAbort, Dead, PrepareEpochFence}
	valid := map[[2]State]bool{}
	for _, e := range [][2]State{
		{Empty, Empty}, {CompleteCommit, Empty}, {CompleteAbort, Empty},
		{Ongoing, Ongoing}, {Empty, Ongoing}, {CompleteCommit, Ongoing}, {CompleteAbort, Ongoing},
		{Ongoing, PrepareCommit},
		{Ongoing, PrepareAbort}, {PrepareEpochFence, PrepareAbort},
		{PrepareCommit, CompleteCommit}, {PrepareAbort, CompleteAbort},
		{Empty, Dead}, {CompleteCommit, Dead}, {CompleteAbort, Dead},
		{Ongoing, PrepareEpochFence},
	} {
		valid[e] = true
	}
	for _, from := range all {
		for _, to := range all {
			if got := ValidTransition(from, to); got != valid[[2]State{from, to}] {
				t.Errorf("%v -> %v: %v, want %v", from, to, got, !got)
			}
		}
	}
	for _, s := range all {
		if p, ok := ParseState(s.String()); !ok || p != s {
			t.Errorf("ParseState(%q) = %v, %v", s.String(), p, ok)
		}
	}
}

func md(state State, pid int64, epoch int16, parts ...kafka.TopicPartition) transit {
	return transit{pid: pid, lastPID: -1, epoch: epoch, lastEpoch: -1, timeoutMs: 60000, state: state,
		partitions: parts, startMs: -1}
}

// TestTxnDecideInit covers handleInitProducerId with KIP-360 (the table
// in the reference, A2.3).
func TestTxnDecideInit(t *testing.T) {
	exhausted := md(CompleteCommit, 7, 32766)
	withLast := md(Empty, 7, 5)
	withLast.lastEpoch = 4
	for _, c := range []struct {
		name             string
		md               transit
		pending          bool
		expPID           int64
		expEpoch         int16
		code             int16
		fence, rotate    bool
		epoch, lastEpoch int16
	}{
		{name: "new id bumps -1 to 0", md: md(Empty, 7, -1), expPID: -1, expEpoch: -1, epoch: 0, lastEpoch: -1},
		{name: "no expected epoch", md: md(CompleteAbort, 7, 3), expPID: -1, expEpoch: -1, epoch: 4, lastEpoch: -1},
		{name: "expected = current", md: md(Empty, 7, 3), expPID: 7, expEpoch: 3, epoch: 4, lastEpoch: 3},
		{name: "retry of a bump", md: withLast, expPID: 7, expEpoch: 4, epoch: 5, lastEpoch: 4},
		{name: "stale expected epoch", md: md(Empty, 7, 5), expPID: 7, expEpoch: 2, code: kerr.ProducerFenced.Code},
		{name: "other producer id", md: md(Empty, 7, 5), expPID: 8, expEpoch: 0, code: kerr.ProducerFenced.Code},
		{name: "exhausted rotates", md: exhausted, expPID: -1, expEpoch: -1, rotate: true, epoch: 0, lastEpoch: -1},
		{name: "exhausted with expected", md: exhausted, expPID: 7, expEpoch: 32766, rotate: true, epoch: 0, lastEpoch: 32766},
		{name: "pending", md: md(Empty, 7, 1), pending: true, expPID: -1, code: kerr.ConcurrentTransactions.Code},
		{name: "prepare commit", md: md(PrepareCommit, 7, 1), expPID: -1, code: kerr.ConcurrentTransactions.Code},
		{name: "ongoing fences", md: md(Ongoing, 7, 1, kafka.TopicPartition{Topic: "a", Partition: 0}), expPID: -1, fence: true, epoch: 2, lastEpoch: -1},
	} {
		d := decideInit(c.md, c.pending, 30000, c.expPID, c.expEpoch, 100)
		if d.code != c.code || d.fence != c.fence || d.rotate != c.rotate {
			t.Errorf("%s: %+v", c.name, d)
			continue
		}
		if c.code != 0 {
			continue
		}
		if d.t.epoch != c.epoch || d.t.lastEpoch != c.lastEpoch {
			t.Errorf("%s: epoch %d last %d, want %d %d", c.name, d.t.epoch, d.t.lastEpoch, c.epoch, c.lastEpoch)
		}
		switch {
		case c.fence:
			if d.t.state != PrepareAbort || len(d.t.partitions) != 1 {
				t.Errorf("%s: fence writes %+v", c.name, d.t)
			}
		default:
			if d.t.state != Empty || d.t.partitions != nil || d.t.startMs != -1 || d.t.timeoutMs != 30000 {
				t.Errorf("%s: writes %+v", c.name, d.t)
			}
		}
		if c.rotate && d.t.lastPID != 7 {
			t.Errorf("%s: last pid %d", c.name, d.t.lastPID)
		}
	}
}

// TestTxnDecideEnd is the EndTxn table (reference A2.5).
func TestTxnDecideEnd(t *testing.T) {
	const (
		ok   = 0
		conc = 51 // CONCURRENT_TRANSACTIONS
		bad  = 48 // INVALID_TXN_STATE
	)
	for _, c := range []struct {
		state         State
		commit, abort int16
		writes        bool
	}{
		{Ongoing, ok, ok, true},
		{PrepareCommit, conc, bad, false},
		{PrepareAbort, bad, conc, false},
		{CompleteCommit, ok, bad, false},
		{CompleteAbort, bad, ok, false},
		{Empty, bad, bad, false},
	} {
		for _, commit := range []bool{true, false} {
			want := c.abort
			if commit {
				want = c.commit
			}
			tr, write, code := decideEnd(md(c.state, 7, 1), false, 7, 1, commit, 5)
			if code != want || write != (c.writes && code == 0) {
				t.Errorf("%v commit=%v: code %d write %v, want %d", c.state, commit, code, write, want)
			}
			if write && (commit && tr.state != PrepareCommit || !commit && tr.state != PrepareAbort) {
				t.Errorf("%v commit=%v: writes %v", c.state, commit, tr.state)
			}
		}
	}
	if _, _, code := decideEnd(md(Ongoing, 7, 1), false, 8, 1, true, 5); code != kerr.InvalidProducerIDMapping.Code {
		t.Errorf("pid mismatch: %d", code)
	}
	if _, _, code := decideEnd(md(Ongoing, 7, 2), false, 7, 1, true, 5); code != kerr.ProducerFenced.Code {
		t.Errorf("old epoch: %d", code)
	}
	if _, _, code := decideEnd(md(Ongoing, 7, 1), true, 7, 1, true, 5); code != kerr.ConcurrentTransactions.Code {
		t.Errorf("pending: %d", code)
	}
}

func TestTxnDecideAdd(t *testing.T) {
	a0, a1 := kafka.TopicPartition{Topic: "a", Partition: 0}, kafka.TopicPartition{Topic: "a", Partition: 1}
	tr, write, code := decideAdd(md(CompleteCommit, 7, 1), false, 7, 1, []kafka.TopicPartition{a0}, 50)
	if code != 0 || !write || tr.state != Ongoing || tr.startMs != 50 || len(tr.partitions) != 1 {
		t.Fatalf("from CompleteCommit: %+v %v %d", tr, write, code)
	}
	ongoing := md(Ongoing, 7, 1, a0)
	ongoing.startMs = 10
	if _, write, code := decideAdd(ongoing, false, 7, 1, []kafka.TopicPartition{a0}, 50); write || code != 0 {
		t.Fatalf("already added: write %v code %d", write, code)
	}
	tr, write, _ = decideAdd(ongoing, false, 7, 1, []kafka.TopicPartition{a1, a0}, 50)
	if !write || tr.startMs != 10 || len(tr.partitions) != 2 {
		t.Fatalf("union: %+v", tr)
	}
	for name, c := range map[string]struct {
		md      transit
		pending bool
		pid     int64
		epoch   int16
		code    int16
	}{
		"pid":     {ongoing, false, 8, 1, kerr.InvalidProducerIDMapping.Code},
		"epoch":   {ongoing, false, 7, 0, kerr.ProducerFenced.Code},
		"pending": {ongoing, true, 7, 1, kerr.ConcurrentTransactions.Code},
		"prepare": {md(PrepareAbort, 7, 1), false, 7, 1, kerr.ConcurrentTransactions.Code},
	} {
		if _, _, code := decideAdd(c.md, c.pending, c.pid, c.epoch, []kafka.TopicPartition{a1}, 50); code != c.code {
			t.Errorf("%s: %d, want %d", name, code, c.code)
		}
	}
}

func TestTxnDecideVerify(t *testing.T) {
	a0, a1 := kafka.TopicPartition{Topic: "a", Partition: 0}, kafka.TopicPartition{Topic: "a", Partition: 1}
	res, code := decideVerify(md(Ongoing, 7, 1, a0), 7, 1, []kafka.TopicPartition{a0, a1})
	if code != 0 || res[a0] != 0 || res[a1] != kerr.InvalidTxnState.Code {
		t.Fatalf("verify: %v %d", res, code)
	}
	if _, code := decideVerify(md(Ongoing, 7, 2, a0), 7, 1, nil); code != kerr.ProducerFenced.Code {
		t.Errorf("epoch: %d", code)
	}
	if _, code := decideVerify(md(PrepareCommit, 7, 1, a0), 7, 1, nil); code != kerr.ConcurrentTransactions.Code {
		t.Errorf("prepare: %d", code)
	}
	if res, _ := decideVerify(md(CompleteCommit, 7, 1), 7, 1, []kafka.TopicPartition{a0}); res[a0] != kerr.InvalidTxnState.Code {
		t.Errorf("complete: %v", res)
	}
}
