package checker

import (
	"sort"
	"testing"
	"time"

	h "samsa/chaos/history"
)

// txnOps is one transaction of proc answered at ms with typ (ok: committed).
func txnOps(proc, id string, ms int64, typ string) []h.Op {
	t := ms * int64(time.Millisecond)
	return []h.Op{
		{Time: t - int64(time.Millisecond), Process: proc, Type: h.Invoke, F: h.Txn, Value: id},
		{Time: t, Process: proc, Type: typ, F: h.Txn, Value: id},
	}
}

// TestCheckUnavailabilityCommitGap: a fault's commit gap is the longest time
// one transactional producer went without a commit, from the fault's start
// to its first commit after recovery (an abort is no commit); a producer
// whose txn ops all come after the fault (the final fence) does not count,
// and a history without transactions has none.
func TestCheckUnavailabilityCommitGap(t *testing.T) {
	ms := int64(time.Millisecond)
	ops := []h.Op{
		{Time: 1000 * ms, Process: "nemesis", Type: h.Invoke, F: h.Fault, Value: "kill", Seq: 1},
		{Time: 5000 * ms, Process: "nemesis", Type: h.OK, F: h.Fault, Value: "kill", Seq: 1},
		{Time: 6000 * ms, Process: "nemesis", Type: h.OK, F: h.Recovered, Value: "kill", Seq: 1},
	}
	// txn-a: commits at 0.9 s, an abort at 3 s, then nothing until 7.5 s,
	// after the recovery: 6.5 s without a commit from the fault's start.
	ops = append(ops, txnOps("txn-a", "a/1", 900, h.OK)...)
	ops = append(ops, txnOps("txn-a", "a/2", 3000, h.Fail)...)
	ops = append(ops, txnOps("txn-a", "a/3", 7500, h.OK)...)
	// txn-b commits every 500 ms but for a 2 s stall.
	for i, at := range []int64{500, 1000, 1500, 3500, 4000, 4500, 5000, 5500, 6000, 6500} {
		ops = append(ops, txnOps("txn-b", "b/"+string(rune('a'+i)), at, h.OK)...)
	}
	ops = append(ops, txnOps("txn-fence", "fence", 9000, h.OK)...)
	sort.SliceStable(ops, func(i, j int) bool { return ops[i].Time < ops[j].Time })

	w := unavailability(ops)
	if len(w) != 1 || w[0].CommitGap != 6500*time.Millisecond || w[0].CommitProcess != "txn-a" {
		t.Fatalf("windows %+v, want one with a 6.5 s commit gap of txn-a", w)
	}
	b := unavailability(onlyProcess(ops, "nemesis", "txn-b"))
	if len(b) != 1 || b[0].CommitGap != 2000*time.Millisecond || b[0].CommitProcess != "txn-b" {
		t.Fatalf("txn-b alone: %+v, want a 2 s commit gap", b)
	}
	none := unavailability(onlyProcess(ops, "nemesis", "txn-fence"))
	if len(none) != 1 || none[0].CommitGap != -1 {
		t.Fatalf("no transactional producer in the window: %+v, want CommitGap -1", none)
	}
}

// TestCheckUnavailabilityCommitGapNextFault: a stall that lasts into the
// next fault counts for the first only up to the next fault's start.
func TestCheckUnavailabilityCommitGapNextFault(t *testing.T) {
	ms := int64(time.Millisecond)
	ops := []h.Op{
		{Time: 1000 * ms, Process: "nemesis", Type: h.Invoke, F: h.Fault, Value: "kill", Seq: 1},
		{Time: 3000 * ms, Process: "nemesis", Type: h.OK, F: h.Fault, Value: "kill", Seq: 1},
		{Time: 3500 * ms, Process: "nemesis", Type: h.OK, F: h.Recovered, Value: "kill", Seq: 1},
		{Time: 6000 * ms, Process: "nemesis", Type: h.Invoke, F: h.Fault, Value: "split", Seq: 2},
		{Time: 8000 * ms, Process: "nemesis", Type: h.OK, F: h.Fault, Value: "split", Seq: 2},
		{Time: 8500 * ms, Process: "nemesis", Type: h.OK, F: h.Recovered, Value: "split", Seq: 2},
	}
	ops = append(ops, txnOps("txn-a", "a/1", 900, h.OK)...)
	ops = append(ops, txnOps("txn-a", "a/2", 9000, h.OK)...)
	sort.SliceStable(ops, func(i, j int) bool { return ops[i].Time < ops[j].Time })
	w := unavailability(ops)
	if len(w) != 2 || w[0].CommitGap != 5000*time.Millisecond || w[1].CommitGap != 3000*time.Millisecond {
		t.Fatalf("windows %+v, want commit gaps 5 s (kill, up to the split) and 3 s (split)", w)
	}
}

// onlyProcess keeps the ops of the named processes.
func onlyProcess(ops []h.Op, procs ...string) []h.Op {
	var out []h.Op
	for _, op := range ops {
		for _, p := range procs {
			if op.Process == p {
				out = append(out, op)
			}
		}
	}
	return out
}
