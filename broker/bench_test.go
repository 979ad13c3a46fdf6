package broker_test

import (
	"slices"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kmsg"

	"samsa/broker/brokertest"
)

// benchProduceOn measures one connection producing 100 x 100 B batches
// with acks to a running one-broker cluster.
func benchProduceOn(b *testing.B, c *brokertest.Cluster, acks int16) {
	rc := benchTopic(b, c, "bench", 1)
	batch := benchBatch(b, 100, 100)
	lat := make([]time.Duration, 0, b.N) // per request, for the p50/p99 metrics
	b.SetBytes(int64(len(batch)))
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		start := time.Now()
		benchProduce(b, rc, "bench", acks, batch)
		lat = append(lat, time.Since(start))
	}
	b.StopTimer()
	reportLatency(b, lat)
}

// reportLatency reports the p50 and p99 of per-request latencies as the
// p50-µs and p99-µs benchmark metrics (bin/samsa-benchmark.sh reads them).
func reportLatency(b *testing.B, lat []time.Duration) {
	if len(lat) == 0 {
		return
	}
	p50, p99 := quantilesµs(lat)
	b.ReportMetric(p50, "p50-µs")
	b.ReportMetric(p99, "p99-µs")
}

// quantilesµs sorts lat and returns its p50 and p99 in µs (0, 0 when empty).
func quantilesµs(lat []time.Duration) (p50, p99 float64) {
	if len(lat) == 0 {
		return 0, 0
	}
	slices.Sort(lat)
	at := func(q float64) float64 {
		return float64(lat[min(len(lat)-1, int(q*float64(len(lat))))].Nanoseconds()) / 1e3
	}
	return at(0.50), at(0.99)
}

// BenchmarkAPIProduceAcks1 measures one connection producing 100 x 100 B
// record batches (≈10.9 KB) with acks=1 to a one-broker cluster.
func BenchmarkAPIProduceAcks1(b *testing.B) { benchProduceOn(b, brokertest.NewCluster(b, 1), 1) }

// BenchmarkAPIProduceAcksAll is the same with acks=all (ISR = {leader}).
func BenchmarkAPIProduceAcksAll(b *testing.B) { benchProduceOn(b, brokertest.NewCluster(b, 1), -1) }

// BenchmarkAPIFetch measures one connection fetching 1 MiB per request
// (Fetch v11, sendfile path) from a partition holding ~11 MB.
func BenchmarkAPIFetch(b *testing.B) {
	rc := benchTopic(b, brokertest.NewCluster(b, 1), "bench", 1)
	batch := benchBatch(b, 100, 100)
	for i := 0; i < 1000; i++ {
		benchProduce(b, rc, "bench", 1, batch)
	}
	b.ResetTimer()
	var total int64
	offset := int64(0)
	for i := 0; i < b.N; i++ {
		kr, err := rc.RoundTrip(benchFetchRequest("bench", offset, 1<<20))
		if err != nil {
			b.Fatal(err)
		}
		p := kr.(*kmsg.FetchResponse).Topics[0].Partitions[0]
		total += int64(len(p.RecordBatches))
		offset += int64(len(p.RecordBatches) / len(batch) * 100)
		if offset >= 100000 {
			offset = 0
		}
	}
	b.SetBytes(total / int64(b.N))
}

// BenchmarkAPIFetchPartitions measures a consumer fetch round trip over
// 1,000 idle partitions (one of them gets a batch before each fetch):
// "sessionless" names all 1,000 every time (epoch -1); "incremental" is a
// KIP-227 session after its first full fetch, naming none and answered
// with only the partition that changed.
func BenchmarkAPIFetchPartitions(b *testing.B) {
	const n = 1000
	c := brokertest.NewCluster(b, 1)
	rc := benchTopic(b, c, "benchp", n)
	batch := benchBatch(b, 10, 100)
	produce := func() { benchProduce(b, rc, "benchp", 1, batch) }
	fetch := func(id, epoch int32, all bool, offset int64) *kmsg.FetchResponse {
		req := kmsg.NewPtrFetchRequest()
		req.SetVersion(12)
		req.ReplicaID, req.MaxWaitMillis, req.MinBytes, req.MaxBytes = -1, 0, 0, 1<<20
		req.SessionID, req.SessionEpoch = id, epoch
		if all {
			ft := kmsg.NewFetchRequestTopic()
			ft.Topic = "benchp"
			for p := int32(0); p < n; p++ {
				fp := kmsg.NewFetchRequestTopicPartition()
				fp.Partition, fp.FetchOffset, fp.PartitionMaxBytes, fp.CurrentLeaderEpoch = p, 0, 1<<20, -1
				if p == 0 {
					fp.FetchOffset = offset
				}
				ft.Partitions = append(ft.Partitions, fp)
			}
			req.Topics = append(req.Topics, ft)
		} else {
			ft := kmsg.NewFetchRequestTopic()
			ft.Topic = "benchp"
			fp := kmsg.NewFetchRequestTopicPartition()
			fp.Partition, fp.FetchOffset, fp.PartitionMaxBytes, fp.CurrentLeaderEpoch = 0, offset, 1<<20, -1
			ft.Partitions = append(ft.Partitions, fp)
			req.Topics = append(req.Topics, ft)
		}
		kr, err := rc.RoundTrip(req)
		if err != nil {
			b.Fatal(err)
		}
		return kr.(*kmsg.FetchResponse)
	}
	b.Run("sessionless", func(b *testing.B) {
		for i := 0; i < b.N; i++ {
			b.StopTimer()
			produce()
			b.StartTimer()
			off := c.Broker(0).Replicas().Partition(replicaTP("benchp", 0)).Log().LogEndOffset() - 10
			if r := fetch(0, -1, true, off); len(r.Topics) != 1 || len(r.Topics[0].Partitions) != n {
				b.Fatalf("answered %d topics", len(r.Topics))
			}
		}
	})
	b.Run("incremental", func(b *testing.B) {
		r := fetch(0, 0, true, 0)
		id, epoch := r.SessionID, int32(1)
		if id == 0 {
			b.Fatal("no session")
		}
		for i := 0; i < b.N; i++ {
			b.StopTimer()
			produce()
			b.StartTimer()
			off := c.Broker(0).Replicas().Partition(replicaTP("benchp", 0)).Log().LogEndOffset() - 10
			r := fetch(id, epoch, false, off)
			epoch++
			if r.ErrorCode != 0 || len(r.Topics) != 1 || len(r.Topics[0].Partitions) != 1 {
				b.Fatalf("error %d, %d topics", r.ErrorCode, len(r.Topics))
			}
		}
	})
}

// BenchmarkAPIProduceKgoBatch measures one connection producing the
// batches franz-go builds under load: 9,000 x 100 B records (≈1 MB, kgo's
// ProducerBatchMaxBytes) per request, so the per-record costs of the
// append (CRC, deep walk, log write) dominate rather than the per-request
// ones BenchmarkAPIProduceAcks1 measures.
func BenchmarkAPIProduceKgoBatch(b *testing.B) {
	c := brokertest.NewCluster(b, 1)
	rc := benchTopic(b, c, "bench", 1)
	batch := benchBatch(b, 9000, 100)
	b.SetBytes(int64(len(batch)))
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		benchProduce(b, rc, "bench", 1, batch)
	}
}
