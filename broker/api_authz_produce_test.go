package broker_test

import (
	"testing"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"

	"samsa/broker/acl"
	"samsa/broker/brokertest"
	"samsa/broker/record"
)

// TestAPIAuthzProduceTransactionalBatchInAnyPartition is CVE-2018-17196's
// request: a client with Write on two topics but not on the transactional
// id sends one Produce whose first partition holds a plain batch and whose
// second holds a transactional one. Kafka 2.8 looks at the first batch of
// every partition (RequestUtils.hasTransactionalRecords) and refuses the
// whole request with TRANSACTIONAL_ID_AUTHORIZATION_FAILED; the broker that
// read only the first partition let the transactional batch in. Nothing is
// appended to either partition. The same request under a transactional id
// the client may write passes the check (and then meets the transaction
// rules: the producer id is unknown to the coordinator, so the partition
// without AddPartitionsToTxn answers as Kafka does, not with an
// authorization error).
func TestAPIAuthzProduceTransactionalBatchInAnyPartition(t *testing.T) {
	grants := append(trustedHostACLs(true),
		acl.Binding{Resource: litRes(acl.ResourceTopic, "plain"), Entry: anonEntry(authzClientIP, acl.OpWrite, acl.Allow)},
		acl.Binding{Resource: litRes(acl.ResourceTopic, "txn"), Entry: anonEntry(authzClientIP, acl.OpWrite, acl.Allow)},
		acl.Binding{Resource: litRes(acl.ResourceTransactionalID, "mine"), Entry: anonEntry(authzClientIP, acl.OpWrite, acl.Allow)})
	c := authzCluster(t, 1, grants)
	c.CreateTopic(t, "plain", 1, 1)
	c.CreateTopic(t, "txn", 1, 1)
	c.WaitForLeader(t, "plain", 0)
	c.WaitForLeader(t, "txn", 0)
	plain, err := record.Build(record.NewBuildHeader(0, 1), []record.Record{{Value: []byte("p")}}, record.CodecNone)
	if err != nil {
		t.Fatal(err)
	}
	h := record.NewBuildHeader(0, 1)
	h.Transactional, h.ProducerID, h.ProducerEpoch, h.BaseSequence = true, 4242, 0, 0
	txn, err := record.Build(h, []record.Record{{Value: []byte("t")}}, record.CodecNone)
	if err != nil {
		t.Fatal(err)
	}
	produce := func(txnID string) map[string]int16 {
		req := brokertest.ProduceRequest(7, -1, 5000, "plain", 0, plain)
		req.TransactionID = kmsg.StringPtr(txnID)
		rt := kmsg.NewProduceRequestTopic()
		rt.Topic = "txn"
		rp := kmsg.NewProduceRequestTopicPartition()
		rp.Records = txn
		rt.Partitions = append(rt.Partitions, rp)
		req.Topics = append(req.Topics, rt)
		rc := dialRawFrom(t, c.Addr(0), authzClientIP)
		out := map[string]int16{}
		for _, t := range mustRoundTrip(t, rc, req).(*kmsg.ProduceResponse).Topics {
			out[t.Topic] = t.Partitions[0].ErrorCode
		}
		return out
	}
	trusted := dialRawFrom(t, c.Addr(0), authzTrustedIP)
	got := produce("theirs")
	for _, topic := range []string{"plain", "txn"} {
		if got[topic] != kerr.TransactionalIDAuthorizationFailed.Code {
			t.Fatalf("transactional batch in the second partition, id not writable: %s answered %v (all %v)",
				topic, kerr.ErrorForCode(got[topic]), got)
		}
		if leo := brokertest.ListLatest(t, trusted, topic, 0); leo != 0 {
			t.Fatalf("%s: a refused produce was appended (latest offset %d)", topic, leo)
		}
	}
	got = produce("mine")
	for topic, code := range got {
		if code == kerr.TransactionalIDAuthorizationFailed.Code || code == kerr.TopicAuthorizationFailed.Code {
			t.Fatalf("writable transactional id: %s refused by authorization (%v)", topic, kerr.ErrorForCode(code))
		}
	}
	if got["plain"] != 0 {
		t.Fatalf("writable transactional id: the plain batch answered %v", kerr.ErrorForCode(got["plain"]))
	}
}
