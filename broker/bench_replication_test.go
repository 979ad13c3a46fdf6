package broker_test

import (
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kmsg"

	"samsa/broker/brokertest"
	"samsa/broker/wire"
)

// BenchmarkAPIProduceAcksAllRF3 measures the replication round trip: one
// connection produces one small batch at a time with acks=all to a
// partition replicated on 3 brokers, so every operation is a leader
// append, the followers' parked fetches answering, their next fetches
// moving the high watermark, and the produce response. Profile it with
// -cpuprofile or -trace (bin/samsa-benchmark.sh's e2e figures at RF=3
// are bounded by this path).
func BenchmarkAPIProduceAcksAllRF3(b *testing.B) {
	rc := benchTopic(b, brokertest.NewCluster(b, 3), "bench", 1)
	batch := benchBatch(b, 1, 100)
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		benchProduce(b, rc, "bench", -1, batch)
	}
}

// BenchmarkAPIProduceAcksAllRF3Pipelined is BenchmarkAPIProduceAcksAllRF3
// with 5 requests in flight on the one connection (the Java producer's and
// franz-go's default), so it shows whether the broker overlaps the
// replication waits of requests queued on a connection.
func BenchmarkAPIProduceAcksAllRF3Pipelined(b *testing.B) {
	const inFlight = 5
	rc := benchTopic(b, brokertest.NewCluster(b, 3), "bench", 1)
	req := benchProduceRequest("bench", -1, benchBatch(b, 1, 100))
	if err := rc.Conn().SetDeadline(time.Now().Add(10 * time.Minute)); err != nil {
		b.Fatal(err)
	}
	id := "raw"
	send := func(corr int32) {
		if _, err := rc.Conn().Write(wire.AppendRequest(nil, req, corr, &id)); err != nil {
			b.Fatal(err)
		}
	}
	b.ResetTimer()
	sent := 0
	for ; sent < min(inFlight, b.N); sent++ {
		send(int32(sent))
	}
	for i := 0; i < b.N; i++ {
		frame, err := wire.ReadFrame(rc.Conn(), 1<<20, nil)
		if err != nil {
			b.Fatal(err)
		}
		kr, err := wire.ParseResponse(frame, req, int32(i))
		if err != nil {
			b.Fatal(err)
		}
		if code := kr.(*kmsg.ProduceResponse).Topics[0].Partitions[0].ErrorCode; code != 0 {
			b.Fatalf("code %d", code)
		}
		if sent < b.N {
			send(int32(sent))
			sent++
		}
	}
}
