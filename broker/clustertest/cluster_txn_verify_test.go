package clustertest_test

import (
	"errors"
	"net"
	"strconv"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"

	"samsa/broker/brokertest"
	"samsa/broker/wire"
	"samsa/zkutil"
)

// fakeCoordinator is a TCP listener speaking Kafka's protocol as a
// transaction coordinator that answers AddPartitionsToTxn v4 verify-only
// requests: partitions of topics in inTxn are in the ongoing transaction,
// others are not (INVALID_TXN_STATE). It answers the controller's
// LeaderAndIsr/UpdateMetadata/StopReplica with success, so the cluster can
// make it the leader of __transaction_state.
type fakeCoordinator struct {
	ln       net.Listener
	inTxn    map[string]bool
	verifies atomic.Int32
	wg       sync.WaitGroup
}

func startFakeCoordinator(t *testing.T, inTxn map[string]bool) *fakeCoordinator {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	f := &fakeCoordinator{ln: ln, inTxn: inTxn}
	// The broker keeps its verification connection open (a kept
	// inter-broker client), so the cleanup closes the accepted
	// connections too before waiting for their goroutines.
	var mu sync.Mutex
	var conns []net.Conn
	closed := false
	t.Cleanup(func() {
		ln.Close()
		mu.Lock()
		closed = true
		for _, c := range conns {
			c.Close()
		}
		mu.Unlock()
		f.wg.Wait()
	})
	f.wg.Add(1)
	go func() {
		defer f.wg.Done()
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			mu.Lock()
			conns = append(conns, c)
			if closed {
				c.Close()
			}
			mu.Unlock()
			f.wg.Add(1)
			go func() { defer f.wg.Done(); f.serve(c) }()
		}
	}()
	go func() { <-t.Context().Done(); ln.Close() }()
	return f
}

func (f *fakeCoordinator) serve(c net.Conn) {
	defer c.Close()
	for i := 0; i < 100000; i++ {
		frame, err := wire.ReadFrame(c, 16<<20, nil)
		if err != nil {
			return
		}
		req, err := wire.ParseRequest(frame)
		if err != nil && !errors.Is(err, wire.ErrUnsupportedVersion) {
			return
		}
		var resp kmsg.Response
		switch body := req.Body.(type) {
		case *kmsg.ApiVersionsRequest:
			r := body.ResponseKind().(*kmsg.ApiVersionsResponse)
			for _, k := range []int16{4, 5, 6, 18, 24} {
				kr := kmsg.RequestForKey(k)
				v := kmsg.NewApiVersionsResponseApiKey()
				v.ApiKey, v.MaxVersion = k, kr.MaxVersion()
				r.ApiKeys = append(r.ApiKeys, v)
			}
			resp = r
		case *kmsg.AddPartitionsToTxnRequest:
			f.verifies.Add(1)
			r := body.ResponseKind().(*kmsg.AddPartitionsToTxnResponse)
			for _, tx := range body.Transactions {
				rt := kmsg.NewAddPartitionsToTxnResponseTransaction()
				rt.TransactionalID = tx.TransactionalID
				for _, tt := range tx.Topics {
					rtt := kmsg.NewAddPartitionsToTxnResponseTransactionTopic()
					rtt.Topic = tt.Topic
					for _, p := range tt.Partitions {
						rp := kmsg.NewAddPartitionsToTxnResponseTransactionTopicPartition()
						rp.Partition = p
						if !tx.VerifyOnly || !f.inTxn[tt.Topic] {
							rp.ErrorCode = kerr.InvalidTxnState.Code
						}
						rtt.Partitions = append(rtt.Partitions, rp)
					}
					rt.Topics = append(rt.Topics, rtt)
				}
				r.Transactions = append(r.Transactions, rt)
			}
			resp = r
		default:
			resp = req.Body.ResponseKind() // LeaderAndIsr, UpdateMetadata, ...: no error
		}
		if _, err := c.Write(wire.AppendResponse(nil, req, resp)); err != nil {
			return
		}
	}
}

// TestClusterTxnVerifyKIP890: with transaction.partition.verification.enable
// (KIP-890 part 1, as Kafka 3.6) the leader asks the transaction
// coordinator (AddPartitionsToTxn v4, verify_only) before accepting a
// producer's first transactional batch in a partition; a partition not in
// the ongoing transaction is refused with INVALID_TXN_STATE (no hanging
// transaction); a positive answer is cached for the producer epoch, so the
// next batches ask nothing, until a marker ends the transaction.
func TestClusterTxnVerifyKIP890(t *testing.T) {
	c := brokertest.NewCluster(t, 1, brokertest.WithProperty("transaction.partition.verification.enable", "true"))
	fake := startFakeCoordinator(t, map[string]bool{"vok": true})
	zk := c.ZooKeeper(t)
	port := fake.ln.Addr().(*net.TCPAddr).Port
	if _, err := zk.RegisterBroker(zkutil.BrokerRegistration{ID: 99, JMXPort: -1, Timestamp: time.Now().UnixMilli(),
		Endpoints: []zkutil.Endpoint{{ListenerName: "PLAINTEXT", SecurityProtocol: "PLAINTEXT", Host: "127.0.0.1", Port: int32(port)}}}); err != nil {
		t.Fatal(err)
	}
	rc := brokertest.DialRaw(t, c.Addr(0))
	// Wait until the controller has taken broker 99 in (the broker's
	// metadata lists it).
	brokertest.WaitFor(t, 30*time.Second, func() error {
		resp, err := rc.RoundTrip(kmsg.NewPtrMetadataRequest())
		if err != nil {
			return err
		}
		for _, b := range resp.(*kmsg.MetadataResponse).Brokers {
			if b.NodeID == 99 {
				return nil
			}
		}
		return errors.New("broker 99 not in the metadata yet")
	})
	admin := c.Admin(t, nil)
	real := c.Broker(0).ID()
	for topic, ids := range map[string][]int32{"__transaction_state": {99}, "vok": {real}, "vbad": {real}} {
		createAssigned(t, admin, topic, map[int32][]int32{0: ids}, nil)
	}
	c.WaitForLeader(t, "vok", 0)
	c.WaitForLeader(t, "vbad", 0)
	if l := c.WaitForLeader(t, "__transaction_state", 0); l != 99 {
		t.Fatalf("__transaction_state led by %d, want the fake coordinator 99", l)
	}
	// Not in the transaction: refused, nothing appended.
	if code := produceTxnCode(t, rc, "vbad", 1000, 0, 0); code != kerr.InvalidTxnState.Code {
		t.Fatalf("partition outside the transaction: %v, want INVALID_TXN_STATE", kerr.ErrorForCode(code))
	}
	if hw := brokertest.ListLatest(t, rc, "vbad", 0); hw != 0 {
		t.Fatalf("refused batch appended: HW %d", hw)
	}
	// In the transaction: verified once, then cached.
	before := fake.verifies.Load()
	for seq := int32(0); seq < 3; seq++ {
		if code := produceTxnCode(t, rc, "vok", 1000, 0, seq); code != 0 {
			t.Fatalf("batch %d: %v", seq, kerr.ErrorForCode(code))
		}
	}
	if n := fake.verifies.Load() - before; n != 1 {
		t.Fatalf("%d verifications for three batches, want 1 (cached)", n)
	}
	if code := brokertest.WriteMarker(t, rc, "vok", 1000, 0, true, 0); code != 0 {
		t.Fatalf("marker: %v", kerr.ErrorForCode(code))
	}
	// The marker ended the transaction: the next one is verified again.
	if code := produceTxnCode(t, rc, "vok", 1000, 0, 3); code != 0 {
		t.Fatalf("next transaction: %v", kerr.ErrorForCode(code))
	}
	if n := fake.verifies.Load() - before; n != 2 {
		t.Fatalf("%d verifications after the marker, want 2", n)
	}
}

// produceTxnCode is txnProduce returning the partition's error code.
func produceTxnCode(t *testing.T, rc *brokertest.RawConn, topic string, pid int64, epoch int16, seq int32) int16 {
	t.Helper()
	req := txnProduceRequest(t, topic, pid, epoch, seq, true, "v"+strconv.Itoa(int(seq)))
	resp, err := rc.RoundTrip(req)
	if err != nil {
		t.Fatal(err)
	}
	return resp.(*kmsg.ProduceResponse).Topics[0].Partitions[0].ErrorCode
}
