package broker_test

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kmsg"

	"samsa/broker/acl"
	"samsa/broker/brokertest"
)

// TestAPIAuthzTransactionCoordinatorSide: Kafka 2.8's TransactionalId,
// group and topic checks on AddPartitionsToTxn, AddOffsetsToTxn, EndTxn
// and TxnOffsetCommit, and Kafka 3.0's on DescribeTransactions and
// ListTransactions. The client (127.0.0.2) may Write transactional id
// "az-ok", Write topic "az-out", Read topic "az-in" and group "az-g", and
// Describe "az-trusted" and topic "az-other" (so its metadata answers and
// the refusal comes from AddPartitionsToTxn); nothing on "az-denied",
// "az-hidden" or "az-g2". A real franz-go transactional producer is
// refused a partition of a topic it may not write, aborts, and then
// commits to the one it may.
func TestAPIAuthzTransactionCoordinatorSide(t *testing.T) {
	grants := append(trustedHostACLs(true),
		acl.Binding{Resource: litRes(acl.ResourceTransactionalID, acl.Wildcard), Entry: anonEntry(authzTrustedIP, acl.OpAll, acl.Allow)},
		acl.Binding{Resource: litRes(acl.ResourceTransactionalID, "az-ok"), Entry: anonEntry(authzClientIP, acl.OpWrite, acl.Allow)},
		acl.Binding{Resource: litRes(acl.ResourceTransactionalID, "az-trusted"), Entry: anonEntry(authzClientIP, acl.OpDescribe, acl.Allow)},
		acl.Binding{Resource: litRes(acl.ResourceTopic, "az-out"), Entry: anonEntry(authzClientIP, acl.OpWrite, acl.Allow)},
		acl.Binding{Resource: litRes(acl.ResourceTopic, "az-in"), Entry: anonEntry(authzClientIP, acl.OpRead, acl.Allow)},
		acl.Binding{Resource: litRes(acl.ResourceTopic, "az-other"), Entry: anonEntry(authzClientIP, acl.OpDescribe, acl.Allow)},
		acl.Binding{Resource: litRes(acl.ResourceGroup, "az-g"), Entry: anonEntry(authzClientIP, acl.OpRead, acl.Allow)})
	c := authzCluster(t, 1, grants,
		brokertest.WithProperty("transaction.state.log.num.partitions", "1"),
		brokertest.WithProperty("offsets.topic.num.partitions", "1"))
	for _, tp := range []string{"az-out", "az-in", "az-other", "az-hidden"} {
		c.CreateTopic(t, tp, 1, 1)
		c.WaitForLeader(t, tp, 0)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()

	azOpenTrustedTxns(t, ctx, c)
	azClientTxns(t, ctx, c)
	// Raw requests from the client: the refusals come before the
	// coordinator looks at the (bogus) producer id, which would otherwise
	// answer INVALID_PRODUCER_ID_MAPPING.
	rc := dialRawFrom(t, c.Addr(0), authzClientIP)
	azCheckAddPartitions(t, rc)
	azCheckAddOffsetsAndEnd(t, rc)
	azCheckTxnOffsetCommit(t, rc)
	azCheckDescribeAndList(t, c, rc)
}

// azOpenTrustedTxns: the trusted host commits a transaction under
// az-denied and leaves one open under az-trusted, both on az-out and
// az-hidden.
func azOpenTrustedTxns(t *testing.T, ctx context.Context, c *brokertest.Cluster) {
	t.Helper()
	for _, id := range []string{"az-denied", "az-trusted"} {
		tc := kgoFrom(t, c.Addrs(), authzTrustedIP, kgo.TransactionalID(id))
		if err := tc.BeginTransaction(); err != nil {
			t.Fatal(err)
		}
		for _, tp := range []string{"az-out", "az-hidden"} {
			if err := tc.ProduceSync(ctx, &kgo.Record{Topic: tp, Value: []byte(id)}).FirstErr(); err != nil {
				t.Fatalf("trusted %s produce to %s: %v", id, tp, err)
			}
		}
		if id == "az-denied" {
			if err := tc.EndTransaction(ctx, kgo.TryCommit); err != nil {
				t.Fatalf("trusted commit: %v", err)
			}
		}
	}
}

// azClientTxns: the client's franz-go transactional producer is refused
// az-other, commits to az-out, and may not use az-denied.
func azClientTxns(t *testing.T, ctx context.Context, c *brokertest.Cluster) {
	t.Helper()
	cl := kgoFrom(t, c.Addrs(), authzClientIP, kgo.TransactionalID("az-ok"), kgo.RecordRetries(2))
	if err := cl.BeginTransaction(); err != nil {
		t.Fatal(err)
	}
	err := cl.ProduceSync(ctx, &kgo.Record{Topic: "az-other", Value: []byte("no")}).FirstErr()
	if !errors.Is(err, kerr.TopicAuthorizationFailed) {
		t.Fatalf("transactional produce to az-other without Write: %v, want TOPIC_AUTHORIZATION_FAILED", err)
	}
	// franz-go treats a refused AddPartitionsToTxn as fatal for its
	// producer id (the Java client aborts instead): a new instance with
	// the same id takes over.
	if err := cl.EndTransaction(ctx, kgo.TryAbort); err != nil && !errors.Is(err, kerr.TopicAuthorizationFailed) {
		t.Fatalf("abort after the refusal: %v", err)
	}
	cl.Close()
	cl = kgoFrom(t, c.Addrs(), authzClientIP, kgo.TransactionalID("az-ok"), kgo.RecordRetries(2))
	if err := cl.BeginTransaction(); err != nil {
		t.Fatal(err)
	}
	if err := cl.ProduceSync(ctx, &kgo.Record{Topic: "az-out", Value: []byte("yes")}).FirstErr(); err != nil {
		t.Fatalf("transactional produce to az-out with Write: %v", err)
	}
	if err := cl.EndTransaction(ctx, kgo.TryCommit); err != nil {
		t.Fatalf("commit to az-out: %v", err)
	}
	denied := kgoFrom(t, c.Addrs(), authzClientIP, kgo.TransactionalID("az-denied"), kgo.RecordRetries(2))
	// franz-go initializes the producer id in BeginTransaction.
	if err := denied.BeginTransaction(); !errors.Is(err, kerr.TransactionalIDAuthorizationFailed) {
		t.Fatalf("BeginTransaction under az-denied: %v, want TRANSACTIONAL_ID_AUTHORIZATION_FAILED", err)
	}
}

// azCheckAddPartitions: AddPartitionsToTxn's transactional id and topic
// checks, and v4 (verify only) refused to a client.
func azCheckAddPartitions(t *testing.T, rc *brokertest.RawConn) {
	t.Helper()
	addParts := func(id string, topics ...string) map[string]int16 {
		req := kmsg.NewPtrAddPartitionsToTxnRequest()
		req.SetVersion(3)
		req.TransactionalID, req.ProducerID, req.ProducerEpoch = id, 1<<40, 0
		for _, tp := range topics {
			rt := kmsg.NewAddPartitionsToTxnRequestTopic()
			rt.Topic, rt.Partitions = tp, []int32{0}
			req.Topics = append(req.Topics, rt)
		}
		out := map[string]int16{}
		for _, rt := range mustRoundTrip(t, rc, req).(*kmsg.AddPartitionsToTxnResponse).Topics {
			out[rt.Topic] = rt.Partitions[0].ErrorCode
		}
		return out
	}
	got := addParts("az-denied", "az-out", "az-other")
	if got["az-out"] != kerr.TransactionalIDAuthorizationFailed.Code || got["az-other"] != kerr.TransactionalIDAuthorizationFailed.Code {
		t.Fatalf("AddPartitionsToTxn under az-denied: %v", got)
	}
	got = addParts("az-ok", "az-out", "az-other", "az-hidden", "az-missing", "__consumer_offsets")
	want := map[string]int16{"az-out": kerr.OperationNotAttempted.Code, "az-other": kerr.TopicAuthorizationFailed.Code,
		"az-hidden":  kerr.TopicAuthorizationFailed.Code,
		"az-missing": kerr.TopicAuthorizationFailed.Code, "__consumer_offsets": kerr.TopicAuthorizationFailed.Code}
	for tp, code := range want {
		if got[tp] != code {
			t.Fatalf("AddPartitionsToTxn az-ok: %s got %v, want %v (all %v)", tp, kerr.ErrorForCode(got[tp]), kerr.ErrorForCode(code), got)
		}
	}
	if code := addParts("az-ok", "az-out")["az-out"]; code != kerr.InvalidProducerIDMapping.Code {
		t.Fatalf("AddPartitionsToTxn az-ok, authorized, bogus producer: %v", kerr.ErrorForCode(code))
	}
	v4 := kmsg.NewPtrAddPartitionsToTxnRequest()
	v4.SetVersion(4)
	tx := kmsg.NewAddPartitionsToTxnRequestTransaction()
	tx.TransactionalID, tx.ProducerID, tx.VerifyOnly = "az-ok", 1, true
	v4.Transactions = append(v4.Transactions, tx)
	if r := mustRoundTrip(t, rc, v4).(*kmsg.AddPartitionsToTxnResponse); r.ErrorCode != kerr.ClusterAuthorizationFailed.Code {
		t.Fatalf("AddPartitionsToTxn v4 from a client: %v", kerr.ErrorForCode(r.ErrorCode))
	}
}

// azCheckAddOffsetsAndEnd: AddOffsetsToTxn's transactional id and group
// checks, and EndTxn's transactional id check.
func azCheckAddOffsetsAndEnd(t *testing.T, rc *brokertest.RawConn) {
	t.Helper()
	addOffsets := func(id, group string) int16 {
		req := kmsg.NewPtrAddOffsetsToTxnRequest()
		req.SetVersion(3)
		req.TransactionalID, req.ProducerID, req.Group = id, 1<<40, group
		return mustRoundTrip(t, rc, req).(*kmsg.AddOffsetsToTxnResponse).ErrorCode
	}
	for _, tc := range []struct {
		id, group string
		want      int16
	}{
		{"az-denied", "az-g", kerr.TransactionalIDAuthorizationFailed.Code},
		{"az-ok", "az-g2", kerr.GroupAuthorizationFailed.Code},
		{"az-ok", "az-g", kerr.InvalidProducerIDMapping.Code},
	} {
		if code := addOffsets(tc.id, tc.group); code != tc.want {
			t.Fatalf("AddOffsetsToTxn %s/%s: %v, want %v", tc.id, tc.group, kerr.ErrorForCode(code), kerr.ErrorForCode(tc.want))
		}
	}

	endTxnCode := func(id string) int16 {
		req := kmsg.NewPtrEndTxnRequest()
		req.SetVersion(3)
		req.TransactionalID, req.ProducerID, req.Commit = id, 1<<40, true
		return mustRoundTrip(t, rc, req).(*kmsg.EndTxnResponse).ErrorCode
	}
	if code := endTxnCode("az-denied"); code != kerr.TransactionalIDAuthorizationFailed.Code {
		t.Fatalf("EndTxn az-denied: %v", kerr.ErrorForCode(code))
	}
	if code := endTxnCode("az-ok"); code != kerr.InvalidProducerIDMapping.Code {
		t.Fatalf("EndTxn az-ok with a bogus producer: %v", kerr.ErrorForCode(code))
	}
}

// azCheckTxnOffsetCommit: TxnOffsetCommit's transactional id, group and
// topic checks.
func azCheckTxnOffsetCommit(t *testing.T, rc *brokertest.RawConn) {
	t.Helper()
	txnCommit := func(id, group string, topics ...string) map[string]int16 {
		req := kmsg.NewPtrTxnOffsetCommitRequest()
		req.SetVersion(3)
		req.TransactionalID, req.Group, req.ProducerID, req.Generation = id, group, 1<<40, -1
		for _, tp := range topics {
			rt := kmsg.NewTxnOffsetCommitRequestTopic()
			rt.Topic = tp
			p := kmsg.NewTxnOffsetCommitRequestTopicPartition()
			p.Offset = 1
			rt.Partitions = append(rt.Partitions, p)
			req.Topics = append(req.Topics, rt)
		}
		out := map[string]int16{}
		for _, rt := range mustRoundTrip(t, rc, req).(*kmsg.TxnOffsetCommitResponse).Topics {
			out[rt.Topic] = rt.Partitions[0].ErrorCode
		}
		return out
	}
	if got := txnCommit("az-denied", "az-g", "az-in"); got["az-in"] != kerr.TransactionalIDAuthorizationFailed.Code {
		t.Fatalf("TxnOffsetCommit az-denied: %v", got)
	}
	if got := txnCommit("az-ok", "az-g2", "az-in"); got["az-in"] != kerr.GroupAuthorizationFailed.Code {
		t.Fatalf("TxnOffsetCommit az-ok/az-g2: %v", got)
	}
	got := txnCommit("az-ok", "az-g", "az-in", "az-other")
	if got["az-other"] != kerr.TopicAuthorizationFailed.Code {
		t.Fatalf("TxnOffsetCommit az-other without Read: %v", got)
	}
	if code := got["az-in"]; code == kerr.TopicAuthorizationFailed.Code || code == kerr.GroupAuthorizationFailed.Code || code == kerr.TransactionalIDAuthorizationFailed.Code {
		t.Fatalf("TxnOffsetCommit az-in with every grant refused: %v", kerr.ErrorForCode(code))
	}
}

// azCheckDescribeAndList: DescribeTransactions and ListTransactions show
// the client only what it may describe; the trusted host sees everything.
func azCheckDescribeAndList(t *testing.T, c *brokertest.Cluster, rc *brokertest.RawConn) {
	t.Helper()
	dreq := kmsg.NewPtrDescribeTransactionsRequest()
	dreq.TransactionalIDs = []string{"az-denied", "az-trusted", "az-ok"}
	var dresp *kmsg.DescribeTransactionsResponse
	// az-ok's EndTxn answered at PrepareCommit; its markers and
	// CompleteCommit follow in the background.
	brokertest.WaitFor(t, 30*time.Second, func() error {
		dresp = mustRoundTrip(t, rc, dreq).(*kmsg.DescribeTransactionsResponse)
		if len(dresp.TransactionStates) == 3 && dresp.TransactionStates[2].State == "PrepareCommit" {
			return errors.New("az-ok still completing")
		}
		return nil
	})
	if len(dresp.TransactionStates) != 3 {
		t.Fatalf("DescribeTransactions: %+v", dresp)
	}
	if st := dresp.TransactionStates[0]; st.ErrorCode != kerr.TransactionalIDAuthorizationFailed.Code || st.State != "" {
		t.Fatalf("DescribeTransactions az-denied: %+v", st)
	}
	if st := dresp.TransactionStates[1]; st.ErrorCode != 0 || st.State != "Ongoing" || len(st.Topics) != 1 || st.Topics[0].Topic != "az-out" {
		t.Fatalf("DescribeTransactions az-trusted: %+v (want Ongoing with az-out only)", st)
	}
	if st := dresp.TransactionStates[2]; st.ErrorCode != 0 || st.State != "CompleteCommit" {
		t.Fatalf("DescribeTransactions az-ok (Describe implied by Write): %+v", st)
	}
	// The trusted host sees az-other too.
	trusted := dialRawFrom(t, c.Addr(0), authzTrustedIP)
	if st := mustRoundTrip(t, trusted, dreq).(*kmsg.DescribeTransactionsResponse).TransactionStates[1]; len(st.Topics) != 2 {
		t.Fatalf("DescribeTransactions az-trusted from the trusted host: %+v", st)
	}

	listed := func(rc *brokertest.RawConn) map[string]bool {
		resp := mustRoundTrip(t, rc, kmsg.NewPtrListTransactionsRequest()).(*kmsg.ListTransactionsResponse)
		if resp.ErrorCode != 0 {
			t.Fatalf("ListTransactions: %v", kerr.ErrorForCode(resp.ErrorCode))
		}
		out := map[string]bool{}
		for _, s := range resp.TransactionStates {
			out[s.TransactionalID] = true
		}
		return out
	}
	if l := listed(rc); len(l) != 2 || !l["az-ok"] || !l["az-trusted"] {
		t.Fatalf("ListTransactions from the client: %v, want az-ok and az-trusted", l)
	}
	if l := listed(trusted); len(l) != 3 || !l["az-denied"] {
		t.Fatalf("ListTransactions from the trusted host: %v", l)
	}
}
