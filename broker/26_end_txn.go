package broker

// EndTxn: v0-3
//
// Behaviour:
//   - Commit or abort, as Kafka 2.8's handleEndTransaction: Ongoing moves
//     to PrepareCommit/PrepareAbort, and the answer (NONE) goes out once
//     that is replicated to __transaction_state; the markers to every
//     partition's leader and the Complete* record follow in the
//     background, and until Complete* is written the producer's next
//     AddPartitionsToTxn/EndTxn gets CONCURRENT_TRANSACTIONS. A retried
//     commit after CompleteCommit (abort after CompleteAbort) is NONE; a
//     contradicting or early EndTxn is INVALID_TXN_STATE;
//     INVALID_PRODUCER_ID_MAPPING, PRODUCER_FENCED (INVALID_PRODUCER_EPOCH
//     below v2), NOT_COORDINATOR, COORDINATOR_LOAD_IN_PROGRESS.
//   - No ACL check: Kafka requires Write on the transactional id.
//
// Version notes:
//   - v1: same as v0. v2: PRODUCER_FENCED replaces INVALID_PRODUCER_EPOCH.
//     v3: flexible.

import "github.com/twmb/franz-go/pkg/kmsg"

func (b *Broker) handleEndTxn(r *request) (kmsg.Response, error) {
	req := r.body.(*kmsg.EndTxnRequest)
	resp := req.ResponseKind().(*kmsg.EndTxnResponse)
	code := b.txns.EndTxn(r.ctx, req.TransactionalID, req.ProducerID, req.ProducerEpoch, req.Commit)
	resp.ErrorCode = fencedCode(code, req.Version >= 2)
	return resp, nil
}
