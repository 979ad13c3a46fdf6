package broker_test

import (
	"testing"
	"time"

	"github.com/IBM/sarama"
	"github.com/twmb/franz-go/pkg/kmsg"

	"samsa/broker/brokertest"
)

// BenchmarkQuotaProduceAcks1Recorded is BenchmarkAPIProduceAcks1 while a
// producer_byte_rate quota exists for another client-id: every request of
// the benchmark's connection is recorded (unlimited bound) as Kafka does,
// so this is the enforcement path's cost without throttling.
func BenchmarkQuotaProduceAcks1Recorded(b *testing.B) {
	c := brokertest.NewCluster(b, 1)
	c.CreateTopic(b, "bench", 1, 1)
	admin := c.Admin(b, brokertest.SaramaConfig(sarama.V2_8_0_0))
	ent := []sarama.QuotaEntityComponent{{EntityType: sarama.QuotaEntityClientID, MatchType: sarama.QuotaMatchExact, Name: "someone-else"}}
	if err := admin.AlterClientQuotas(ent, sarama.ClientQuotasOp{Key: "producer_byte_rate", Value: 1}, false); err != nil {
		b.Fatal(err)
	}
	rc := brokertest.DialRaw(b, c.Addr(0))
	batch := benchBatch(b, 100, 100)
	produce := func() *kmsg.ProduceResponse {
		req := kmsg.NewPtrProduceRequest()
		req.SetVersion(8)
		req.Acks, req.TimeoutMillis = 1, 10000
		rt := kmsg.NewProduceRequestTopic()
		rt.Topic = "bench"
		rp := kmsg.NewProduceRequestTopicPartition()
		rp.Records = append([]byte(nil), batch...)
		rt.Partitions = append(rt.Partitions, rp)
		req.Topics = append(req.Topics, rt)
		kr, err := rc.RoundTrip(req)
		if err != nil {
			b.Fatal(err)
		}
		resp := kr.(*kmsg.ProduceResponse)
		if code := resp.Topics[0].Partitions[0].ErrorCode; code != 0 {
			b.Fatalf("code %d", code)
		}
		return resp
	}
	// Wait until the quota is enforced: someone-else is throttled on its
	// own connection.
	brokertest.WaitFor(b, 20*time.Second, func() error {
		if rawRoundTrip(b, c.Addr(0), "someone-else", brokertest.QuotaProduce(b, "bench", 1)).(*kmsg.ProduceResponse).ThrottleMillis <= 0 {
			return errWant(true)
		}
		return nil
	})
	b.SetBytes(int64(len(batch)))
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		if resp := produce(); resp.ThrottleMillis != 0 {
			b.Fatalf("unlimited client throttled %d ms", resp.ThrottleMillis)
		}
	}
}
