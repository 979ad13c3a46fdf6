package clustertest_test

import (
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/IBM/sarama"

	"samsa/broker/brokertest"
)

// TestClusterSaramaRoundTrip: on 3 brokers with RF 3 and acks=all, Sarama
// producers and consumers of several versions and every codec round-trip
// keyed messages (keys keep their partition, per-partition order kept).
func TestClusterSaramaRoundTrip(t *testing.T) {
	c := brokertest.NewCluster(t, 3)
	codecs := []sarama.CompressionCodec{sarama.CompressionNone, sarama.CompressionGZIP,
		sarama.CompressionSnappy, sarama.CompressionLZ4, sarama.CompressionZSTD}
	for _, v := range []sarama.KafkaVersion{sarama.V0_10_2_0, sarama.V2_1_0_0, sarama.V2_8_0_0, sarama.MaxVersion} {
		for _, codec := range codecs {
			if codec == sarama.CompressionZSTD && !v.IsAtLeast(sarama.V2_1_0_0) {
				continue
			}
			name := fmt.Sprintf("%s-%s", v, codec)
			t.Run(name, func(t *testing.T) {
				topic := "rt-" + name
				c.CreateTopic(t, topic, 3, 3)
				cfg := brokertest.SaramaConfig(v)
				cfg.Producer.RequiredAcks = sarama.WaitForAll
				cfg.Producer.Compression = codec
				brokertest.ProduceConsume(t, c, cfg, topic, 3, 60)
			})
		}
	}
}

// TestClusterSaramaAsyncProducer: the async producer with acks=all on RF 3
// gets a success for every message and the consumer reads them all.
func TestClusterSaramaAsyncProducer(t *testing.T) {
	c := brokertest.NewCluster(t, 3)
	c.CreateTopic(t, "async", 3, 3)
	cfg := brokertest.SaramaConfig(sarama.V2_8_0_0)
	cfg.Producer.RequiredAcks = sarama.WaitForAll
	// Batches of 10, and a frequency so a remainder below 10 is sent too: with Messages
	// alone Sarama never flushes a short batch, not even in Close (it says so in its
	// config warning), which once hung this test with 298 of 300 answers.
	cfg.Producer.Flush.Messages = 10
	cfg.Producer.Flush.Frequency = 5 * time.Millisecond
	p, err := sarama.NewAsyncProducer(c.Addrs(), cfg)
	if err != nil {
		t.Fatal(err)
	}
	const n = 300
	var wg sync.WaitGroup
	wg.Add(1)
	counts := map[int32]int{}
	// Every answer is drained, errors included, so the input never blocks;
	// every wait below is bounded.
	go func() {
		defer wg.Done()
		for i := 0; i < n; i++ {
			select {
			case m := <-p.Successes():
				counts[m.Partition]++
			case err := <-p.Errors():
				t.Errorf("produce: %v", err)
			case <-time.After(30 * time.Second):
				t.Errorf("timed out after %d answers", i)
				return
			}
		}
	}()
	for i := 0; i < n; i++ {
		select {
		case p.Input() <- &sarama.ProducerMessage{Topic: "async", Key: sarama.StringEncoder(fmt.Sprint(i)), Value: sarama.StringEncoder(fmt.Sprint(i))}:
		case <-time.After(30 * time.Second):
			t.Fatalf("the producer took no input for 30 s after %d messages", i)
		}
	}
	wg.Wait()
	closed := make(chan error, 1)
	go func() { closed <- p.Close() }()
	select {
	case err := <-closed:
		if err != nil {
			t.Fatal(err)
		}
	case <-time.After(30 * time.Second):
		t.Fatal("the producer did not close within 30 s: answers to in-flight requests never came")
	}
	cl := c.Sarama(t, cfg)
	total := int64(0)
	for part := int32(0); part < 3; part++ {
		hw, err := cl.GetOffset("async", part, sarama.OffsetNewest)
		if err != nil {
			t.Fatal(err)
		}
		if hw != int64(counts[part]) {
			t.Errorf("partition %d: high watermark %d, %d acknowledged", part, hw, counts[part])
		}
		total += hw
	}
	if total != n {
		t.Fatalf("total %d, want %d", total, n)
	}
}
