package checker

import "testing"

func txnHist() TxnHistory {
	return TxnHistory{
		Txns: []Txn{
			{ID: "t/1", Process: "t", Status: TxnCommitted, Writes: []TxnWrite{{0, "x1"}, {1, "x2"}}},
			{ID: "t/2", Process: "t", Status: TxnAborted, Writes: []TxnWrite{{0, "y1"}, {1, "y2"}}},
			{ID: "t/3", Process: "t", Status: TxnIndeterminate, Writes: []TxnWrite{{0, "z1"}, {1, "z2"}}},
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
