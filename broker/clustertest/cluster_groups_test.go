package clustertest_test

import (
	"context"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/IBM/sarama"

	"samsa/broker/brokertest"
)

type countingHandler struct {
	mu    sync.Mutex
	seen  map[string]bool
	ready chan struct{}
	once  sync.Once
}

func (h *countingHandler) Setup(sarama.ConsumerGroupSession) error {
	h.once.Do(func() { close(h.ready) })
	return nil
}
func (h *countingHandler) Cleanup(sarama.ConsumerGroupSession) error { return nil }
func (h *countingHandler) ConsumeClaim(s sarama.ConsumerGroupSession, c sarama.ConsumerGroupClaim) error {
	for m := range c.Messages() {
		h.mu.Lock()
		h.seen[string(m.Value)] = true
		h.mu.Unlock()
		s.MarkMessage(m, "")
	}
	return nil
}

func (h *countingHandler) count() int {
	h.mu.Lock()
	defer h.mu.Unlock()
	return len(h.seen)
}

// TestClusterSaramaConsumerGroup: a Sarama consumer group on 3 brokers
// (FindCoordinator creates __consumer_offsets, JoinGroup/SyncGroup/
// Heartbeat, OffsetCommit/OffsetFetch) consumes every message, and a second
// session of the same group resumes from the committed offsets.
func TestClusterSaramaConsumerGroup(t *testing.T) {
	c := brokertest.NewCluster(t, 3, brokertest.WithProperty("offsets.topic.num.partitions", "5"),
		brokertest.WithProperty("offsets.topic.replication.factor", "3"))
	c.CreateTopic(t, "grp", 3, 2)
	p := c.SyncProducer(t, nil)
	for i := 0; i < 30; i++ {
		if _, _, err := p.SendMessage(&sarama.ProducerMessage{Topic: "grp", Value: sarama.StringEncoder(fmt.Sprint(i))}); err != nil {
			t.Fatal(err)
		}
	}
	for _, v := range []sarama.KafkaVersion{sarama.V2_1_0_0, sarama.V2_8_0_0} {
		t.Run(v.String(), func(t *testing.T) {
			cfg := brokertest.SaramaConfig(v)
			cfg.Consumer.Offsets.Initial = sarama.OffsetOldest
			cfg.Consumer.Offsets.AutoCommit.Interval = 100 * time.Millisecond
			groupID := "g-" + v.String()
			run := func(want int) {
				cg, err := sarama.NewConsumerGroup(c.Addrs(), groupID, cfg)
				if err != nil {
					t.Fatal(err)
				}
				h := &countingHandler{seen: map[string]bool{}, ready: make(chan struct{})}
				ctx, cancel := context.WithCancel(context.Background())
				done := make(chan error, 1)
				go func() {
					for ctx.Err() == nil {
						if err := cg.Consume(ctx, []string{"grp"}, h); err != nil {
							done <- err
							return
						}
					}
					done <- nil
				}()
				brokertest.WaitFor(t, 60*time.Second, func() error {
					if n := h.count(); n < want {
						return fmt.Errorf("consumed %d of %d", n, want)
					}
					return nil
				})
				cancel()
				if err := <-done; err != nil {
					t.Fatal(err)
				}
				if err := cg.Close(); err != nil {
					t.Fatal(err)
				}
				if want == 0 && h.count() != 0 {
					t.Fatalf("second session re-consumed %d messages", h.count())
				}
			}
			run(30)
			// Everything was committed: more messages are the only new ones.
			for i := 30; i < 35; i++ {
				if _, _, err := p.SendMessage(&sarama.ProducerMessage{Topic: "grp", Value: sarama.StringEncoder(fmt.Sprint(i))}); err != nil {
					t.Fatal(err)
				}
			}
			run(5)
		})
	}
	admin := c.Admin(t, brokertest.SaramaConfig(sarama.V2_8_0_0))
	groups, err := admin.ListConsumerGroups()
	if err != nil {
		t.Fatal(err)
	}
	if len(groups) != 2 {
		t.Fatalf("groups %v", groups)
	}
	desc, err := admin.DescribeConsumerGroups([]string{"g-2.8.0"})
	if err != nil || len(desc) != 1 || desc[0].State != "Empty" {
		t.Fatalf("describe: %+v %v", desc, err)
	}
	offs, err := admin.ListConsumerGroupOffsets("g-2.8.0", nil)
	if err != nil {
		t.Fatal(err)
	}
	total := int64(0)
	for _, ps := range offs.Blocks["grp"] {
		total += ps.Offset
	}
	if total != 40 {
		t.Fatalf("committed offsets sum to %d, want 40 (all messages)", total)
	}
}
