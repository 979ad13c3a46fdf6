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
//   - Authorization as Kafka 3.0's handleDescribeTransactionsRequest:
//     Describe on each id, else TRANSACTIONAL_ID_AUTHORIZATION_FAILED for
//     that id (nothing else of it shown); the partitions of topics the
//     principal may not Describe are left out.
//
// Version notes:
//   - v0: the only version (flexible).

import (
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"

	"samsa/broker/acl"
)

func (b *Broker) handleDescribeTransactions(r *request) (kmsg.Response, error) {
	req := r.body.(*kmsg.DescribeTransactionsRequest)
	resp := req.ResponseKind().(*kmsg.DescribeTransactionsResponse)
	describe := b.topicAuthCache(r, acl.OpDescribe)
	for _, id := range req.TransactionalIDs {
		st := kmsg.NewDescribeTransactionsResponseTransactionState()
		st.TransactionalID = id
		st.ProducerID, st.ProducerEpoch, st.StartTimestamp = -1, -1, -1
		if !b.authorizedTransactionalID(r, acl.OpDescribe, &id) {
			st.ErrorCode = kerr.TransactionalIDAuthorizationFailed.Code
			resp.TransactionStates = append(resp.TransactionStates, st)
			continue
		}
		d := b.txns.Describe(id)
		st.ErrorCode = d.Code
		if d.Code == 0 {
			st.State, st.TimeoutMillis, st.StartTimestamp = d.State.String(), d.TimeoutMs, d.StartMs
			st.ProducerID, st.ProducerEpoch = d.ProducerID, d.ProducerEpoch
			idx := map[string]int{}
			for _, tp := range d.Partitions {
				if !describe.ok(tp.Topic) {
					continue
				}
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
