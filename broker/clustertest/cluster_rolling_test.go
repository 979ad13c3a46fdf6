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

// TestClusterRollingRestartLosesNothing: while every broker in turn is
// stopped (controlled shutdown) and restarted, a producer with acks=all
// and min.insync.replicas=2 keeps writing; every acknowledged message is
// there afterwards, in order per partition (Kafka's durability promise
// for acks=all with RF 3).
func TestClusterRollingRestartLosesNothing(t *testing.T) {
	t.Run("controlled", func(t *testing.T) { rollingRestart(t, true) })
	t.Run("kill", func(t *testing.T) { rollingRestart(t, false) })
}

func rollingRestart(t *testing.T, controlled bool) {
	c := brokertest.NewCluster(t, 3, brokertest.WithProperty("controlled.shutdown.enable", fmt.Sprint(controlled)),
		brokertest.WithProperty("controlled.shutdown.retry.backoff.ms", "100"),
		brokertest.WithProperty("min.insync.replicas", "2"),
		brokertest.WithProperty("replica.lag.time.max.ms", "2000"))
	c.CreateTopic(t, "roll", 2, 3)
	cfg := brokertest.SaramaConfig(sarama.V2_8_0_0)
	cfg.Producer.RequiredAcks = sarama.WaitForAll
	cfg.Producer.Retry.Max = 50
	cfg.Producer.Retry.Backoff = 50 * time.Millisecond
	cfg.Producer.Timeout = 5 * time.Second
	p := c.SyncProducer(t, cfg)

	var mu sync.Mutex
	acked := map[int32][]int64{} // partition -> offsets acknowledged
	ctx, stop := context.WithCancel(context.Background())
	var wg sync.WaitGroup
	wg.Add(1)
	go func() {
		defer wg.Done()
		for i := 0; ctx.Err() == nil; i++ {
			part, off, err := p.SendMessage(&sarama.ProducerMessage{Topic: "roll", Key: sarama.StringEncoder(fmt.Sprint(i % 10)),
				Value: sarama.StringEncoder(fmt.Sprint(i))})
			if err != nil {
				continue // not acknowledged: no promise
			}
			mu.Lock()
			acked[part] = append(acked[part], off)
			mu.Unlock()
		}
	}()
	count := func() int {
		mu.Lock()
		defer mu.Unlock()
		return len(acked[0]) + len(acked[1])
	}
	for i := 0; i < 3; i++ {
		before := count()
		brokertest.WaitFor(t, 60*time.Second, func() error {
			if count() < before+20 {
				return fmt.Errorf("only %d acknowledged", count()-before)
			}
			return nil
		})
		if controlled {
			sctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
			if err := c.Broker(i).Shutdown(sctx); err != nil {
				t.Fatal(err)
			}
			cancel()
		}
		c.Restart(i) // kills first when still running
		c.WaitForISR(t, "roll", 0, 3)
		c.WaitForISR(t, "roll", 1, 3)
	}
	before := count()
	brokertest.WaitFor(t, 60*time.Second, func() error {
		if count() < before+20 {
			return fmt.Errorf("only %d acknowledged after the last restart", count()-before)
		}
		return nil
	})
	stop()
	wg.Wait()

	cl := c.Sarama(t, cfg)
	cons, err := sarama.NewConsumerFromClient(cl)
	if err != nil {
		t.Fatal(err)
	}
	defer cons.Close()
	for part, offs := range acked {
		pc, err := cons.ConsumePartition("roll", part, sarama.OffsetOldest)
		if err != nil {
			t.Fatal(err)
		}
		have := map[int64]bool{}
		last := offs[len(offs)-1]
		for done := false; !done; {
			select {
			case m := <-pc.Messages():
				have[m.Offset] = true
				done = m.Offset >= last
			case err := <-pc.Errors():
				t.Fatal(err)
			case <-time.After(30 * time.Second):
				t.Fatalf("partition %d: consumer stalled", part)
			}
		}
		pc.Close()
		for _, o := range offs {
			if !have[o] {
				t.Fatalf("partition %d: acknowledged offset %d lost", part, o)
			}
		}
		t.Logf("partition %d: %d acknowledged messages all present", part, len(offs))
	}
}
