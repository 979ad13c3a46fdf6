package broker_test

import (
	"testing"

	"github.com/twmb/franz-go/pkg/kmsg"

	"samsa/broker/brokertest"
)

// BenchmarkAPIFetchSmall measures the per-request cost of a
// read_uncommitted consumer fetch of one ~10 KB batch (Fetch v11), where
// the handler's own work rather than the copy dominates.
func BenchmarkAPIFetchSmall(b *testing.B) {
	c := brokertest.NewCluster(b, 1)
	c.CreateTopic(b, "bench", 1, 1)
	rc := brokertest.DialRaw(b, c.Addr(0))
	batch := benchBatch(b, 100, 100)
	for i := 0; i < 200; i++ {
		req := kmsg.NewPtrProduceRequest()
		req.SetVersion(8)
		req.Acks, req.TimeoutMillis = 1, 10000
		rt := kmsg.NewProduceRequestTopic()
		rt.Topic = "bench"
		rp := kmsg.NewProduceRequestTopicPartition()
		rp.Records = append([]byte(nil), batch...)
		rt.Partitions = append(rt.Partitions, rp)
		req.Topics = append(req.Topics, rt)
		if _, err := rc.RoundTrip(req); err != nil {
			b.Fatal(err)
		}
	}
	b.ResetTimer()
	offset := int64(0)
	for i := 0; i < b.N; i++ {
		req := kmsg.NewPtrFetchRequest()
		req.SetVersion(11)
		req.ReplicaID, req.MaxWaitMillis, req.MinBytes, req.MaxBytes = -1, 0, 1, 1<<20
		ft := kmsg.NewFetchRequestTopic()
		ft.Topic = "bench"
		fp := kmsg.NewFetchRequestTopicPartition()
		fp.FetchOffset, fp.PartitionMaxBytes, fp.CurrentLeaderEpoch = offset, 1, -1
		ft.Partitions = append(ft.Partitions, fp)
		req.Topics = append(req.Topics, ft)
		if _, err := rc.RoundTrip(req); err != nil {
			b.Fatal(err)
		}
		offset += 100
		if offset >= 20000 {
			offset = 0
		}
	}
}
