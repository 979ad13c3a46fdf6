package broker

// DescribeTransactions: v0-0
//
// Behaviour:
//   - KIP-664 (Kafka 3.0; offered on top of 2.8 for kafka-transactions.sh
//     and admin clients): per transactional id its state name, timeout,
//     start time, producer id and epoch and its partitions (while
//     preparing: those whose marker has not landed yet).
//     TRANSACTIONAL_ID_NOT_FOUND for an unknown id, NOT_COORDINATOR or
//     COORDINATOR_LOAD_IN_PROGRESS when this broker does not own or is
//     loading the id.
//   - No ACL check: Kafka requires Describe on the id and filters topics
//     by Describe.
//
// Version notes:
//   - v0: the only version (flexible).

import (
	"github.com/twmb/franz-go/pkg/kmsg"
)

func (b *Broker) handleDescribeTransactions(r *request) (kmsg.Response, error) {
	req := r.body.(*kmsg.DescribeTransactionsRequest)
	resp := req.ResponseKind().(*kmsg.DescribeTransactionsResponse)
	for _, id := range req.TransactionalIDs {
		d := b.txns.Describe(id)
		st := kmsg.NewDescribeTransactionsResponseTransactionState()
		st.TransactionalID, st.ErrorCode = id, d.Code
		st.ProducerID, st.ProducerEpoch, st.StartTimestamp = -1, -1, -1
		if d.Code == 0 {
			st.State, st.TimeoutMillis, st.StartTimestamp = d.State.String(), d.TimeoutMs, d.StartMs
			st.ProducerID, st.ProducerEpoch = d.ProducerID, d.ProducerEpoch
			idx := map[string]int{}
			for _, tp := range d.Partitions {
				i, ok := idx[tp.Topic]
				if !ok {
					i = len(st.Topics)
					idx[tp.Topic] = i
					t := kmsg.NewDescribeTransactionsResponseTransactionStateTopic()
					t.Topic = tp.Topic
					st.Topics = append(st.Topics, t)
				}
				st.Topics[i].Partitions = append(st.Topics[i].Partitions, tp.Partition)
			}
		}
		resp.TransactionStates = append(resp.TransactionStates, st)
	}
	return resp, nil
}
