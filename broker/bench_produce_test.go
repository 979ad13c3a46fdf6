package broker_test

import (
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kmsg"

	"samsa/broker/brokertest"
)

// BenchmarkAPIProducePartitions measures one Produce request naming 4,000
// partitions with one batch each (one 1 KiB record): the per-partition
// work of the produce path (issue 18 point 3: at 12,000 partitions
// franz-go's default partitioner sends 64 KiB batches, 15× as many
// partition entries per produced MiB as at 6). rf=1/acks=1 is the leader's
// handler alone; rf=3/acks=all sends one request to each of the three
// leaders at once and adds the followers' fetches and appends of those
// 4,000 partitions and the high-watermark waits, all in this process, so
// allocs/op is every broker's.
func BenchmarkAPIProducePartitions(b *testing.B) {
	for _, c := range []struct {
		brokers int
		acks    int16
	}{{1, 1}, {3, -1}} {
		b.Run(fmt.Sprintf("partitions=4000/rf=%d/acks=%d", c.brokers, c.acks), func(b *testing.B) {
			benchProducePartitions(b, c.brokers, c.acks, 4000)
		})
	}
}

func benchProducePartitions(b *testing.B, brokers int, acks int16, partitions int32) {
	c := brokertest.NewCluster(b, brokers)
	c.CreateTopic(b, "bench", partitions, int16(brokers))
	// One request per leader, naming the partitions it leads, sent
	// together as a client's would be.
	batch := benchBatch(b, 1, 1024)
	reqs := make([]*kmsg.ProduceRequest, brokers)
	conns := make([]*brokertest.RawConn, brokers)
	for i := range reqs {
		reqs[i] = kmsg.NewPtrProduceRequest()
		reqs[i].SetVersion(8)
		reqs[i].Acks, reqs[i].TimeoutMillis = acks, 30000
		rt := kmsg.NewProduceRequestTopic()
		rt.Topic = "bench"
		reqs[i].Topics = append(reqs[i].Topics, rt)
		conns[i] = brokertest.DialRaw(b, c.Addr(i))
	}
	for p := range partitions {
		i := c.Index(c.WaitForLeader(b, "bench", p))
		rp := kmsg.NewProduceRequestTopicPartition()
		rp.Partition, rp.Records = p, batch
		reqs[i].Topics[0].Partitions = append(reqs[i].Topics[0].Partitions, rp)
	}
	failed := make([]int, brokers)
	errs := make([]error, brokers)
	produce := func() (n int) {
		var wg sync.WaitGroup
		for i := range reqs {
			wg.Go(func() { failed[i], errs[i] = produceFailures(conns[i], reqs[i]) })
		}
		wg.Wait()
		for i := range reqs {
			if errs[i] != nil {
				b.Fatal(errs[i])
			}
			n += failed[i]
		}
		return n
	}
	// Warm until every partition answers (its log open, its followers
	// caught up), bounded.
	deadline := time.Now().Add(2 * time.Minute)
	for n := produce(); n > 0; n = produce() {
		if time.Now().After(deadline) {
			b.Fatalf("%d of %d partitions still failing after 2 minutes", n, partitions)
		}
	}
	b.SetBytes(int64(int(partitions) * len(batch)))
	b.ReportAllocs()
	b.ResetTimer()
	for range b.N {
		if n := produce(); n > 0 {
			b.Fatalf("%d partitions failed", n)
		}
	}
	b.StopTimer()
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N*int(partitions)), "ns/partition")
}

// produceFailures sends req on rc and counts the partitions answering an
// error.
func produceFailures(rc *brokertest.RawConn, req *kmsg.ProduceRequest) (int, error) {
	kr, err := rc.RoundTrip(req)
	if err != nil {
		return 0, err
	}
	n := 0
	for _, t := range kr.(*kmsg.ProduceResponse).Topics {
		for _, p := range t.Partitions {
			if p.ErrorCode != 0 {
				n++
			}
		}
	}
	return n, nil
}
