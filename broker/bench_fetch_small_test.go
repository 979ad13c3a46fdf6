package broker_test

import (
	"testing"

	"samsa/broker/brokertest"
)

// BenchmarkAPIFetchSmall measures the per-request cost of a
// read_uncommitted consumer fetch of one ~10 KB batch (Fetch v11), where
// the handler's own work rather than the copy dominates.
func BenchmarkAPIFetchSmall(b *testing.B) {
	rc := benchTopic(b, brokertest.NewCluster(b, 1), "bench", 1)
	batch := benchBatch(b, 100, 100)
	for i := 0; i < 200; i++ {
		benchProduce(b, rc, "bench", 1, batch)
	}
	b.ResetTimer()
	offset := int64(0)
	for i := 0; i < b.N; i++ {
		if _, err := rc.RoundTrip(benchFetchRequest("bench", offset, 1)); err != nil {
			b.Fatal(err)
		}
		offset += 100
		if offset >= 20000 {
			offset = 0
		}
	}
}
