package broker

import (
	"encoding/binary"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"

	"samsa/broker/acl"
	"samsa/broker/record"
)

// produceHasTransactionalRecords is Kafka 2.8's
// RequestUtils.hasTransactionalRecords: the first batch of ANY partition has
// the transactional bit (CVE-2018-17196 came from reading one partition
// only). Only a v2 batch header long enough to hold its attributes counts;
// anything shorter is refused later by validateProduceRecords.
func produceHasTransactionalRecords(req *kmsg.ProduceRequest) bool {
	for _, t := range req.Topics {
		for _, p := range t.Partitions {
			recs := p.Records
			if len(recs) <= produceAttributesOffset+1 || int8(recs[produceMagicOffset]) != record.MagicV2 {
				continue
			}
			h := record.BatchHeader{Attributes: int16(binary.BigEndian.Uint16(recs[produceAttributesOffset:]))}
			if h.IsTransactional() {
				return true
			}
		}
	}
	return false
}

// authorizedProduceTransaction: a produce carrying transactional batches
// needs Write on its transactional id.
func (b *Broker) authorizedProduceTransaction(r *request, req *kmsg.ProduceRequest) bool {
	if b.authz == nil || !produceHasTransactionalRecords(req) {
		return true
	}
	return b.authorizedTransactionalID(r, acl.OpWrite, req.TransactionID)
}

// produceAuthErr is the authorization answer of one partition, nil when
// allowed.
func produceAuthErr(txnDenied bool, write *authorizedTopicsCache, topic string) *kerr.Error {
	if txnDenied {
		return kerr.TransactionalIDAuthorizationFailed
	}
	if !write.ok(topic) {
		return kerr.TopicAuthorizationFailed
	}
	return nil
}
