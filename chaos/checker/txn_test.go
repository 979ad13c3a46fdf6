package checker

import (
	"testing"

	"samsa/chaos/history"
)

func txnHist() TxnHistory {
	return TxnHistory{
		Txns: []Txn{
			{ID: "t/1", Process: "t", Status: TxnCommitted, Writes: []TxnWrite{{Partition: 0, Value: "x1"}, {Partition: 1, Value: "x2"}}},
			{ID: "t/2", Process: "t", Status: TxnAborted, Writes: []TxnWrite{{Partition: 0, Value: "y1"}, {Partition: 1, Value: "y2"}}},
			{ID: "t/3", Process: "t", Status: TxnIndeterminate, Writes: []TxnWrite{{Partition: 0, Value: "z1"}, {Partition: 1, Value: "z2"}}},
		},
		Reads: []TxnRead{
			{Process: "c", Partition: 0, Offset: 0, Value: "x1"},
			{Process: "final", Partition: 0, Offset: 0, Value: "x1", Final: true},
			{Process: "final", Partition: 1, Offset: 0, Value: "x2", Final: true},
		},
	}
}

func TestCheckTxnClean(t *testing.T) {
	r := CheckTxn(txnHist())
	if f := r.Failures(); len(f) != 0 {
		t.Fatalf("clean txn history flagged: %v", f)
	}
	if r.Committed != 1 || r.Aborted != 1 || r.Indeterminate != 1 {
		t.Fatalf("counts: %+v", r)
	}
}

func TestCheckTxnAbortedRead(t *testing.T) {
	h := txnHist()
	h.Reads = append(h.Reads, TxnRead{Process: "c", Partition: 1, Offset: 3, Value: "y2"})
	r := CheckTxn(h)
	if len(r.AbortedReads) != 1 || r.AbortedReads[0].Value != "y2" {
		t.Fatalf("aborted reads: %v", r.AbortedReads)
	}
}

func TestCheckTxnTorn(t *testing.T) {
	h := txnHist()
	h.Reads = h.Reads[:2] // the final read lost x2
	r := CheckTxn(h)
	if len(r.TornTxns) != 1 || r.TornTxns[0].Value != "x2" {
		t.Fatalf("torn: %v", r.TornTxns)
	}
	// An indeterminate txn half in the log is torn too.
	h = txnHist()
	h.Reads = append(h.Reads, TxnRead{Process: "final", Partition: 0, Offset: 5, Value: "z1", Final: true})
	if r := CheckTxn(h); len(r.TornTxns) != 1 {
		t.Fatalf("torn indeterminate: %v", r.TornTxns)
	}
}

func TestCheckTxnLostCommit(t *testing.T) {
	h := txnHist()
	h.Reads = h.Reads[:1] // nothing of t/1 in the final read
	r := CheckTxn(h)
	if len(r.LostCommits) != 1 || len(r.TornTxns) != 0 {
		t.Fatalf("lost commits: %v torn: %v", r.LostCommits, r.TornTxns)
	}
}

// TestCheckTxnEOSDuplicate: one input record transformed by two committed
// transactions (exactly-once broken) is flagged; transformed by an aborted
// one and then a committed one it is not.
func TestCheckTxnEOSDuplicate(t *testing.T) {
	h := TxnHistory{
		Txns: []Txn{
			{ID: "c/1", Process: "c", Status: TxnAborted, Writes: []TxnWrite{{Partition: 0, Value: "ctp/c/1/0/7", Source: "0/7"}}},
			{ID: "c/2", Process: "c", Status: TxnCommitted, Writes: []TxnWrite{{Partition: 0, Value: "ctp/c/2/0/7", Source: "0/7"}}},
		},
		Reads: []TxnRead{{Process: "final", Partition: 0, Offset: 3, Value: "ctp/c/2/0/7", Final: true}},
	}
	if f := CheckTxn(h).Failures(); len(f) != 0 {
		t.Fatalf("abort then commit flagged: %v", f)
	}
	h.Txns[0].Status = TxnCommitted
	h.Reads = append(h.Reads, TxnRead{Process: "final", Partition: 0, Offset: 1, Value: "ctp/c/1/0/7", Final: true})
	r := CheckTxn(h)
	if len(r.DuplicateOutputs) != 1 || r.DuplicateOutputs[0].Value != "ctp/c/1/0/7" {
		t.Fatalf("eos duplicates: %v", r.DuplicateOutputs)
	}
}

func TestCheckTxnPhantom(t *testing.T) {
	h := txnHist()
	h.Reads = append(h.Reads, TxnRead{Process: "c", Partition: 1, Offset: 9, Value: "nobody"})
	if r := CheckTxn(h); len(r.Phantoms) != 1 || r.Phantoms[0].Value != "nobody" {
		t.Fatalf("phantoms: %v", r.Phantoms)
	}
}

// TestCheckTxnOps: the ops the transactional workload records become the
// TxnHistory CheckTxn checks; an unfinished final read is a failure.
func TestCheckTxnOps(t *testing.T) {
	ops := []history.Op{
		{Process: "p", Type: history.Invoke, F: history.Txn, Value: "p/1"},
		{Process: "p", Type: history.Invoke, F: history.TxnSend, Value: "p/1/0", Partition: 0, TxnID: "p/1"},
		{Process: "p", Type: history.Invoke, F: history.TxnSend, Value: "p/1/1", Partition: 1, TxnID: "p/1"},
		{Process: "p", Type: history.OK, F: history.Txn, Value: "p/1"},
		{Process: "p", Type: history.Invoke, F: history.Txn, Value: "p/2"},
		{Process: "p", Type: history.Invoke, F: history.TxnSend, Value: "p/2/0", Partition: 0, TxnID: "p/2"},
		{Process: "p", Type: history.Fail, F: history.Txn, Value: "p/2"},
		{Process: "p", Type: history.Invoke, F: history.Txn, Value: "p/3"}, // never completed: indeterminate
		{Process: "r", Type: history.OK, F: history.TxnRead, Value: "p/1/0", Partition: 0, Offset: 0},
		{Process: "final", Type: history.OK, F: history.TxnFinalRead, Value: "p/1/0", Partition: 0, Offset: 0},
		{Process: "final", Type: history.OK, F: history.TxnFinalEnd, Partition: 0, Offset: 3},
		{Process: "final", Type: history.OK, F: history.TxnFinalRead, Value: "p/1/1", Partition: 1, Offset: 0},
		{Process: "final", Type: history.OK, F: history.TxnFinalEnd, Partition: 1, Offset: 2},
	}
	r, ok := CheckTxnOps(ops)
	if !ok || len(r.Failures()) != 0 || r.Committed != 1 || r.Aborted != 1 || r.Indeterminate != 1 || r.Reads != 1 || r.FinalRecords != 2 {
		t.Fatalf("clean ops: ok=%v %+v failures %v", ok, r, r.Failures())
	}
	// The aborted write read: an aborted read. The final read stops
	// before partition 1's end: incomplete (and p/1 looks torn).
	bad := append(append([]history.Op(nil), ops[:10]...), ops[10],
		history.Op{Process: "r", Type: history.OK, F: history.TxnRead, Value: "p/2/0", Partition: 0, Offset: 1})
	r, _ = CheckTxnOps(bad)
	if len(r.AbortedReads) != 1 || !r.FinalIncomplete {
		t.Fatalf("bad ops: %+v", r)
	}
	if _, ok := CheckTxnOps(ops[8:9]); ok {
		t.Fatal("a history without transactions reported as checked")
	}
}
