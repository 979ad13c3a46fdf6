package broker_test

import (
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kmsg"

	"samsa/broker/brokertest"
	"samsa/broker/record"
)

// The benchmarks' shared set-up: a topic on a cluster with a raw
// connection to its leader, record batches, and the Produce and Fetch
// requests they send. The per-request helpers run inside timed loops, so
// they do no more than the inline code they replace (no b.Helper).

// benchBatch is one uncompressed v2 batch of n records of size bytes.
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

// benchTopic creates topic with partitions replicated on every broker of c,
// waits until partition 0 has its leader and full ISR, and returns a raw
// connection to that leader.
func benchTopic(b *testing.B, c *brokertest.Cluster, topic string, partitions int32) *brokertest.RawConn {
	b.Helper()
	c.CreateTopic(b, topic, partitions, int16(c.N()))
	leader := c.WaitForLeader(b, topic, 0)
	c.WaitForISR(b, topic, 0, c.N())
	return brokertest.DialRaw(b, c.Addr(c.Index(leader)))
}

// benchProduceRequest is a Produce v8 of a copy of batch to topic-0 (a
// fresh copy each time, as a client's request would be).
func benchProduceRequest(topic string, acks int16, batch []byte) *kmsg.ProduceRequest {
	req := kmsg.NewPtrProduceRequest()
	req.SetVersion(8)
	req.Acks, req.TimeoutMillis = acks, 10000
	rt := kmsg.NewProduceRequestTopic()
	rt.Topic = topic
	rp := kmsg.NewProduceRequestTopicPartition()
	rp.Records = append([]byte(nil), batch...)
	rt.Partitions = append(rt.Partitions, rp)
	req.Topics = append(req.Topics, rt)
	return req
}

// benchProduce sends benchProduceRequest on rc and fails b unless the
// partition answers without an error.
func benchProduce(b *testing.B, rc *brokertest.RawConn, topic string, acks int16, batch []byte) *kmsg.ProduceResponse {
	kr, err := rc.RoundTrip(benchProduceRequest(topic, acks, batch))
	if err != nil {
		b.Fatal(err)
	}
	resp := kr.(*kmsg.ProduceResponse)
	if code := resp.Topics[0].Partitions[0].ErrorCode; code != 0 {
		b.Fatalf("code %d", code)
	}
	return resp
}

// benchFetchRequest is a consumer's Fetch v11 (read_uncommitted, no wait,
// 1 MiB per response) of topic-0 from offset, at most partitionMax bytes
// of the partition.
func benchFetchRequest(topic string, offset int64, partitionMax int32) *kmsg.FetchRequest {
	req := kmsg.NewPtrFetchRequest()
	req.SetVersion(11)
	req.ReplicaID, req.MaxWaitMillis, req.MinBytes, req.MaxBytes = -1, 0, 1, 1<<20
	ft := kmsg.NewFetchRequestTopic()
	ft.Topic = topic
	fp := kmsg.NewFetchRequestTopicPartition()
	fp.FetchOffset, fp.PartitionMaxBytes, fp.CurrentLeaderEpoch = offset, partitionMax, -1
	ft.Partitions = append(ft.Partitions, fp)
	req.Topics = append(req.Topics, ft)
	return req
}
