package clustertest_test

import (
	"context"
	"errors"
	"fmt"
	"testing"
	"time"

	"github.com/IBM/sarama"
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kmsg"

	"samsa/broker/brokertest"
	"samsa/peer"
)

// Transaction coordinator tests (broker/txn). The partition side
// (read_committed, LSO, control batches written by WriteTxnMarkers) is
// separate work; these assert what the coordinator controls: the state
// DescribeTransactions/ListTransactions report, fencing, timeouts and
// failover.

// txnCluster starts n brokers with small internal topics.
func txnCluster(t *testing.T, n int, opts ...brokertest.Option) *brokertest.Cluster {
	t.Helper()
	opts = append([]brokertest.Option{brokertest.WithInternalTopicPartitions(3)}, opts...)
	return brokertest.NewCluster(t, n, opts...)
}

// txnWait polls cond until it holds or timeout passes.
func txnWait(t *testing.T, timeout time.Duration, what string, cond func() (bool, string)) {
	t.Helper()
	deadline := time.Now().Add(timeout)
	last := ""
	for time.Now().Before(deadline) {
		ok, state := cond()
		if ok {
			return
		}
		last = state
		time.Sleep(20 * time.Millisecond) // poll interval, not synchronisation
	}
	t.Fatalf("timed out waiting for %s (last: %s)", what, last)
}

// txnClient returns a franz-go transactional producer of either kind of
// cluster (brokertest.Cluster or ProcCluster), closed at cleanup.
func txnClient(t *testing.T, c interface{ Addrs() []string }, id, topic string, opts ...kgo.Opt) *kgo.Client {
	t.Helper()
	cl, err := kgo.NewClient(append([]kgo.Opt{kgo.SeedBrokers(c.Addrs()...), kgo.TransactionalID(id),
		kgo.DefaultProduceTopic(topic), kgo.RecordPartitioner(kgo.ManualPartitioner())}, opts...)...)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(cl.Close)
	return cl
}

// adminClient returns a plain franz-go client for raw requests.
func adminClient(t *testing.T, c *brokertest.Cluster) *kgo.Client {
	t.Helper()
	cl, err := kgo.NewClient(kgo.SeedBrokers(c.Addrs()...))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(cl.Close)
	return cl
}

// describeTxn returns id's DescribeTransactions entry (kgo routes the
// request to the id's coordinator).
func describeTxn(t *testing.T, cl *kgo.Client, id string) (kmsg.DescribeTransactionsResponseTransactionState, error) {
	t.Helper()
	req := kmsg.NewPtrDescribeTransactionsRequest()
	req.TransactionalIDs = []string{id}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	resp, err := req.RequestWith(ctx, cl)
	if err != nil {
		return kmsg.DescribeTransactionsResponseTransactionState{}, err
	}
	if len(resp.TransactionStates) != 1 {
		return kmsg.DescribeTransactionsResponseTransactionState{}, fmt.Errorf("%d states", len(resp.TransactionStates))
	}
	return resp.TransactionStates[0], nil
}

// waitTxnState waits until id is described in state with no partitions
// left waiting for markers, and returns the description.
func waitTxnState(t *testing.T, cl *kgo.Client, id, state string) kmsg.DescribeTransactionsResponseTransactionState {
	t.Helper()
	var st kmsg.DescribeTransactionsResponseTransactionState
	txnWait(t, 30*time.Second, id+" in "+state, func() (bool, string) {
		var err error
		st, err = describeTxn(t, cl, id)
		if err != nil {
			return false, err.Error()
		}
		return st.ErrorCode == 0 && st.State == state, fmt.Sprintf("code %d state %s topics %v", st.ErrorCode, st.State, st.Topics)
	})
	return st
}

func produceTxn(t *testing.T, cl *kgo.Client, partition int32, values ...string) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	for _, v := range values {
		if err := cl.ProduceSync(ctx, &kgo.Record{Value: []byte(v), Partition: partition}).FirstErr(); err != nil {
			t.Fatalf("produce %q: %v", v, err)
		}
	}
}

func endTxn(cl *kgo.Client, commit kgo.TransactionEndTry) error {
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	return cl.EndTransaction(ctx, commit)
}

// TestClusterTxnCommitAbortRoundTrip: franz-go begins, produces to two
// partitions and commits, then aborts a second transaction; the
// coordinator reports Ongoing with both partitions, then CompleteCommit,
// then CompleteAbort, and ListTransactions lists the id with its state
// filter.
func TestClusterTxnCommitAbortRoundTrip(t *testing.T) {
	c := txnCluster(t, 1, brokertest.WithProperty("metrics.listener", "http://127.0.0.1:0"))
	c.CreateTopic(t, "txn-rt", 2, 1)
	cl := txnClient(t, c, "rt-1", "txn-rt")
	adm := adminClient(t, c)
	if err := cl.BeginTransaction(); err != nil {
		t.Fatal(err)
	}
	produceTxn(t, cl, 0, "a", "b")
	produceTxn(t, cl, 1, "c")
	st := waitTxnState(t, adm, "rt-1", "Ongoing")
	if len(st.Topics) != 1 || st.Topics[0].Topic != "txn-rt" || len(st.Topics[0].Partitions) != 2 || st.StartTimestamp <= 0 {
		t.Fatalf("ongoing: %+v", st)
	}
	pid, epoch := st.ProducerID, st.ProducerEpoch
	brokertest.WaitMetric(t, c, 0, "samsa_coordinator_transaction_transactionstatemanager_numongoing", func(v float64) bool { return v == 1 })
	if err := endTxn(cl, kgo.TryCommit); err != nil {
		t.Fatalf("commit: %v", err)
	}
	st = waitTxnState(t, adm, "rt-1", "CompleteCommit")
	if st.ProducerID != pid || st.ProducerEpoch != epoch || len(st.Topics) != 0 {
		t.Fatalf("committed: %+v", st)
	}
	if err := cl.BeginTransaction(); err != nil {
		t.Fatal(err)
	}
	produceTxn(t, cl, 0, "d")
	if err := endTxn(cl, kgo.TryAbort); err != nil {
		t.Fatalf("abort: %v", err)
	}
	waitTxnState(t, adm, "rt-1", "CompleteAbort")
	brokertest.WaitMetric(t, c, 0, "samsa_coordinator_transaction_transactionstatemanager_numongoing", func(v float64) bool { return v == 0 })
	brokertest.WaitMetric(t, c, 0, "kafka_server_transaction_coordinator_metrics_partition_load_time_max", func(v float64) bool { return v >= 0 })

	req := kmsg.NewPtrListTransactionsRequest()
	req.StateFilters = []string{"CompleteAbort", "NoSuchState"}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	shards := adm.RequestSharded(ctx, req)
	found := false
	for _, sh := range shards {
		if sh.Err != nil {
			t.Fatalf("list on %d: %v", sh.Meta.NodeID, sh.Err)
		}
		resp := sh.Resp.(*kmsg.ListTransactionsResponse)
		if resp.ErrorCode != 0 || len(resp.UnknownStateFilters) != 1 || resp.UnknownStateFilters[0] != "NoSuchState" {
			t.Fatalf("list: %+v", resp)
		}
		for _, s := range resp.TransactionStates {
			found = found || (s.TransactionalID == "rt-1" && s.ProducerID == pid && s.TransactionState == "CompleteAbort")
		}
	}
	if !found {
		t.Fatal("ListTransactions does not list rt-1 in CompleteAbort")
	}
	if st, err := describeTxn(t, adm, "no-such-id"); err != nil || st.ErrorCode != kerr.TransactionalIDNotFound.Code {
		t.Fatalf("unknown id: %+v %v", st, err)
	}
}

// TestClusterTxnZombieFenced: a second producer with the same
// transactional id bumps the epoch; the first one's open transaction is
// aborted by the coordinator and its commit fails as fenced.
func TestClusterTxnZombieFenced(t *testing.T) {
	c := txnCluster(t, 1)
	c.CreateTopic(t, "txn-z", 1, 1)
	adm := adminClient(t, c)
	zombie := txnClient(t, c, "z-1", "txn-z")
	if err := zombie.BeginTransaction(); err != nil {
		t.Fatal(err)
	}
	produceTxn(t, zombie, 0, "old")
	old := waitTxnState(t, adm, "z-1", "Ongoing")

	fresh := txnClient(t, c, "z-1", "txn-z")
	if err := fresh.BeginTransaction(); err != nil {
		t.Fatal(err)
	}
	produceTxn(t, fresh, 0, "new") // InitProducerId fenced and aborted the zombie's transaction first
	st := waitTxnState(t, adm, "z-1", "Ongoing")
	if st.ProducerID != old.ProducerID || st.ProducerEpoch <= old.ProducerEpoch {
		t.Fatalf("after the second init: %+v (first %+v)", st, old)
	}
	err := endTxn(zombie, kgo.TryCommit)
	if !errors.Is(err, kerr.ProducerFenced) && !errors.Is(err, kerr.InvalidProducerEpoch) {
		t.Fatalf("zombie commit: %v, want PRODUCER_FENCED or INVALID_PRODUCER_EPOCH", err)
	}
	if err := endTxn(fresh, kgo.TryCommit); err != nil {
		t.Fatalf("fresh commit: %v", err)
	}
	waitTxnState(t, adm, "z-1", "CompleteCommit")
}

// TestClusterTxnTimeoutAbort: a transaction open past its
// transaction.timeout.ms is fenced (epoch+1) and aborted by the
// coordinator's scan; the producer's commit then fails as fenced.
func TestClusterTxnTimeoutAbort(t *testing.T) {
	c := txnCluster(t, 1, brokertest.WithProperty("transaction.abort.timed.out.transaction.cleanup.interval.ms", "100"))
	c.CreateTopic(t, "txn-to", 1, 1)
	adm := adminClient(t, c)
	cl := txnClient(t, c, "to-1", "txn-to", kgo.TransactionTimeout(time.Second))
	if err := cl.BeginTransaction(); err != nil {
		t.Fatal(err)
	}
	produceTxn(t, cl, 0, "x")
	before := waitTxnState(t, adm, "to-1", "Ongoing")
	after := waitTxnState(t, adm, "to-1", "CompleteAbort")
	if after.ProducerEpoch != before.ProducerEpoch+1 || after.TimeoutMillis != 1000 {
		t.Fatalf("timed out: %+v (was %+v)", after, before)
	}
	err := endTxn(cl, kgo.TryCommit)
	if !errors.Is(err, kerr.ProducerFenced) && !errors.Is(err, kerr.InvalidProducerEpoch) {
		t.Fatalf("commit after the timeout abort: %v, want fenced", err)
	}
}

// TestAPITxnInitChecks: transaction.timeout.ms above
// transaction.max.timeout.ms is INVALID_TRANSACTION_TIMEOUT; an empty id
// INVALID_REQUEST; KIP-360 with a wrong producer id PRODUCER_FENCED
// (INVALID_PRODUCER_EPOCH below v4).
func TestAPITxnInitChecks(t *testing.T) {
	c := txnCluster(t, 1)
	adm := adminClient(t, c)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	init := func(version int16, id string, timeout int32, pid int64, epoch int16) *kmsg.InitProducerIDResponse {
		t.Helper()
		req := kmsg.NewPtrInitProducerIDRequest()
		req.Version = version
		req.TransactionalID, req.TransactionTimeoutMillis, req.ProducerID, req.ProducerEpoch = &id, timeout, pid, epoch
		var resp *kmsg.InitProducerIDResponse
		txnWait(t, 30*time.Second, "a coordinator answer", func() (bool, string) {
			kresp, err := adm.Request(ctx, req)
			if err != nil {
				return false, err.Error()
			}
			resp = kresp.(*kmsg.InitProducerIDResponse)
			retry := resp.ErrorCode == kerr.CoordinatorNotAvailable.Code || resp.ErrorCode == kerr.CoordinatorLoadInProgress.Code ||
				resp.ErrorCode == kerr.NotCoordinator.Code
			return !retry, fmt.Sprintf("code %d", resp.ErrorCode)
		})
		return resp
	}
	if r := init(4, "ic-1", 900001, -1, -1); r.ErrorCode != kerr.InvalidTransactionTimeout.Code {
		t.Fatalf("timeout above max: %+v", r)
	}
	if r := init(4, "ic-1", 0, -1, -1); r.ErrorCode != kerr.InvalidTransactionTimeout.Code {
		t.Fatalf("timeout 0: %+v", r)
	}
	first := init(4, "ic-1", 60000, -1, -1)
	if first.ErrorCode != 0 || first.ProducerEpoch != 0 {
		t.Fatalf("first init: %+v", first)
	}
	// KIP-360: the same producer recovering keeps its id and bumps.
	again := init(4, "ic-1", 60000, first.ProducerID, first.ProducerEpoch)
	if again.ErrorCode != 0 || again.ProducerID != first.ProducerID || again.ProducerEpoch != 1 {
		t.Fatalf("KIP-360 bump: %+v", again)
	}
	if r := init(4, "ic-1", 60000, first.ProducerID+1000, 0); r.ErrorCode != kerr.ProducerFenced.Code {
		t.Fatalf("wrong producer id v4: %+v", r)
	}
	// v3 predates PRODUCER_FENCED (kgo sends its highest version, so a
	// raw connection pins v3).
	rc := brokertest.DialRaw(t, c.Addr(0))
	req := kmsg.NewPtrInitProducerIDRequest()
	req.Version = 3
	id := "ic-1"
	req.TransactionalID, req.TransactionTimeoutMillis, req.ProducerID, req.ProducerEpoch = &id, 60000, first.ProducerID+1000, 0
	resp, err := rc.RoundTrip(req)
	if err != nil {
		t.Fatal(err)
	}
	if r := resp.(*kmsg.InitProducerIDResponse); r.ErrorCode != kerr.InvalidProducerEpoch.Code {
		t.Fatalf("wrong producer id v3: %+v", r)
	}
}

// TestClusterTxnSaramaCommit: Sarama's transactional producer commits
// and the coordinator completes the transaction.
func TestClusterTxnSaramaCommit(t *testing.T) {
	c := txnCluster(t, 1)
	c.CreateTopic(t, "txn-sarama", 1, 1)
	adm := adminClient(t, c)
	p := c.SyncProducer(t, brokertest.SaramaTxnConfig("sarama-1"))
	if err := p.BeginTxn(); err != nil {
		t.Fatal(err)
	}
	if _, _, err := p.SendMessage(&sarama.ProducerMessage{Topic: "txn-sarama", Value: sarama.StringEncoder("s")}); err != nil {
		t.Fatal(err)
	}
	if err := p.CommitTxn(); err != nil {
		t.Fatalf("commit: %v", err)
	}
	waitTxnState(t, adm, "sarama-1", "CompleteCommit")
}

// TestClusterTxnOffsetCommitPending: offsets a transaction commits
// (AddOffsetsToTxn + TxnOffsetCommit through franz-go) are not the
// group's committed offsets before the marker: OffsetFetch answers -1,
// and with require_stable UNSTABLE_OFFSET_COMMIT. (Materialising them on
// the COMMIT marker is the WriteTxnMarkers handler's call into
// group.Coordinator.CompleteTxnOffsets, tested in broker/group.)
func TestClusterTxnOffsetCommitPending(t *testing.T) {
	c := txnCluster(t, 1)
	c.CreateTopic(t, "txn-off", 1, 1)
	cl := txnClient(t, c, "off-1", "txn-off")
	adm := adminClient(t, c)
	if err := cl.BeginTransaction(); err != nil {
		t.Fatal(err)
	}
	produceTxn(t, cl, 0, "v")
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	// What GroupTransactSession does on commit: AddOffsetsToTxn, then
	// TxnOffsetCommit to the group coordinator.
	st := waitTxnState(t, adm, "off-1", "Ongoing")
	add := kmsg.NewPtrAddOffsetsToTxnRequest()
	add.TransactionalID, add.ProducerID, add.ProducerEpoch, add.Group = "off-1", st.ProducerID, st.ProducerEpoch, "off-group"
	if resp, err := add.RequestWith(ctx, adm); err != nil || resp.ErrorCode != 0 {
		t.Fatalf("AddOffsetsToTxn: %+v %v", resp, err)
	}
	st = waitTxnState(t, adm, "off-1", "Ongoing")
	if len(st.Topics) != 2 {
		t.Fatalf("the group's offsets partition is not in the transaction: %+v", st.Topics)
	}
	commit := kmsg.NewPtrTxnOffsetCommitRequest()
	commit.TransactionalID, commit.Group, commit.ProducerID, commit.ProducerEpoch = "off-1", "off-group", st.ProducerID, st.ProducerEpoch
	rt := kmsg.NewTxnOffsetCommitRequestTopic()
	rt.Topic = "txn-off"
	rp := kmsg.NewTxnOffsetCommitRequestTopicPartition()
	rp.Partition, rp.Offset = 0, 17
	rt.Partitions = append(rt.Partitions, rp)
	commit.Topics = append(commit.Topics, rt)
	txnWait(t, 30*time.Second, "TxnOffsetCommit", func() (bool, string) {
		resp, err := commit.RequestWith(ctx, adm)
		if err != nil {
			return false, err.Error()
		}
		code := resp.Topics[0].Partitions[0].ErrorCode
		return code == 0, "code " + itoa(code)
	})
	fetch := func(stable bool) (int64, int16) {
		req := kmsg.NewPtrOffsetFetchRequest()
		req.Group, req.RequireStable = "off-group", stable
		ft := kmsg.NewOffsetFetchRequestTopic()
		ft.Topic, ft.Partitions = "txn-off", []int32{0}
		req.Topics = append(req.Topics, ft)
		resp, err := req.RequestWith(ctx, adm)
		if err != nil {
			t.Fatal(err)
		}
		p := resp.Topics[0].Partitions[0]
		return p.Offset, p.ErrorCode
	}
	if off, code := fetch(true); off != -1 || code != kerr.UnstableOffsetCommit.Code {
		t.Fatalf("require_stable: offset %d code %d, want -1 UNSTABLE_OFFSET_COMMIT", off, code)
	}
	if off, code := fetch(false); off != -1 || code != 0 {
		t.Fatalf("read_uncommitted fetch: offset %d code %d, want -1", off, code)
	}
}

// TestAPITxnVerifyOnly: AddPartitionsToTxn v4 verify_only (KIP-890 part
// 1, the partition leaders' question) answers NONE for a partition of the
// open transaction, INVALID_TXN_STATE for another, PRODUCER_FENCED for an
// old epoch; ApiVersions still advertises only v0-3.
func TestAPITxnVerifyOnly(t *testing.T) {
	c := txnCluster(t, 1)
	c.CreateTopic(t, "txn-v", 2, 1)
	cl := txnClient(t, c, "v-1", "txn-v")
	adm := adminClient(t, c)
	if err := cl.BeginTransaction(); err != nil {
		t.Fatal(err)
	}
	produceTxn(t, cl, 0, "x")
	st := waitTxnState(t, adm, "v-1", "Ongoing")
	rc := brokertest.DialRaw(t, c.Addr(0))
	av, err := rc.RoundTrip(kmsg.NewPtrApiVersionsRequest())
	if err != nil {
		t.Fatal(err)
	}
	for _, k := range av.(*kmsg.ApiVersionsResponse).ApiKeys {
		if k.ApiKey == 24 && k.MaxVersion != 3 {
			t.Fatalf("AddPartitionsToTxn advertised up to v%d", k.MaxVersion)
		}
	}
	verify := func(epoch int16) *kmsg.AddPartitionsToTxnResponse {
		t.Helper()
		req := kmsg.NewPtrAddPartitionsToTxnRequest()
		req.Version = 4
		tx := kmsg.NewAddPartitionsToTxnRequestTransaction()
		tx.TransactionalID, tx.ProducerID, tx.ProducerEpoch, tx.VerifyOnly = "v-1", st.ProducerID, epoch, true
		tt := kmsg.NewAddPartitionsToTxnRequestTransactionTopic()
		tt.Topic, tt.Partitions = "txn-v", []int32{0, 1}
		tx.Topics = append(tx.Topics, tt)
		req.Transactions = append(req.Transactions, tx)
		resp, err := rc.RoundTrip(req)
		if err != nil {
			t.Fatal(err)
		}
		return resp.(*kmsg.AddPartitionsToTxnResponse)
	}
	r := verify(st.ProducerEpoch)
	ps := r.Transactions[0].Topics[0].Partitions
	if r.ErrorCode != 0 || len(ps) != 2 || ps[0].ErrorCode != 0 || ps[1].ErrorCode != kerr.InvalidTxnState.Code {
		t.Fatalf("verify: %+v", r)
	}
	r = verify(st.ProducerEpoch - 1)
	if ps := r.Transactions[0].Topics[0].Partitions; ps[0].ErrorCode != kerr.ProducerFenced.Code {
		t.Fatalf("verify with an old epoch: %+v", r)
	}
	// Another broker's inter-broker client (peer) negotiates v4.
	pc := peer.New(c.Addr(0), "txn-verify-test")
	defer pc.Close()
	req := kmsg.NewPtrAddPartitionsToTxnRequest()
	tx := kmsg.NewAddPartitionsToTxnRequestTransaction()
	tx.TransactionalID, tx.ProducerID, tx.ProducerEpoch, tx.VerifyOnly = "v-1", st.ProducerID, st.ProducerEpoch, true
	tt := kmsg.NewAddPartitionsToTxnRequestTransactionTopic()
	tt.Topic, tt.Partitions = "txn-v", []int32{0}
	tx.Topics = append(tx.Topics, tt)
	req.Transactions = append(req.Transactions, tx)
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	kresp, err := pc.Request(ctx, req)
	if err != nil {
		t.Fatalf("peer verify: %v", err)
	}
	if resp := kresp.(*kmsg.AddPartitionsToTxnResponse); req.Version != 4 || len(resp.Transactions) != 1 ||
		resp.Transactions[0].Topics[0].Partitions[0].ErrorCode != 0 {
		t.Fatalf("peer verify at v%d: %+v", req.Version, resp)
	}
}
