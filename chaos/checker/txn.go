package checker

import (
	"fmt"
	"sort"
)

// Txn statuses.
const (
	TxnCommitted     = "committed"
	TxnAborted       = "aborted"
	TxnIndeterminate = "indeterminate" // EndTxn timed out: all or nothing, either is valid
)

// Txn is one transaction of a transactional producer: the values it wrote
// (each unique in the run) and how EndTxn ended.
type Txn struct {
	ID      string // unique per run, e.g. "<transactional.id>/<n>"
	Process string
	Status  string
	Writes  []TxnWrite
}

// TxnWrite is one record written inside a transaction. Source, for a
// consume-transform-produce transaction, names the input record
// ("<partition>/<offset>") the write transforms.
type TxnWrite struct {
	Partition int32
	Value     string
	Source    string
}

// TxnRead is one record read: by a read_committed consumer during the run
// (Final false) or by the read_committed final read of the whole log
// (Final true).
type TxnRead struct {
	Process   string
	Partition int32
	Offset    int64
	Value     string
	Final     bool
}

// TxnHistory is the input of CheckTxn; CheckTxnOps builds it from the
// transactional workload's history ops.
type TxnHistory struct {
	Txns  []Txn
	Reads []TxnRead
}

// TxnResult lists the transactional anomalies.
type TxnResult struct {
	Committed, Aborted, Indeterminate int
	Reads, FinalRecords               int
	AbortedReads                      []Anomaly // a read_committed read of an aborted txn's write
	TornTxns                          []Anomaly // the final read holds some, not all, of one txn's writes
	LostCommits                       []Anomaly // a committed txn none of whose writes is in the final read
	// DuplicateOutputs: one input record transformed more than once in the
	// final read (exactly-once consume-transform-produce broken).
	DuplicateOutputs []Anomaly
	Phantoms         []Anomaly // a record read that no transaction wrote
	// FinalIncomplete: the final read did not reach every partition's
	// fence (only CheckTxnOps sets it).
	FinalIncomplete bool
}

// Failures lists the invariants broken, empty when valid.
func (r TxnResult) Failures() []string {
	var f []string
	for _, x := range []struct {
		n string
		a []Anomaly
	}{{"aborted-reads", r.AbortedReads}, {"torn-txns", r.TornTxns}, {"lost-commits", r.LostCommits},
		{"eos-duplicates", r.DuplicateOutputs}, {"txn-phantoms", r.Phantoms}} {
		if len(x.a) > 0 {
			f = append(f, fmt.Sprintf("%s=%d", x.n, len(x.a)))
		}
	}
	if r.FinalIncomplete {
		f = append(f, "txn-final-read-incomplete")
	}
	return f
}

// sourceOf is the input record t's write v transforms, "" for none.
func sourceOf(t *Txn, v string) string {
	for _, w := range t.Writes {
		if w.Value == v {
			return w.Source
		}
	}
	return ""
}

// CheckTxn checks a transactional history.
func CheckTxn(h TxnHistory) TxnResult {
	var r TxnResult
	owner := map[string]*Txn{} // value -> txn
	for i := range h.Txns {
		t := &h.Txns[i]
		switch t.Status {
		case TxnCommitted:
			r.Committed++
		case TxnAborted:
			r.Aborted++
		default:
			r.Indeterminate++
		}
		for _, w := range t.Writes {
			owner[w.Value] = t
		}
	}
	finalSeen := map[string]bool{}
	outputs := map[string]TxnRead{} // source -> its first transformation in the final read
	for _, rd := range h.Reads {
		t := owner[rd.Value]
		if t == nil {
			r.Phantoms = append(r.Phantoms, Anomaly{Kind: "txn-phantom", Value: rd.Value, Process: rd.Process,
				Partition: rd.Partition, Offset: rd.Offset, Detail: "read, written by no transaction"})
			continue
		}
		if rd.Final {
			r.FinalRecords++
			if finalSeen[rd.Value] {
				continue // the same offset read twice by the final reader
			}
			finalSeen[rd.Value] = true
			if src := sourceOf(t, rd.Value); src != "" {
				if first, dup := outputs[src]; dup {
					r.DuplicateOutputs = append(r.DuplicateOutputs, Anomaly{Kind: "eos-duplicate", Value: rd.Value, Process: t.Process,
						Partition: rd.Partition, Offset: rd.Offset,
						Detail: fmt.Sprintf("input %s transformed again; first %q at p=%d o=%d", src, first.Value, first.Partition, first.Offset)})
				} else {
					outputs[src] = rd
				}
			}
		} else {
			r.Reads++
		}
		if t != nil && t.Status == TxnAborted {
			r.AbortedReads = append(r.AbortedReads, Anomaly{Kind: "aborted-read", Value: rd.Value, Process: rd.Process,
				Partition: rd.Partition, Offset: rd.Offset, Detail: "write of aborted txn " + t.ID})
		}
	}
	ids := make([]int, len(h.Txns))
	for i := range ids {
		ids[i] = i
	}
	sort.Slice(ids, func(a, b int) bool { return h.Txns[ids[a]].ID < h.Txns[ids[b]].ID })
	for _, i := range ids {
		t := h.Txns[i]
		if t.Status == TxnAborted || len(t.Writes) == 0 {
			continue
		}
		var seen, missing []string
		for _, w := range t.Writes {
			if finalSeen[w.Value] {
				seen = append(seen, w.Value)
			} else {
				missing = append(missing, w.Value)
			}
		}
		switch {
		case len(seen) > 0 && len(missing) > 0:
			r.TornTxns = append(r.TornTxns, Anomaly{Kind: "torn-txn", Value: missing[0], Process: t.Process,
				Detail: fmt.Sprintf("txn %s (%s): %d of %d writes in the final read", t.ID, t.Status, len(seen), len(t.Writes))})
		case len(seen) == 0 && t.Status == TxnCommitted:
			r.LostCommits = append(r.LostCommits, Anomaly{Kind: "lost-commit", Value: missing[0], Process: t.Process,
				Detail: fmt.Sprintf("committed txn %s: none of its %d writes in the final read", t.ID, len(t.Writes))})
		}
	}
	return r
}
