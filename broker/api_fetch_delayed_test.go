package broker_test

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kmsg"

	"samsa/broker/brokertest"
)

// TestAPIFetchDelayedReadCommitted pins what a parked (delayed) fetch
// answers, the contract handleFetch's plan / read-and-wait / build-response
// split must keep: every purgatory re-read starts again at the requested
// fetch offset, and the answer's records, high watermark and last stable
// offset all come from the read that completed the wait, never from the
// read before parking. A read_committed fetch parks while the only data is
// an open transaction (its last stable offset is 0 then), and the commit
// marker wakes it with the batch at offset 0 and a last stable offset past
// it; a read_uncommitted fetch of the same partition is answered at once.
func TestAPIFetchDelayedReadCommitted(t *testing.T) {
	c := brokertest.NewCluster(t, 1,
		brokertest.WithProperty("transaction.state.log.num.partitions", "1"),
		brokertest.WithProperty("offsets.topic.num.partitions", "1"))
	c.CreateTopic(t, "dl", 1, 1)
	c.WaitForLeader(t, "dl", 0)
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	tc, err := kgo.NewClient(kgo.SeedBrokers(c.Addrs()...), kgo.TransactionalID("dl-txn"), kgo.RecordRetries(5))
	if err != nil {
		t.Fatal(err)
	}
	defer tc.Close()
	if err := tc.BeginTransaction(); err != nil {
		t.Fatal(err)
	}
	if err := tc.ProduceSync(ctx, &kgo.Record{Topic: "dl", Partition: 0, Value: []byte("a")}).FirstErr(); err != nil {
		t.Fatalf("transactional produce: %v", err)
	}

	fetch := func(iso int8, maxWait int32) kmsg.FetchResponseTopicPartition {
		rc := brokertest.DialRaw(t, c.Addr(0))
		req := kmsg.NewPtrFetchRequest()
		req.SetVersion(11)
		req.ReplicaID, req.IsolationLevel = -1, iso
		req.MaxWaitMillis, req.MinBytes, req.MaxBytes = maxWait, 1, 1<<20
		ft := kmsg.NewFetchRequestTopic()
		ft.Topic = "dl"
		fp := kmsg.NewFetchRequestTopicPartition()
		fp.PartitionMaxBytes, fp.CurrentLeaderEpoch, fp.LogStartOffset = 1<<20, -1, -1
		ft.Partitions = append(ft.Partitions, fp)
		req.Topics = append(req.Topics, ft)
		kr, err := rc.RoundTrip(req)
		if err != nil {
			t.Errorf("fetch: %v", err)
			return kmsg.FetchResponseTopicPartition{}
		}
		return kr.(*kmsg.FetchResponse).Topics[0].Partitions[0]
	}
	firstBatch := func(p kmsg.FetchResponseTopicPartition) (kmsg.RecordBatch, error) {
		var b kmsg.RecordBatch
		if len(p.RecordBatches) == 0 {
			return b, fmt.Errorf("no records")
		}
		return b, b.ReadFrom(p.RecordBatches)
	}

	// read_uncommitted sees the open transaction's batch at once.
	p := fetch(0, 20000)
	if p.ErrorCode != 0 || p.HighWatermark != 1 || p.LastStableOffset != 0 {
		t.Fatalf("read_uncommitted: error %d, HW %d, LSO %d; want 0, 1, 0", p.ErrorCode, p.HighWatermark, p.LastStableOffset)
	}
	if b, err := firstBatch(p); err != nil || b.FirstOffset != 0 {
		t.Fatalf("read_uncommitted batch: %+v %v", b, err)
	}

	// read_committed has nothing below the LSO (0): it parks.
	done := make(chan kmsg.FetchResponseTopicPartition, 1)
	go func() { done <- fetch(1, 30000) }()
	brokertest.WaitFor(t, 10*time.Second, func() error {
		if c.Broker(0).Replicas().Fetch.Size() == 0 {
			return fmt.Errorf("read_committed fetch not parked")
		}
		return nil
	})
	if err := tc.EndTransaction(ctx, kgo.TryCommit); err != nil {
		t.Fatalf("commit: %v", err)
	}
	select {
	case p = <-done:
	case <-time.After(25 * time.Second):
		t.Fatal("parked read_committed fetch not woken by the commit marker")
	}
	if p.ErrorCode != 0 {
		t.Fatalf("read_committed after commit: error %d", p.ErrorCode)
	}
	// Before parking the LSO was 0 and nothing was readable: an answer
	// with the pre-wait offsets would say LSO 0 here.
	if p.LastStableOffset < 1 || p.LastStableOffset != p.HighWatermark {
		t.Fatalf("read_committed after commit: HW %d, LSO %d; want LSO = HW >= 1 (captured after the wait)", p.HighWatermark, p.LastStableOffset)
	}
	if len(p.AbortedTransactions) != 0 {
		t.Fatalf("committed transaction listed as aborted: %+v", p.AbortedTransactions)
	}
	b, err := firstBatch(p)
	if err != nil || b.FirstOffset != 0 || b.Attributes&0x20 != 0 {
		t.Fatalf("read_committed first batch: offset %d, attributes %#x, %v; want the data batch at 0", b.FirstOffset, b.Attributes, err)
	}
}
