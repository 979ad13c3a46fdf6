package broker_test

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/IBM/sarama"
	"github.com/twmb/franz-go/pkg/kmsg"

	"samsa/broker/brokertest"
)

func TestAPISaramaRoundTripSingleBroker(t *testing.T) {
	c := brokertest.NewCluster(t, 1)
	for _, v := range []sarama.KafkaVersion{sarama.V0_8_2_0, sarama.V0_10_0_0, sarama.V0_10_2_0, sarama.V2_1_0_0, sarama.V2_8_0_0, sarama.MaxVersion} {
		t.Run(v.String(), func(t *testing.T) {
			topic := "rt-" + v.String()
			c.CreateTopic(t, topic, 2, 1)
			cfg := brokertest.SaramaConfig(v)
			brokertest.ProduceConsume(t, c, cfg, topic, 2, 50)
		})
	}
}

// TestAPIFetchLongPoll: a fetch with min_bytes parks until data arrives
// (woken by the append, long before max_wait_ms), and one with nothing to
// read returns after max_wait_ms.
func TestAPIFetchLongPoll(t *testing.T) {
	c := brokertest.NewCluster(t, 1)
	c.CreateTopic(t, "lp", 1, 1)
	fetch := func(maxWait int32) (*kmsg.FetchResponse, time.Duration) {
		rc := brokertest.DialRaw(t, c.Addr(0))
		start := time.Now()
		kr, err := rc.RoundTrip(brokertest.FetchRequest(-1, maxWait, "lp"))
		if err != nil {
			t.Fatal(err)
		}
		return kr.(*kmsg.FetchResponse), time.Since(start)
	}
	resp, took := fetch(300)
	if took < 250*time.Millisecond || len(resp.Topics[0].Partitions[0].RecordBatches) != 0 {
		t.Fatalf("empty fetch returned after %v with %d bytes", took, len(resp.Topics[0].Partitions[0].RecordBatches))
	}
	done := make(chan time.Duration, 1)
	var got *kmsg.FetchResponse
	go func() {
		r, d := fetch(20000)
		got = r
		done <- d
	}()
	brokertest.WaitFor(t, 10*time.Second, func() error {
		if c.Broker(0).Replicas().Fetch.Size() == 0 {
			return fmt.Errorf("fetch not parked")
		}
		return nil
	})
	p := c.SyncProducer(t, nil)
	if _, _, err := p.SendMessage(&sarama.ProducerMessage{Topic: "lp", Value: sarama.StringEncoder("wake")}); err != nil {
		t.Fatal(err)
	}
	select {
	case d := <-done:
		if d > 10*time.Second || len(got.Topics[0].Partitions[0].RecordBatches) == 0 {
			t.Fatalf("woken fetch after %v with %d bytes", d, len(got.Topics[0].Partitions[0].RecordBatches))
		}
	case <-time.After(15 * time.Second):
		t.Fatal("parked fetch was not woken by the append")
	}
}

// TestAPIShutdownAnswersParkedFetch: a fetch parked in the purgatory is
// answered as soon as Shutdown starts, not at its max_wait_ms.
func TestAPIShutdownAnswersParkedFetch(t *testing.T) {
	c := brokertest.NewCluster(t, 1)
	c.CreateTopic(t, "sd", 1, 1)
	rc := brokertest.DialRaw(t, c.Addr(0))
	done := make(chan error, 1)
	go func() {
		_, err := rc.RoundTrip(brokertest.FetchRequest(-1, 60000, "sd"))
		done <- err
	}()
	b := c.Broker(0)
	brokertest.WaitFor(t, 10*time.Second, func() error {
		if b.Replicas().Fetch.Size() == 0 {
			return fmt.Errorf("fetch not parked")
		}
		return nil
	})
	start := time.Now()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	if err := b.Shutdown(ctx); err != nil {
		t.Fatal(err)
	}
	if d := time.Since(start); d > 10*time.Second {
		t.Fatalf("shutdown took %v with a parked fetch", d)
	}
	if err := <-done; err != nil {
		t.Fatalf("parked fetch: %v", err)
	}
}
