package broker

// ListTransactions: v0-0
//
// Behaviour:
//   - KIP-664 (Kafka 3.0; offered on top of 2.8): the transactional ids
//     this broker coordinates, filtered by state names and producer ids
//     (empty filters match all); unknown state names are listed in
//     unknown_state_filters and match nothing. COORDINATOR_LOAD_IN_PROGRESS
//     while any of its __transaction_state partitions loads.
//   - No ACL check: Kafka lists only ids the caller may Describe.
//
// Version notes:
//   - v0: the only version (flexible). v1 (duration filter, KIP-994) and
//     v2 (id pattern) are later and not offered.

import (
	"sort"

	"github.com/twmb/franz-go/pkg/kmsg"

	"samsa/broker/txn"
)

func (b *Broker) handleListTransactions(r *request) (kmsg.Response, error) {
	req := r.body.(*kmsg.ListTransactionsRequest)
	resp := req.ResponseKind().(*kmsg.ListTransactionsResponse)
	var states []txn.State
	for _, name := range req.StateFilters {
		s, ok := txn.ParseState(name)
		if !ok {
			resp.UnknownStateFilters = append(resp.UnknownStateFilters, name)
			continue
		}
		states = append(states, s)
	}
	if len(req.StateFilters) > 0 && len(states) == 0 {
		return resp, nil // only unknown states: nothing matches
	}
	list, code := b.txns.List(states, req.ProducerIDFilters)
	resp.ErrorCode = code
	sort.Slice(list, func(i, j int) bool { return list[i].ID < list[j].ID })
	for _, l := range list {
		st := kmsg.NewListTransactionsResponseTransactionState()
		st.TransactionalID, st.ProducerID, st.TransactionState = l.ID, l.ProducerID, l.State.String()
		resp.TransactionStates = append(resp.TransactionStates, st)
	}
	return resp, nil
}
