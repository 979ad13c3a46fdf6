package broker

import (
	"github.com/twmb/franz-go/pkg/kmsg"

	"samsa/broker/replica"
)

// fetchReadCommitted reports whether a fetch asks for isolation_level 1
// (read_committed, Fetch v4+; consumers only, followers ignore it as Kafka
// does).
func fetchReadCommitted(req *kmsg.FetchRequest) bool {
	return req.Version >= 4 && req.IsolationLevel == 1 && req.ReplicaID < 0
}

// setAbortedTransactions fills a read_committed partition's
// aborted_transactions (Kafka's FetchResponse: null for read_uncommitted,
// a list, maybe empty, for read_committed).
func setAbortedTransactions(rp *kmsg.FetchResponseTopicPartition, res replica.ReadResult) {
	if res.AbortedTransactions == nil {
		return
	}
	rp.AbortedTransactions = make([]kmsg.FetchResponseTopicPartitionAbortedTransaction, len(res.AbortedTransactions))
	for i, a := range res.AbortedTransactions {
		at := kmsg.NewFetchResponseTopicPartitionAbortedTransaction()
		at.ProducerID, at.FirstOffset = a.ProducerID, a.FirstOffset
		rp.AbortedTransactions[i] = at
	}
}
