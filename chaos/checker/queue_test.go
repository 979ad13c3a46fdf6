package checker

import (
	"fmt"
	"strings"
	"testing"
	"time"

	h "samsa/chaos/history"
)

// hist builds a hand-made history; times advance 1 ms per op.
type hist struct {
	ops []h.Op
	t   int64
}

func (b *hist) add(op h.Op) *hist {
	if op.Time == 0 {
		b.t += int64(time.Millisecond)
		op.Time = b.t
	} else {
		b.t = op.Time
	}
	b.ops = append(b.ops, op)
	return b
}

// sent records an invoke and an ok for value proc/seq at p/o.
func (b *hist) sent(proc string, seq int64, idem bool, p int32, o int64) *hist {
	v := fmt.Sprintf("%s/%d", proc, seq)
	b.add(h.Op{Process: proc, Type: h.Invoke, F: h.Send, Value: v, Seq: seq, Idempotent: idem})
	return b.add(h.Op{Process: proc, Type: h.OK, F: h.Send, Value: v, Seq: seq, Idempotent: idem, Partition: p, Offset: o})
}

func (b *hist) sendEnd(proc string, seq int64, idem bool, typ string) *hist {
	v := fmt.Sprintf("%s/%d", proc, seq)
	b.add(h.Op{Process: proc, Type: h.Invoke, F: h.Send, Value: v, Seq: seq, Idempotent: idem})
	return b.add(h.Op{Process: proc, Type: typ, F: h.Send, Value: v, Seq: seq, Idempotent: idem})
}

func (b *hist) final(p int32, o int64, v string) *hist {
	return b.add(h.Op{Process: "final", Type: h.OK, F: h.FinalRead, Partition: p, Offset: o, Value: v})
}

func (b *hist) end(p int32, o int64) *hist {
	return b.add(h.Op{Process: "final", Type: h.OK, F: h.FinalEnd, Partition: p, Offset: o})
}

func (b *hist) poll(proc string, p int32, o int64, v string) *hist {
	return b.add(h.Op{Process: proc, Type: h.OK, F: h.Poll, Partition: p, Offset: o, Value: v})
}

// clean is a valid history: two producers on two partitions, a consumer
// that reads everything, a final read of everything.
func clean() *hist {
	b := &hist{}
	b.sent("a", 1, true, 0, 0).sent("a", 2, true, 0, 1).sent("b", 1, true, 1, 0).sent("b", 2, true, 1, 1)
	b.add(h.Op{Process: "c", Type: h.OK, F: h.Assign, Partition: 0})
	b.add(h.Op{Process: "c", Type: h.OK, F: h.Assign, Partition: 1})
	b.poll("c", 0, 0, "a/1").poll("c", 0, 1, "a/2").poll("c", 1, 0, "b/1").poll("c", 1, 1, "b/2")
	b.final(0, 0, "a/1").final(0, 1, "a/2").final(1, 0, "b/1").final(1, 1, "b/2").end(0, 2).end(1, 2)
	return b
}

func TestCheckCleanHistory(t *testing.T) {
	r := Check(clean().ops)
	if f := r.Failures(); len(f) != 0 {
		t.Fatalf("clean history flagged: %v", f)
	}
	if r.Acked != 4 || r.FinalRecords != 4 || r.Polled != 4 || r.Unseen != 0 {
		t.Fatalf("counts: %+v", r)
	}
}

func TestCheckLostWrite(t *testing.T) {
	b := &hist{}
	b.sent("a", 1, true, 0, 0).sent("a", 2, true, 0, 1)
	b.final(0, 0, "a/1").end(0, 1)
	r := Check(b.ops)
	if len(r.Lost) != 1 || r.Lost[0].Value != "a/2" {
		t.Fatalf("lost: %v", r.Lost)
	}
}

func TestCheckIndeterminateNeverLost(t *testing.T) {
	b := &hist{}
	b.sent("a", 1, true, 0, 0).sendEnd("a", 2, true, h.Info).sendEnd("a", 3, true, h.Fail)
	b.final(0, 0, "a/1").end(0, 1)
	r := Check(b.ops)
	if len(r.Failures()) != 0 || r.Indeterminate != 1 || r.Failed != 1 {
		t.Fatalf("info/fail sends absent from the log must not count: %v %+v", r.Failures(), r)
	}
	// An info send that did land is fine too.
	b = &hist{}
	b.sendEnd("a", 1, true, h.Info).final(0, 0, "a/1").end(0, 1)
	if f := Check(b.ops).Failures(); len(f) != 0 {
		t.Fatalf("indeterminate send in the log flagged: %v", f)
	}
}

func TestCheckDuplicates(t *testing.T) {
	b := &hist{}
	b.sent("a", 1, true, 0, 0).sendEnd("n", 1, false, h.Info)
	b.final(0, 0, "a/1").final(0, 1, "a/1").final(0, 2, "n/1").final(0, 3, "n/1").end(0, 4)
	r := Check(b.ops)
	if r.Duplicates() != 1 || r.DuplicatesIdempotent[0].Value != "a/1" {
		t.Fatalf("idempotent duplicates: %v", r.DuplicatesIdempotent)
	}
	if len(r.DuplicatesOther) != 1 || r.DuplicatesOther[0].Value != "n/1" {
		t.Fatalf("other duplicates: %v", r.DuplicatesOther)
	}
	if len(r.Order) != 0 {
		t.Fatalf("a duplicate is not also an order violation: %v", r.Order)
	}
}

func TestCheckOrder(t *testing.T) {
	b := &hist{}
	// Producer a wrote seq 1 then 2, the log holds 2 before 1.
	b.sendEnd("a", 1, true, h.Info).sendEnd("a", 2, true, h.Info).sendEnd("n", 1, false, h.Info).sendEnd("n", 2, false, h.Info)
	b.final(0, 0, "a/2").final(0, 1, "a/1").final(1, 0, "n/2").final(1, 1, "n/1").end(0, 2).end(1, 2)
	r := Check(b.ops)
	if len(r.Order) != 1 || r.Order[0].Value != "a/1" {
		t.Fatalf("order: %v", r.Order)
	}
	if len(r.OrderOther) != 1 {
		t.Fatalf("non-idempotent reorder is reported apart: %v", r.OrderOther)
	}
}

func TestCheckInconsistentOffset(t *testing.T) {
	b := &hist{}
	b.sent("a", 1, true, 0, 0).sent("a", 2, true, 0, 0) // both acked at offset 0
	b.final(0, 0, "a/1").final(0, 1, "a/2").end(0, 2)
	r := Check(b.ops)
	if len(r.InconsistentOffsets) != 1 || r.InconsistentOffsets[0].Value != "a/2" {
		t.Fatalf("inconsistent: %v", r.InconsistentOffsets)
	}
	// A consumer that read another value at an offset.
	b = clean()
	b.ops = append(b.ops[:0:0], b.ops...)
	b.poll("c", 0, 1, "a/1")
	r = Check(b.ops)
	if len(r.InconsistentOffsets) != 1 {
		t.Fatalf("polled value differs from the log: %v", r.InconsistentOffsets)
	}
}

func TestCheckPhantomAndAbortedRead(t *testing.T) {
	b := &hist{}
	b.sent("a", 1, true, 0, 0).sendEnd("a", 2, true, h.Fail)
	b.add(h.Op{Process: "c", Type: h.OK, F: h.Assign, Partition: 0})
	b.poll("c", 0, 0, "a/1").poll("c", 0, 1, "a/2").poll("c", 0, 2, "ghost")
	b.final(0, 0, "a/1").final(0, 1, "a/2").final(0, 2, "ghost").end(0, 3)
	r := Check(b.ops)
	if len(r.Phantoms) != 2 { // in the final read and polled
		t.Fatalf("phantoms: %v", r.Phantoms)
	}
	if len(r.AbortedReads) != 2 { // in the final read and polled
		t.Fatalf("aborted reads: %v", r.AbortedReads)
	}
}

func TestCheckPollSkipAndNonmonotonic(t *testing.T) {
	b := &hist{}
	for i := int64(0); i < 4; i++ {
		b.sent("a", i+1, true, 0, i)
	}
	b.add(h.Op{Process: "c", Type: h.OK, F: h.Assign, Partition: 0})
	b.poll("c", 0, 0, "a/1").poll("c", 0, 2, "a/3").poll("c", 0, 1, "a/2")
	for i := int64(0); i < 4; i++ {
		b.final(0, i, fmt.Sprintf("a/%d", i+1))
	}
	b.end(0, 4)
	r := Check(b.ops)
	if len(r.PollSkips) != 1 || r.PollSkips[0].Offset != 2 {
		t.Fatalf("poll skips: %v", r.PollSkips)
	}
	if len(r.NonmonotonicPolls) != 1 || r.NonmonotonicPolls[0].Offset != 1 {
		t.Fatalf("nonmonotonic: %v", r.NonmonotonicPolls)
	}
	// A re-read after a new assignment is at-least-once, not an anomaly.
	b = &hist{}
	b.sent("a", 1, true, 0, 0).sent("a", 2, true, 0, 1)
	b.add(h.Op{Process: "c", Type: h.OK, F: h.Assign, Partition: 0})
	b.poll("c", 0, 0, "a/1").poll("c", 0, 1, "a/2")
	b.add(h.Op{Process: "c", Type: h.OK, F: h.Revoke, Partition: 0})
	b.add(h.Op{Process: "c", Type: h.OK, F: h.Assign, Partition: 0})
	b.poll("c", 0, 0, "a/1")
	b.final(0, 0, "a/1").final(0, 1, "a/2").end(0, 2)
	if f := Check(b.ops).Failures(); len(f) != 0 {
		t.Fatalf("re-read after reassignment flagged: %v", f)
	}
}

func TestCheckCommittedSkip(t *testing.T) {
	b := &hist{}
	for i := int64(0); i < 4; i++ {
		b.sent("a", i+1, true, 0, i)
	}
	b.add(h.Op{Process: "c1", Type: h.OK, F: h.Assign, Partition: 0})
	b.poll("c1", 0, 0, "a/1")
	b.add(h.Op{Process: "c1", Type: h.OK, F: h.Commit, Partition: 0, Offset: 1})
	b.add(h.Op{Process: "c1", Type: h.OK, F: h.Revoke, Partition: 0})
	b.add(h.Op{Process: "c2", Type: h.OK, F: h.Assign, Partition: 0})
	b.poll("c2", 0, 3, "a/4") // committed 1: offsets 1 and 2 skipped
	for i := int64(0); i < 4; i++ {
		b.final(0, i, fmt.Sprintf("a/%d", i+1))
	}
	b.end(0, 4)
	r := Check(b.ops)
	if len(r.CommittedSkips) != 1 || r.CommittedSkips[0].Process != "c2" {
		t.Fatalf("committed skips: %v", r.CommittedSkips)
	}
}

func TestCheckFinalReadIncomplete(t *testing.T) {
	b := &hist{}
	b.sent("a", 1, true, 0, 0).sent("a", 2, true, 1, 0)
	b.final(0, 0, "a/1").end(0, 1) // partition 1 never finished
	r := Check(b.ops)
	if r.FinalComplete {
		t.Fatal("final read of partition 1 missing, want incomplete")
	}
}

func TestCheckUnavailability(t *testing.T) {
	b := &hist{}
	ms := int64(time.Millisecond)
	b.add(h.Op{Time: 1000 * ms, Process: "nemesis", Type: h.Invoke, F: h.Fault, Value: "kill", Seq: 1})
	b.add(h.Op{Time: 1100 * ms, Process: "a", Type: h.OK, F: h.Send, Value: "a/1", Seq: 1, Partition: 0, Offset: 0})
	b.add(h.Op{Time: 4100 * ms, Process: "a", Type: h.OK, F: h.Send, Value: "a/2", Seq: 2, Partition: 0, Offset: 1})
	b.add(h.Op{Time: 5000 * ms, Process: "nemesis", Type: h.OK, F: h.Fault, Value: "kill", Seq: 1})
	b.add(h.Op{Time: 5500 * ms, Process: "a", Type: h.OK, F: h.Send, Value: "a/3", Seq: 3, Partition: 0, Offset: 2})
	b.add(h.Op{Time: 6000 * ms, Process: "nemesis", Type: h.OK, F: h.Recovered, Value: "kill", Seq: 1})
	r := Check(b.ops)
	if len(r.Faults) != 1 {
		t.Fatalf("faults: %+v", r.Faults)
	}
	w := r.Faults[0]
	if w.SendGap != 3000*time.Millisecond || w.SendAfterHeal != 500*time.Millisecond || w.PollGap != 5000*time.Millisecond {
		t.Fatalf("window: %+v", w)
	}
}

// handover is a history where c1 polls offsets 0-1 of partition 0 and
// commits 2 with the given outcome ("" leaves the commit in flight), then
// c2 is assigned the partition and first polls at start; the log holds
// offsets 0-3.
func handover(outcome string, start int64) []h.Op {
	b := &hist{}
	for i := int64(0); i < 4; i++ {
		b.sent("a", i+1, true, 0, i)
	}
	b.add(h.Op{Process: "c1", Type: h.OK, F: h.Assign, Partition: 0})
	b.poll("c1", 0, 0, "a/1").poll("c1", 0, 1, "a/2")
	b.add(h.Op{Process: "c1", Type: h.Invoke, F: h.Commit, Partition: 0, Offset: 2})
	if outcome != "" {
		b.add(h.Op{Process: "c1", Type: outcome, F: h.Commit, Partition: 0, Offset: 2})
	}
	b.add(h.Op{Process: "c2", Type: h.OK, F: h.Assign, Partition: 0})
	for o := start; o < 4; o++ {
		b.poll("c2", 0, o, fmt.Sprintf("a/%d", o+1))
	}
	for i := int64(0); i < 4; i++ {
		b.final(0, i, fmt.Sprintf("a/%d", i+1))
	}
	return b.end(0, 4).ops
}

// TestCheckCommittedSkipIndeterminateCommit: a commit that timed out, or is
// still in flight when the next member starts, may be applied; starting at
// it skips nothing (the CI finding of issue 17: committed-skip at o=4104
// with committed offset 4103, the commit of 4104 having timed out).
func TestCheckCommittedSkipIndeterminateCommit(t *testing.T) {
	for _, outcome := range []string{h.OK, h.Info, ""} {
		r := Check(handover(outcome, 2))
		if len(r.CommittedSkips) != 0 {
			t.Errorf("commit %q, start at it: flagged %v", outcome, r.CommittedSkips)
		}
		if want := map[bool]int{true: 0, false: 1}[outcome == h.OK]; r.ResumedIndeterminate != want {
			t.Errorf("commit %q: resumed-indeterminate %d, want %d", outcome, r.ResumedIndeterminate, want)
		}
	}
}

// TestCheckCommittedSkipPastPossibleCommit: starting past every commit that
// may be applied is a skip, whatever the outcomes; a commit refused for
// certain is no candidate.
func TestCheckCommittedSkipPastPossibleCommit(t *testing.T) {
	for _, c := range []struct {
		outcome string
		start   int64
	}{{h.OK, 3}, {h.Info, 3}, {"", 3}, {h.Fail, 2}, {h.Fail, 3}} {
		r := Check(handover(c.outcome, c.start))
		if len(r.CommittedSkips) != 1 || r.CommittedSkips[0].Process != "c2" || r.CommittedSkips[0].Offset != c.start {
			t.Errorf("commit %q, start at %d: committed skips %v", c.outcome, c.start, r.CommittedSkips)
		}
	}
}

// TestCheckCommittedSkipDetail: the anomaly says whether the records it
// skipped were read by another member before (a commit the history missed)
// or by nobody (data hidden from the group).
func TestCheckCommittedSkipDetail(t *testing.T) {
	r := Check(handover(h.Fail, 2))
	if len(r.CommittedSkips) != 1 || !strings.Contains(r.CommittedSkips[0].Detail, "every record skipped was polled before") {
		t.Fatalf("polled-before skip: %v", r.CommittedSkips)
	}
	r = Check(handover(h.OK, 3))
	if len(r.CommittedSkips) != 1 || !strings.Contains(r.CommittedSkips[0].Detail, "1 records skipped never polled before, the first at 2") {
		t.Fatalf("never-polled skip: %v", r.CommittedSkips)
	}
}

// TestCheckUndelivered: once the group caught up (a drained ok op), an
// acknowledged value no member polled is undelivered; before, it is only
// unseen (the consumers were stopped behind the producers).
func TestCheckUndelivered(t *testing.T) {
	b := clean()
	b.sent("a", 3, true, 0, 2).final(0, 2, "a/3")
	ops := append([]h.Op(nil), b.ops...)
	for i, op := range ops {
		if op.F == h.FinalEnd && op.Partition == 0 {
			ops[i].Offset = 3
		}
	}
	r := Check(ops)
	if r.Unseen != 1 || len(r.Undelivered) != 0 || len(r.Failures()) != 0 {
		t.Fatalf("not drained: unseen %d undelivered %v failures %v", r.Unseen, r.Undelivered, r.Failures())
	}
	ops = append(ops, h.Op{Process: "group", Type: h.OK, F: h.Drained})
	r = Check(ops)
	if len(r.Undelivered) != 1 || r.Undelivered[0].Value != "a/3" || !r.Drained {
		t.Fatalf("drained: undelivered %v", r.Undelivered)
	}
	ops[len(ops)-1].Type = h.Info // the group did not catch up in time
	if r := Check(ops); len(r.Undelivered) != 0 {
		t.Fatalf("drain timed out: undelivered %v", r.Undelivered)
	}
}
