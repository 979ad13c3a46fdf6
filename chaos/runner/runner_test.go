package runner

import (
	"strings"
	"testing"
	"time"

	"samsa/chaos/checker"
	"samsa/chaos/history"
)

func TestSummaryLine(t *testing.T) {
	s := Summary{Seed: 7, Cycles: 6, Result: checker.Result{Acked: 10, FinalComplete: true}}
	line := s.Line()
	for _, want := range []string{"lost=0", "duplicates=0", "cycles=6", "seed=7", "result=ok"} {
		if !strings.Contains(line, want) {
			t.Fatalf("line %q lacks %q", line, want)
		}
	}
	if !s.OK() {
		t.Fatal("clean summary not OK")
	}
	s.Result.Lost = []checker.Anomaly{{Kind: "lost", Value: "a/1"}}
	if s.OK() || !strings.Contains(s.Line(), "lost=1") || !strings.Contains(s.Line(), "FAIL(lost=1)") {
		t.Fatalf("lost not reported: %s", s.Line())
	}
	s.Result.Lost = nil
	s.Unrecovered = 1
	if s.OK() || !strings.Contains(s.Line(), "unrecovered=1") {
		t.Fatalf("unrecovered not reported: %s", s.Line())
	}
}

func TestPerFault(t *testing.T) {
	ms := int64(time.Millisecond)
	ops := []history.Op{
		{Time: 0, Process: "nemesis", Type: history.Invoke, F: history.Fault, Value: "kill", Seq: 1},
		{Time: 1 * ms, Process: "a", Type: history.Invoke, F: history.Send, Value: "a/1", Seq: 1},
		{Time: 2 * ms, Process: "a", Type: history.OK, F: history.Send, Value: "a/1", Seq: 1},
		{Time: 3 * ms, Process: "a", Type: history.Invoke, F: history.Send, Value: "a/2", Seq: 2},
		{Time: 4 * ms, Process: "a", Type: history.OK, F: history.Send, Value: "a/2", Seq: 2, Offset: 1},
		{Time: 5 * ms, Process: "nemesis", Type: history.OK, F: history.Fault, Value: "kill", Seq: 1},
		{Time: 6 * ms, Process: "nemesis", Type: history.OK, F: history.Recovered, Value: "kill", Seq: 1},
		{Time: 7 * ms, Process: "final", Type: history.OK, F: history.FinalRead, Value: "a/1"},
		{Time: 8 * ms, Process: "final", Type: history.OK, F: history.FinalEnd, Offset: 2},
	}
	r := checker.Check(ops)
	fs := perFault(ops, r)
	if len(fs) != 1 || fs[0].Fault != "kill" || fs[0].Cycles != 1 || fs[0].Acked != 2 || fs[0].Lost != 1 {
		t.Fatalf("per fault: %+v (lost %v)", fs, r.Lost)
	}
	if !strings.Contains(Report(Summary{Result: r, PerFault: fs}), "| kill | 1 | 2 | 1 |") {
		t.Fatalf("report: %s", Report(Summary{Result: r, PerFault: fs}))
	}
}

// TestPerFaultCommitGap: the report's last column is the transactional
// producers' commit gap per fault, "-" when no transaction ran.
func TestPerFaultCommitGap(t *testing.T) {
	s := int64(time.Second)
	ops := []history.Op{
		{Time: 0, Process: "nemesis", Type: history.Invoke, F: history.Fault, Value: "split", Seq: 1},
		{Time: 1 * s, Process: "txn-a", Type: history.OK, F: history.Txn, Value: "a/1"},
		{Time: 4 * s, Process: "txn-a", Type: history.OK, F: history.Txn, Value: "a/2"},
		{Time: 5 * s, Process: "nemesis", Type: history.OK, F: history.Fault, Value: "split", Seq: 1},
		{Time: 6 * s, Process: "nemesis", Type: history.OK, F: history.Recovered, Value: "split", Seq: 1},
		{Time: 7 * s, Process: "txn-a", Type: history.OK, F: history.Txn, Value: "a/3"},
	}
	fs := perFault(ops, checker.Check(ops))
	if len(fs) != 1 || fs[0].Commits != 1 || fs[0].CommitGapMax != 3*time.Second {
		t.Fatalf("per fault: %+v", fs)
	}
	if r := Report(Summary{PerFault: fs}); !strings.Contains(r, "| split | 1 | 0 | 0 | 6.0 s / 6.0 s | 6.0 s / 6.0 s | 3.0 s / 3.0 s |") {
		t.Fatalf("report: %s", r)
	}
	queueOnly := ops[:1:1]
	queueOnly = append(queueOnly, ops[3:5]...)
	fs = perFault(queueOnly, checker.Check(queueOnly))
	if r := Report(Summary{PerFault: fs}); len(fs) != 1 || fs[0].Commits != 0 || !strings.Contains(r, "| split | 1 | 0 | 0 | 6.0 s / 6.0 s | 6.0 s / 6.0 s | - |") {
		t.Fatalf("without transactions: %+v\n%s", fs, r)
	}
}
