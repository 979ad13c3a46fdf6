package broker_test

import (
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kmsg"

	"samsa/broker/brokertest"
	"samsa/broker/record"
)

func benchBatch(b *testing.B, n, size int) []byte {
	recs := make([]record.Record, n)
	val := make([]byte, size)
	for i := range recs {
		recs[i] = record.Record{OffsetDelta: int32(i), Value: val}
	}
	batch, err := record.Build(record.NewBuildHeader(0, time.Now().UnixMilli()), recs, record.CodecNone)
	if err != nil {
		b.Fatal(err)
	}
	return batch
}

func benchProduce(b *testing.B, acks int16) {
	benchProduceOn(b, brokertest.NewCluster(b, 1), acks)
}

// benchProduceOn is benchProduce on a running one-broker cluster.
func benchProduceOn(b *testing.B, c *brokertest.Cluster, acks int16) {
	c.CreateTopic(b, "bench", 1, 1)
	rc := dialRaw(b, c.Addr(0))
	batch := benchBatch(b, 100, 100)
	b.SetBytes(int64(len(batch)))
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		req := kmsg.NewPtrProduceRequest()
		req.SetVersion(8)
		req.Acks, req.TimeoutMillis = acks, 10000
		rt := kmsg.NewProduceRequestTopic()
		rt.Topic = "bench"
		rp := kmsg.NewProduceRequestTopicPartition()
		rp.Records = append([]byte(nil), batch...)
		rt.Partitions = append(rt.Partitions, rp)
		req.Topics = append(req.Topics, rt)
		kr, err := rc.roundTrip(req)
		if err != nil {
			b.Fatal(err)
		}
		if code := kr.(*kmsg.ProduceResponse).Topics[0].Partitions[0].ErrorCode; code != 0 {
			b.Fatalf("code %d", code)
		}
	}
}

// BenchmarkAPIProduceAcks1 measures one connection producing 100 x 100 B
// record batches (≈10.9 KB) with acks=1 to a one-broker cluster.
func BenchmarkAPIProduceAcks1(b *testing.B) { benchProduce(b, 1) }

// BenchmarkAPIProduceAcksAll is the same with acks=all (ISR = {leader}).
func BenchmarkAPIProduceAcksAll(b *testing.B) { benchProduce(b, -1) }

// BenchmarkAPIFetch measures one connection fetching 1 MiB per request
// (Fetch v11, sendfile path) from a partition holding ~11 MB.
func BenchmarkAPIFetch(b *testing.B) {
	c := brokertest.NewCluster(b, 1)
	c.CreateTopic(b, "bench", 1, 1)
	rc := dialRaw(b, c.Addr(0))
	batch := benchBatch(b, 100, 100)
	for i := 0; i < 1000; i++ {
		req := kmsg.NewPtrProduceRequest()
		req.SetVersion(8)
		req.Acks, req.TimeoutMillis = 1, 10000
		rt := kmsg.NewProduceRequestTopic()
		rt.Topic = "bench"
		rp := kmsg.NewProduceRequestTopicPartition()
		rp.Records = append([]byte(nil), batch...)
		rt.Partitions = append(rt.Partitions, rp)
		req.Topics = append(req.Topics, rt)
		if _, err := rc.roundTrip(req); err != nil {
			b.Fatal(err)
		}
	}
	b.ResetTimer()
	var total int64
	offset := int64(0)
	for i := 0; i < b.N; i++ {
		req := kmsg.NewPtrFetchRequest()
		req.SetVersion(11)
		req.ReplicaID, req.MaxWaitMillis, req.MinBytes, req.MaxBytes = -1, 0, 1, 1<<20
		ft := kmsg.NewFetchRequestTopic()
		ft.Topic = "bench"
		fp := kmsg.NewFetchRequestTopicPartition()
		fp.FetchOffset, fp.PartitionMaxBytes, fp.CurrentLeaderEpoch = offset, 1<<20, -1
		ft.Partitions = append(ft.Partitions, fp)
		req.Topics = append(req.Topics, ft)
		kr, err := rc.roundTrip(req)
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
