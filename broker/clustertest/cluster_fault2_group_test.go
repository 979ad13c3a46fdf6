package clustertest_test

import (
	"context"
	"fmt"
	"math/rand/v2"
	"sync"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kgo"

	"samsa/broker/brokertest"
)

// TestClusterFault2GroupConsumers: two franz-go members of one consumer
// group (offsets in a replicated __consumer_offsets) read three
// partitions while acks=all producers write to them and a seeded
// sequence of faults hits the brokers (see TestClusterFault2Nemesis). The
// consumers must not hang: once the faults are over they read every
// acknowledged record within 60 s.
func TestClusterFault2GroupConsumers(t *testing.T) {
	c := newNemesisCluster(t, "offsets.topic.replication.factor", "3")
	topics, ks := ledTopics(t, c.ProcCluster, "gc")
	var mu sync.Mutex
	seen := map[string]bool{}
	var members []*kgo.Client
	ctx, cancel := context.WithCancel(context.Background())
	var wg sync.WaitGroup
	t.Cleanup(func() {
		cancel()
		wg.Wait()
		for _, m := range members {
			m.Close()
		}
	})
	for m := 0; m < 2; m++ {
		cl, err := kgo.NewClient(
			kgo.SeedBrokers(c.Addrs()...),
			kgo.ConsumerGroup("gc-group"),
			kgo.ConsumeTopics(topics...),
			kgo.ConsumeResetOffset(kgo.NewOffset().AtStart()),
			kgo.HeartbeatInterval(300*time.Millisecond),
			kgo.SessionTimeout(6*time.Second),
			kgo.FetchMaxWait(200*time.Millisecond),
			kgo.RequestTimeoutOverhead(5*time.Second),
		)
		if err != nil {
			t.Fatal(err)
		}
		members = append(members, cl)
		wg.Add(1)
		go func() {
			defer wg.Done()
			for ctx.Err() == nil {
				fs := cl.PollFetches(ctx)
				fs.EachRecord(func(r *kgo.Record) {
					mu.Lock()
					seen[string(r.Value)] = true
					mu.Unlock()
				})
			}
		}()
	}
	c.runFaults(t, rand.New(rand.NewPCG(7, 0)), 4, topics, ks)
	for _, k := range ks {
		k.halt()
	}
	brokertest.WaitFor(t, 60*time.Second, func() error {
		mu.Lock()
		defer mu.Unlock()
		for _, k := range ks {
			k.mu.Lock()
			missing, first := 0, ""
			for _, a := range k.acked {
				if !seen[a.value] {
					if missing == 0 {
						first = a.value
					}
					missing++
				}
			}
			n := len(k.acked)
			k.mu.Unlock()
			if missing > 0 {
				return fmt.Errorf("%s: %d of %d acknowledged records not consumed yet (first %s)", k.topic, missing, n, first)
			}
		}
		return nil
	})
	for _, k := range ks {
		k.verify(c.Addrs())
	}
}
