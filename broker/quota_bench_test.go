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
	rc := benchTopic(b, c, "bench", 1)
	admin := c.Admin(b, brokertest.SaramaConfig(sarama.V2_8_0_0))
	ent := []sarama.QuotaEntityComponent{{EntityType: sarama.QuotaEntityClientID, MatchType: sarama.QuotaMatchExact, Name: "someone-else"}}
	if err := admin.AlterClientQuotas(ent, sarama.ClientQuotasOp{Key: "producer_byte_rate", Value: 1}, false); err != nil {
		b.Fatal(err)
	}
	batch := benchBatch(b, 100, 100)
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
		if resp := benchProduce(b, rc, "bench", 1, batch); resp.ThrottleMillis != 0 {
			b.Fatalf("unlimited client throttled %d ms", resp.ThrottleMillis)
		}
	}
}
