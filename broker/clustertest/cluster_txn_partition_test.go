package clustertest_test

import (
	"context"
	"fmt"
	"sort"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kmsg"

	"samsa/broker/brokertest"
	"samsa/broker/record"
)

// txnProduce sends one batch of values for producer pid with Produce v8
// (transactional when txn), acks -1, and returns its base offset.
func txnProduce(t *testing.T, rc *brokertest.RawConn, topic string, pid int64, epoch int16, seq int32, txn bool, values ...string) int64 {
	t.Helper()
	resp, err := rc.RoundTrip(txnProduceRequest(t, topic, pid, epoch, seq, txn, values...))
	if err != nil {
		t.Fatal(err)
	}
	p := resp.(*kmsg.ProduceResponse).Topics[0].Partitions[0]
	if p.ErrorCode != 0 {
		t.Fatalf("produce pid %d: %v", pid, kerr.ErrorForCode(p.ErrorCode))
	}
	return p.BaseOffset
}

// txnProduceRequest builds a Produce v8 (acks -1) of one batch of values
// for producer pid, transactional when txn.
func txnProduceRequest(t *testing.T, topic string, pid int64, epoch int16, seq int32, txn bool, values ...string) *kmsg.ProduceRequest {
	t.Helper()
	recs := make([]record.Record, len(values))
	for i, v := range values {
		recs[i] = record.Record{OffsetDelta: int32(i), Key: []byte(v), Value: []byte(v)}
	}
	h := record.NewBuildHeader(0, time.Now().UnixMilli())
	h.ProducerID, h.ProducerEpoch, h.BaseSequence, h.Transactional = pid, epoch, seq, txn
	b, err := record.Build(h, recs, record.CodecNone)
	if err != nil {
		t.Fatal(err)
	}
	req := brokertest.ProduceRequest(8, -1, 10000, topic, 0, b)
	if txn {
		id := fmt.Sprintf("txn-%d", pid)
		req.TransactionID = &id
	}
	return req
}

// fetchCommitted sends Fetch v11 read_committed from offset 0 and returns
// the partition's answer.
func fetchCommitted(t *testing.T, rc *brokertest.RawConn, topic string) kmsg.FetchResponseTopicPartition {
	t.Helper()
	req := brokertest.FetchRequest(-1, 0, topic)
	req.IsolationLevel, req.MinBytes = 1, 0
	resp, err := rc.RoundTrip(req)
	if err != nil {
		t.Fatal(err)
	}
	return resp.(*kmsg.FetchResponse).Topics[0].Partitions[0]
}

// consumeValues reads topic with kgo at the isolation level until want
// values arrived (or the deadline) and returns them sorted.
func consumeValues(t *testing.T, addrs []string, topic string, iso kgo.IsolationLevel, want int) []string {
	t.Helper()
	cl, err := kgo.NewClient(kgo.SeedBrokers(addrs...), kgo.ConsumeTopics(topic),
		kgo.ConsumeResetOffset(kgo.NewOffset().AtStart()), kgo.FetchIsolationLevel(iso))
	if err != nil {
		t.Fatal(err)
	}
	defer cl.Close()
	var got []string
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	for i := 0; i < 1000 && len(got) < want && ctx.Err() == nil; i++ {
		fs := cl.PollFetches(ctx)
		fs.EachRecord(func(r *kgo.Record) { got = append(got, string(r.Value)) })
	}
	sort.Strings(got)
	return got
}

// TestClusterTxnPartitionReadCommitted: Kafka 2.8 (KIP-98) partition side,
// driven as the coordinator would drive it (raw transactional Produce and
// WriteTxnMarkers): an aborted transaction is invisible to read_committed
// and visible to read_uncommitted; the last stable offset stops at an open
// transaction (Fetch and ListOffsets isolation level 1); Fetch lists the
// aborted transaction; a marker with an older coordinator epoch is
// TRANSACTION_COORDINATOR_FENCED; DescribeProducers shows the open one.
func TestClusterTxnPartitionReadCommitted(t *testing.T) {
	c := brokertest.NewCluster(t, 1, noTxnVerification)
	const topic = "txnp"
	c.CreateTopic(t, topic, 1, 1)
	c.WaitForLeader(t, topic, 0)
	rc := brokertest.DialRaw(t, c.Addr(0))
	abortedFirst := txnProduce(t, rc, topic, 1000, 0, 0, true, "a0", "a1", "a2")
	txnProduce(t, rc, topic, 2000, 0, 0, true, "c0", "c1")
	txnProduce(t, rc, topic, 3000, 0, 0, false, "plain")
	if code := brokertest.WriteMarker(t, rc, topic, 1000, 0, false, 5); code != 0 {
		t.Fatalf("abort marker: %v", kerr.ErrorForCode(code))
	}
	if code := brokertest.WriteMarker(t, rc, topic, 2000, 0, true, 5); code != 0 {
		t.Fatalf("commit marker: %v", kerr.ErrorForCode(code))
	}
	open := txnProduce(t, rc, topic, 4000, 0, 0, true, "o0")
	if lso := brokertest.ListLatest(t, rc, topic, 1); lso != open {
		t.Fatalf("ListOffsets read_committed latest %d, want the open transaction's first offset %d", lso, open)
	}
	if hw := brokertest.ListLatest(t, rc, topic, 0); hw != open+1 {
		t.Fatalf("ListOffsets read_uncommitted latest %d, want %d", hw, open+1)
	}
	fp := fetchCommitted(t, rc, topic)
	if fp.ErrorCode != 0 || fp.LastStableOffset != open || len(fp.AbortedTransactions) != 1 ||
		fp.AbortedTransactions[0].ProducerID != 1000 || fp.AbortedTransactions[0].FirstOffset != abortedFirst {
		t.Fatalf("fetch read_committed: err %d lso %d aborted %+v", fp.ErrorCode, fp.LastStableOffset, fp.AbortedTransactions)
	}
	if got, want := consumeValues(t, c.Addrs(), topic, kgo.ReadCommitted(), 3), []string{"c0", "c1", "plain"}; fmt.Sprint(got) != fmt.Sprint(want) {
		t.Fatalf("read_committed before the open txn ends: %v, want %v", got, want)
	}
	// The producer of the open transaction, seen by DescribeProducers.
	dreq := kmsg.NewPtrDescribeProducersRequest()
	dt := kmsg.NewDescribeProducersRequestTopic()
	dt.Topic, dt.Partitions = topic, []int32{0}
	dreq.Topics = append(dreq.Topics, dt)
	dresp, err := rc.RoundTrip(dreq)
	if err != nil {
		t.Fatal(err)
	}
	found := false
	for _, p := range dresp.(*kmsg.DescribeProducersResponse).Topics[0].Partitions[0].ActiveProducers {
		if p.ProducerID == 4000 {
			found = p.CurrentTxnStartOffset == open
		}
		if p.ProducerID == 1000 && (p.CoordinatorEpoch != 5 || p.CurrentTxnStartOffset != -1) {
			t.Fatalf("aborted producer: %+v", p)
		}
	}
	if !found {
		t.Fatalf("DescribeProducers: %+v", dresp)
	}
	if code := brokertest.WriteMarker(t, rc, topic, 1000, 0, true, 4); code != kerr.TransactionCoordinatorFenced.Code {
		t.Fatalf("marker with an older coordinator epoch: %v, want TRANSACTION_COORDINATOR_FENCED", kerr.ErrorForCode(code))
	}
	if code := brokertest.WriteMarker(t, rc, topic, 4000, 0, true, 5); code != 0 {
		t.Fatalf("commit of the open txn: %v", kerr.ErrorForCode(code))
	}
	if got, want := consumeValues(t, c.Addrs(), topic, kgo.ReadCommitted(), 4), []string{"c0", "c1", "o0", "plain"}; fmt.Sprint(got) != fmt.Sprint(want) {
		t.Fatalf("read_committed: %v, want %v", got, want)
	}
	if got, want := consumeValues(t, c.Addrs(), topic, kgo.ReadUncommitted(), 7), []string{"a0", "a1", "a2", "c0", "c1", "o0", "plain"}; fmt.Sprint(got) != fmt.Sprint(want) {
		t.Fatalf("read_uncommitted: %v, want %v", got, want)
	}
	// librdkafka (kcat) filters the aborted transaction the same way.
	if kcat := optionalKcat(t); kcat != "" {
		for iso, want := range map[string][]string{
			"read_committed":   {"c0", "c1", "o0", "plain"},
			"read_uncommitted": {"a0", "a1", "a2", "c0", "c1", "o0", "plain"},
		} {
			var got []string
			for _, m := range kcatJSON(t, kcat, c.Addr(0), topic, 0, "beginning", "-X", "isolation.level="+iso) {
				got = append(got, derefOr(m.Payload, ""))
			}
			sort.Strings(got)
			if fmt.Sprint(got) != fmt.Sprint(want) {
				t.Fatalf("kcat %s: %v, want %v", iso, got, want)
			}
		}
	}
}

// TestClusterTxnPartitionHardKill: a SIGKILLed broker process rebuilds the
// last stable offset (an open transaction) and the aborted-transaction
// index from its log at restart (Kafka's recovery of an unclean shutdown).
func TestClusterTxnPartitionHardKill(t *testing.T) {
	c := brokertest.NewProcCluster(t, 1, noTxnVerification)
	const topic = "txnk"
	c.CreateTopic(t, topic, 1, 1, nil)
	rc := dialRawWait(t, c.Addr(0), topic)
	abortedFirst := txnProduce(t, rc, topic, 1000, 0, 0, true, "a0", "a1")
	if code := brokertest.WriteMarker(t, rc, topic, 1000, 0, false, 1); code != 0 {
		t.Fatalf("abort marker: %v", kerr.ErrorForCode(code))
	}
	open := txnProduce(t, rc, topic, 2000, 0, 0, true, "o0")
	c.Kill(0)
	c.Start(0)
	// Until its LeaderAndIsr is applied the restarted broker answers
	// NOT_LEADER_OR_FOLLOWER (even to Fetch v11, which any replica may
	// serve); from then on, as in Kafka, its high watermark is the log end
	// (makeLeader with an ISR of one), so the first good answer is final.
	var fp kmsg.FetchResponseTopicPartition
	brokertest.WaitFor(t, 60*time.Second, func() error {
		rc = brokertest.DialRaw(t, c.Addr(0))
		fp = fetchCommitted(t, rc, topic)
		if fp.ErrorCode != 0 {
			return kerr.ErrorForCode(fp.ErrorCode)
		}
		return nil
	})
	if fp.LastStableOffset != open || len(fp.AbortedTransactions) != 1 || fp.AbortedTransactions[0].FirstOffset != abortedFirst {
		t.Fatalf("after SIGKILL: lso %d (want %d) aborted %+v", fp.LastStableOffset, open, fp.AbortedTransactions)
	}
	if lso := brokertest.ListLatest(t, rc, topic, 1); lso != open {
		t.Fatalf("ListOffsets read_committed after SIGKILL %d, want %d", lso, open)
	}
}

// dialRawWait dials addr once topic-0 answers a fetch there.
func dialRawWait(t *testing.T, addr, topic string) *brokertest.RawConn {
	t.Helper()
	var rc *brokertest.RawConn
	brokertest.WaitFor(t, 60*time.Second, func() error {
		rc = brokertest.DialRaw(t, addr)
		if fp := fetchCommitted(t, rc, topic); fp.ErrorCode != 0 {
			return kerr.ErrorForCode(fp.ErrorCode)
		}
		return nil
	})
	return rc
}

// noTxnVerification turns the KIP-890 check off: these tests write transactional batches and
// markers themselves, with no transaction coordinator behind the transactional ids.
var noTxnVerification = brokertest.WithProperty("transaction.partition.verification.enable", "false")
