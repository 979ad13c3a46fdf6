package brokertest

import (
	"fmt"
	"testing"
	"time"

	"github.com/IBM/sarama"
)

// ProduceConsume sends n keyed messages with a SyncProducer and reads them
// back with a partition consumer per partition, checking that each key
// stays on one partition and that per-partition order is kept.
func ProduceConsume(t *testing.T, c *Cluster, cfg *sarama.Config, topic string, partitions int32, n int) {
	t.Helper()
	p := c.SyncProducer(t, cfg)
	type sent struct {
		offset int64
		value  string
	}
	byPart := map[int32][]sent{}
	keyPart := map[string]int32{}
	for i := 0; i < n; i++ {
		key := fmt.Sprintf("key-%d", i%7)
		val := fmt.Sprintf("value-%d", i)
		part, off, err := p.SendMessage(&sarama.ProducerMessage{Topic: topic, Key: sarama.StringEncoder(key), Value: sarama.StringEncoder(val)})
		if err != nil {
			t.Fatalf("send %d: %v", i, err)
		}
		if prev, ok := keyPart[key]; ok && prev != part {
			t.Fatalf("key %s moved from partition %d to %d", key, prev, part)
		}
		keyPart[key] = part
		byPart[part] = append(byPart[part], sent{off, val})
	}
	cons, err := sarama.NewConsumer(c.Addrs(), cfg)
	if err != nil {
		t.Fatal(err)
	}
	defer cons.Close()
	for part, msgs := range byPart {
		pc, err := cons.ConsumePartition(topic, part, msgs[0].offset)
		if err != nil {
			t.Fatalf("consume %d: %v", part, err)
		}
		for i, want := range msgs {
			select {
			case m := <-pc.Messages():
				if m.Offset != want.offset || string(m.Value) != want.value {
					t.Fatalf("partition %d message %d: got offset %d %q, want %d %q", part, i, m.Offset, m.Value, want.offset, want.value)
				}
			case err := <-pc.Errors():
				t.Fatalf("partition %d: %v", part, err)
			case <-time.After(30 * time.Second):
				t.Fatalf("partition %d: timed out at message %d of %d", part, i, len(msgs))
			}
		}
		pc.Close()
	}
}
