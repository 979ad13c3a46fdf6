package clustertest_test

import (
	"fmt"
	"testing"
	"time"

	"github.com/IBM/sarama"

	"samsa/broker/brokertest"
)

// TestAPICompactedTopic: with log.cleaner.enable the broker runs the
// storage cleaner, and a cleanup.policy=compact topic keeps (at least) the
// last value of every key while older duplicates go.
func TestAPICompactedTopic(t *testing.T) {
	c := brokertest.NewCluster(t, 1, brokertest.WithProperty("log.cleaner.backoff.ms", "50"))
	compact, seg, ratio := "compact", "1024", "0.01"
	c.CreateTopic(t, "cmp", 1, 1, map[string]*string{"cleanup.policy": &compact, "segment.bytes": &seg,
		"min.cleanable.dirty.ratio": &ratio})
	p := c.SyncProducer(t, nil)
	for i := 0; i < 300; i++ {
		if _, _, err := p.SendMessage(&sarama.ProducerMessage{Topic: "cmp", Key: sarama.StringEncoder(fmt.Sprint(i % 5)),
			Value: sarama.StringEncoder(fmt.Sprint(i))}); err != nil {
			t.Fatal(err)
		}
	}
	cons, err := sarama.NewConsumer(c.Addrs(), brokertest.SaramaConfig(sarama.V2_1_0_0))
	if err != nil {
		t.Fatal(err)
	}
	defer cons.Close()
	brokertest.WaitFor(t, 60*time.Second, func() error {
		pc, err := cons.ConsumePartition("cmp", 0, sarama.OffsetOldest)
		if err != nil {
			return err
		}
		defer pc.Close()
		n, last := 0, map[string]string{}
		for {
			select {
			case m := <-pc.Messages():
				n++
				last[string(m.Key)] = string(m.Value)
				if m.Offset == 299 {
					if n >= 200 {
						return fmt.Errorf("%d of 300 records still there", n)
					}
					for k := 0; k < 5; k++ {
						if want := fmt.Sprint(295 + k); last[fmt.Sprint(k)] != want {
							return fmt.Errorf("key %d: last value %q, want %s", k, last[fmt.Sprint(k)], want)
						}
					}
					return nil
				}
			case <-time.After(5 * time.Second):
				return fmt.Errorf("consumer stalled after %d records", n)
			}
		}
	})
}
