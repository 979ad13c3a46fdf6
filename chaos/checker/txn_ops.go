package checker

import (
	"samsa/chaos/history"
)

// CheckTxnOps builds the TxnHistory of the transactional workload's ops
// (txn, txn-send, txn-read, txn-final-read, txn-final-end) and checks it. A
// transaction invoked and never completed is indeterminate. ok is false
// when the history holds no transaction at all (the workload did not run).
func CheckTxnOps(ops []history.Op) (r TxnResult, ok bool) {
	var th TxnHistory
	at := map[string]int{} // txn id -> index in th.Txns
	reached := map[int32]bool{}
	written := map[int32]bool{}
	for _, op := range ops {
		switch op.F {
		case history.Txn:
			i, seen := at[op.Value]
			if !seen {
				i = len(th.Txns)
				at[op.Value] = i
				th.Txns = append(th.Txns, Txn{ID: op.Value, Process: op.Process, Status: TxnIndeterminate})
			}
			switch op.Type {
			case history.OK:
				th.Txns[i].Status = TxnCommitted
			case history.Fail:
				th.Txns[i].Status = TxnAborted
			}
		case history.TxnSend:
			if i, seen := at[op.TxnID]; seen {
				th.Txns[i].Writes = append(th.Txns[i].Writes, TxnWrite{Partition: op.Partition, Value: op.Value, Source: op.Source})
				written[op.Partition] = true
			}
		case history.TxnRead, history.TxnFinalRead:
			th.Reads = append(th.Reads, TxnRead{Process: op.Process, Partition: op.Partition, Offset: op.Offset, Value: op.Value,
				Final: op.F == history.TxnFinalRead})
		case history.TxnFinalEnd:
			reached[op.Partition] = true
		}
	}
	if len(th.Txns) == 0 {
		return r, false
	}
	r = CheckTxn(th)
	for p := range written {
		if !reached[p] {
			r.FinalIncomplete = true
		}
	}
	if len(reached) == 0 {
		r.FinalIncomplete = true
	}
	return r, true
}
