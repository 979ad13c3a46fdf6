package broker_test

import (
	"context"
	"fmt"
	"os/exec"
	"strings"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kmsg"

	"samsa/broker/brokertest"
	"samsa/broker/record"
	"samsa/zkutil"
)

// initProducerID sends InitProducerId at version v (no transactional id).
func initProducerID(t *testing.T, rc *brokertest.RawConn, v int16, pid int64, epoch int16) *kmsg.InitProducerIDResponse {
	t.Helper()
	req := kmsg.NewPtrInitProducerIDRequest()
	req.Version = v
	req.TransactionTimeoutMillis = 60000
	req.ProducerID, req.ProducerEpoch = pid, epoch
	resp, err := rc.RoundTrip(req)
	if err != nil {
		t.Fatalf("InitProducerId v%d: %v", v, err)
	}
	return resp.(*kmsg.InitProducerIDResponse)
}

// TestAPIInitProducerID: Kafka 2.8 TransactionCoordinator.handleInitProducerId
// with a null transactional id allocates a new producer id with epoch 0 for
// every request (v0-4), from blocks of 1000 in /latest_producer_id_block.
func TestAPIInitProducerID(t *testing.T) {
	c := brokertest.NewCluster(t, 1)
	rc := brokertest.DialRaw(t, c.Addr(0))
	seen := map[int64]bool{}
	for v := int16(0); v <= 4; v++ {
		r := initProducerID(t, rc, v, -1, -1)
		if r.ErrorCode != 0 || r.ProducerID < 0 || r.ProducerEpoch != 0 || seen[r.ProducerID] {
			t.Fatalf("v%d: %+v (seen %v)", v, r, seen)
		}
		seen[r.ProducerID] = true
	}
	// v3+ with the current id and epoch: still a new id (no transactional
	// id, so no epoch bump in 2.8).
	r := initProducerID(t, rc, 4, 0, 0)
	if r.ErrorCode != 0 || seen[r.ProducerID] || r.ProducerEpoch != 0 {
		t.Fatalf("re-init: %+v", r)
	}
	if r := initProducerID(t, rc, 4, 5, -1); r.ErrorCode != kerr.InvalidRequest.Code {
		t.Fatalf("id without epoch: error %d, want INVALID_REQUEST", r.ErrorCode)
	}
	zk := c.ZooKeeper(t)
	data, _, err := zk.Get(zkutil.LatestProducerIDBlockPath())
	if err != nil {
		t.Fatal(err)
	}
	blk, err := zkutil.DecodeProducerIDBlock(data)
	if err != nil || blk.BlockEnd-blk.BlockStart+1 != zkutil.ProducerIDBlockSize || blk.BrokerID != c.Broker(0).ID() {
		t.Fatalf("producer id block %+v, %v (%s)", blk, err, data)
	}
	// A second broker process would take the next block: take one here and
	// check the broker's ids stay inside its own.
	next, err := zk.AllocateProducerIDBlock(99)
	if err != nil || next.BlockStart != blk.BlockEnd+1 {
		t.Fatalf("next block %+v, %v", next, err)
	}
	if r := initProducerID(t, rc, 4, -1, -1); r.ProducerID < blk.BlockStart || r.ProducerID > blk.BlockEnd {
		t.Fatalf("producer id %d outside the broker's block %+v", r.ProducerID, blk)
	}
}

// idemRecords builds one idempotent batch of n records.
func idemRecords(t *testing.T, pid int64, epoch int16, seq int32, n int) []byte {
	t.Helper()
	recs := make([]record.Record, n)
	for i := range recs {
		recs[i] = record.Record{OffsetDelta: int32(i), Value: []byte(fmt.Sprintf("v-%d-%d", pid, int(seq)+i))}
	}
	h := record.NewBuildHeader(0, time.Now().UnixMilli())
	h.ProducerID, h.ProducerEpoch, h.BaseSequence = pid, epoch, seq
	b, err := record.Build(h, recs, record.CodecNone)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// produceRaw sends one batch to topic-0 with acks=all and returns the
// partition's error code and base offset.
func produceRaw(t *testing.T, rc *brokertest.RawConn, topic string, batch []byte) (int16, int64) {
	t.Helper()
	resp, err := rc.RoundTrip(brokertest.ProduceRequest(8, -1, 10000, topic, 0, batch))
	if err != nil {
		t.Fatalf("produce: %v", err)
	}
	p := resp.(*kmsg.ProduceResponse).Topics[0].Partitions[0]
	return p.ErrorCode, p.BaseOffset
}

func listEndOffset(t *testing.T, rc *brokertest.RawConn, topic string) int64 {
	t.Helper()
	req := kmsg.NewPtrListOffsetsRequest()
	req.Version = 4
	req.ReplicaID = -1
	rt := kmsg.NewListOffsetsRequestTopic()
	rt.Topic = topic
	rp := kmsg.NewListOffsetsRequestTopicPartition()
	rp.Timestamp = -1
	rp.CurrentLeaderEpoch = -1
	rt.Partitions = append(rt.Partitions, rp)
	req.Topics = append(req.Topics, rt)
	var leo int64
	brokertest.WaitFor(t, 30*time.Second, func() error {
		resp, err := rc.RoundTrip(req)
		if err != nil {
			return err
		}
		p := resp.(*kmsg.ListOffsetsResponse).Topics[0].Partitions[0]
		if p.ErrorCode != 0 {
			return kerr.ErrorForCode(p.ErrorCode)
		}
		leo = p.Offset
		return nil
	})
	return leo
}

// TestAPIProduceIdempotent: the same batch produced twice is appended once
// and both answers carry its offset (Kafka 2.8 duplicate detection over
// the last five batches); a gap in the sequence is
// OUT_OF_ORDER_SEQUENCE_NUMBER, an older epoch INVALID_PRODUCER_EPOCH, an
// unknown producer not starting at 0 UNKNOWN_PRODUCER_ID. The state
// survives a broker restart (snapshot at close) and a kill (replay).
func TestAPIProduceIdempotent(t *testing.T) {
	c := brokertest.NewCluster(t, 1)
	c.CreateTopic(t, "idem", 1, 1)
	c.WaitForLeader(t, "idem", 0)
	rc := brokertest.DialRaw(t, c.Addr(0))
	pid := initProducerID(t, rc, 4, -1, -1).ProducerID

	code, first := produceRaw(t, rc, "idem", idemRecords(t, pid, 0, 0, 3))
	if code != 0 || first != 0 {
		t.Fatalf("first produce: error %d offset %d", code, first)
	}
	code, again := produceRaw(t, rc, "idem", idemRecords(t, pid, 0, 0, 3))
	if code != 0 || again != first {
		t.Fatalf("retried produce: error %d offset %d, want 0 and %d", code, again, first)
	}
	if leo := listEndOffset(t, rc, "idem"); leo != 3 {
		t.Fatalf("log end offset %d after a duplicate, want 3", leo)
	}
	if code, _ := produceRaw(t, rc, "idem", idemRecords(t, pid, 0, 5, 1)); code != kerr.OutOfOrderSequenceNumber.Code {
		t.Fatalf("sequence gap: error %d, want OUT_OF_ORDER_SEQUENCE_NUMBER", code)
	}
	if code, off := produceRaw(t, rc, "idem", idemRecords(t, pid, 1, 0, 2)); code != 0 || off != 3 {
		t.Fatalf("new epoch: error %d offset %d", code, off)
	}
	if code, _ := produceRaw(t, rc, "idem", idemRecords(t, pid, 0, 3, 1)); code != kerr.InvalidProducerEpoch.Code {
		t.Fatalf("stale epoch: error %d, want INVALID_PRODUCER_EPOCH", code)
	}
	if code, _ := produceRaw(t, rc, "idem", idemRecords(t, pid+1, 0, 7, 1)); code != kerr.UnknownProducerID.Code {
		t.Fatalf("unknown producer: error %d, want UNKNOWN_PRODUCER_ID", code)
	}

	for _, restart := range []string{"restart", "kill"} {
		if restart == "restart" {
			c.Restart(0)
		} else {
			c.Kill(0)
			c.Restart(0)
		}
		c.WaitForLeader(t, "idem", 0)
		rc = brokertest.DialRaw(t, c.Addr(0))
		leo := listEndOffset(t, rc, "idem")
		// The last batch of epoch 1 (sequences 0-1 at offset 3) is known.
		if code, off := produceRaw(t, rc, "idem", idemRecords(t, pid, 1, 0, 2)); code != 0 || off != 3 {
			t.Fatalf("%s: retry of the last batch: error %d offset %d, want offset 3", restart, code, off)
		}
		if got := listEndOffset(t, rc, "idem"); got != leo {
			t.Fatalf("%s: duplicate appended (log end %d -> %d)", restart, leo, got)
		}
		if code, _ := produceRaw(t, rc, "idem", idemRecords(t, pid, 0, 3, 1)); code != kerr.InvalidProducerEpoch.Code {
			t.Fatalf("%s: stale epoch: error %d", restart, code)
		}
	}
}

// TestAPIFranzGoIdempotentDefault: kgo produces idempotently by default
// once InitProducerId is advertised; records go in once, in order, and
// read back.
func TestAPIFranzGoIdempotentDefault(t *testing.T) {
	c := brokertest.NewCluster(t, 1)
	c.CreateTopic(t, "kgo-idem", 2, 1)
	c.WaitForLeader(t, "kgo-idem", 0)
	c.WaitForLeader(t, "kgo-idem", 1)
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	cl, err := kgo.NewClient(kgo.SeedBrokers(c.Addrs()...), kgo.DefaultProduceTopic("kgo-idem"))
	if err != nil {
		t.Fatal(err)
	}
	defer cl.Close()
	const n = 500
	var recs []*kgo.Record
	for i := range n {
		recs = append(recs, &kgo.Record{Key: []byte(fmt.Sprintf("k%d", i%10)), Value: []byte(fmt.Sprintf("v%d", i))})
	}
	if err := cl.ProduceSync(ctx, recs...).FirstErr(); err != nil {
		t.Fatalf("produce: %v", err)
	}
	if id, epoch, err := cl.ProducerID(ctx); err != nil || id < 0 || epoch != 0 {
		t.Fatalf("kgo producer id %d epoch %d, %v: the client did not produce idempotently", id, epoch, err)
	}
	cons, err := kgo.NewClient(kgo.SeedBrokers(c.Addrs()...), kgo.ConsumeTopics("kgo-idem"),
		kgo.ConsumeResetOffset(kgo.NewOffset().AtStart()), kgo.FetchMaxWait(200*time.Millisecond))
	if err != nil {
		t.Fatal(err)
	}
	defer cons.Close()
	seen := map[string]int{}
	for i := 0; i < 200 && len(seen) < n; i++ {
		fs := cons.PollFetches(ctx)
		if err := ctx.Err(); err != nil {
			t.Fatalf("consumed %d of %d: %v", len(seen), n, err)
		}
		fs.EachRecord(func(r *kgo.Record) {
			if r.ProducerID < 0 {
				t.Errorf("record %s has no producer id", r.Value)
			}
			seen[string(r.Value)]++
		})
	}
	for i := range n {
		if v := fmt.Sprintf("v%d", i); seen[v] != 1 {
			t.Fatalf("%s read %d times", v, seen[v])
		}
	}
}

// TestAPIKcatIdempotentProduce: librdkafka (kcat) with
// enable.idempotence=true acquires a producer id and produces; the records
// read back once each. Skipped without kcat.
func TestAPIKcatIdempotentProduce(t *testing.T) {
	kcat, err := exec.LookPath("kcat")
	if err != nil {
		t.Skip("kcat not installed")
	}
	c := brokertest.NewCluster(t, 1)
	c.CreateTopic(t, "kcat-idem", 1, 1)
	c.WaitForLeader(t, "kcat-idem", 0)
	var in strings.Builder
	const n = 200
	for i := range n {
		fmt.Fprintf(&in, "m%d\n", i)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	prod := exec.CommandContext(ctx, kcat, "-b", c.Addr(0), "-t", "kcat-idem", "-P", "-p", "0",
		"-X", "enable.idempotence=true", "-d", "eos")
	prod.Stdin = strings.NewReader(in.String())
	out, err := prod.CombinedOutput()
	if err != nil {
		t.Fatalf("kcat produce: %v\n%s", err, out)
	}
	if !strings.Contains(string(out), "Acquired PID") {
		t.Fatalf("kcat did not acquire a producer id:\n%s", out)
	}
	cons := exec.CommandContext(ctx, kcat, "-b", c.Addr(0), "-t", "kcat-idem", "-C", "-p", "0", "-o", "beginning", "-e", "-q")
	got, err := cons.Output()
	if err != nil {
		t.Fatalf("kcat consume: %v", err)
	}
	if string(got) != in.String() {
		t.Fatalf("read back %d bytes, want the %d produced records in order:\n%s", len(got), n, got)
	}
}

// TestAPIFindCoordinatorUnknownKeyType: an unknown key type is
// INVALID_REQUEST with a message.
func TestAPIFindCoordinatorUnknownKeyType(t *testing.T) {
	c := brokertest.NewCluster(t, 1)
	rc := brokertest.DialRaw(t, c.Addr(0))
	req := kmsg.NewPtrFindCoordinatorRequest()
	req.Version = 3
	req.CoordinatorKey, req.CoordinatorType = "txn-1", 7
	resp, err := rc.RoundTrip(req)
	if err != nil {
		t.Fatal(err)
	}
	r := resp.(*kmsg.FindCoordinatorResponse)
	if r.ErrorCode != kerr.InvalidRequest.Code || r.NodeID != -1 || r.ErrorMessage == nil {
		t.Fatalf("error %d node %d message %v, want INVALID_REQUEST, node -1 and a message", r.ErrorCode, r.NodeID, r.ErrorMessage)
	}
}
