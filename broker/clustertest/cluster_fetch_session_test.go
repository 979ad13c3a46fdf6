package clustertest_test

import (
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/IBM/sarama"
	"github.com/twmb/franz-go/pkg/kmsg"

	"samsa/broker/brokertest"
)

// TestClusterFollowerFetchSession: Samsa's follower fetcher uses an
// incremental fetch session (KIP-227) with its leader: after the first
// full fetch of all 20 partitions, its requests carry the session id and
// a growing epoch and name only the partitions whose position moved, and
// replication still completes (the follower reaches the leader's log end
// and the HW moves).
func TestClusterFollowerFetchSession(t *testing.T) {
	c := brokertest.NewCluster(t, 2)
	leader, follower := c.Broker(0).ID(), c.Broker(1).ID()
	assign := map[int32][]int32{}
	for p := int32(0); p < 20; p++ {
		assign[p] = []int32{leader, follower}
	}
	admin := c.Admin(t, brokertest.SaramaConfig(sarama.V2_8_0_0))
	if err := admin.CreateTopic("fss", &sarama.TopicDetail{NumPartitions: -1, ReplicationFactor: -1, ReplicaAssignment: assign}, false); err != nil {
		t.Fatal(err)
	}
	for p := int32(0); p < 20; p++ {
		c.WaitForISR(t, "fss", p, 2)
	}
	type seen struct {
		id, epoch int32
		named     int
	}
	var mu sync.Mutex
	var reqs []seen
	c.Intercept(0, int16(kmsg.Fetch), func(r kmsg.Request) (kmsg.Response, error, bool) {
		req := r.(*kmsg.FetchRequest)
		if req.ReplicaID != follower {
			return nil, nil, false
		}
		n := 0
		for _, t := range req.Topics {
			n += len(t.Partitions)
		}
		mu.Lock()
		reqs = append(reqs, seen{req.SessionID, req.SessionEpoch, n})
		mu.Unlock()
		return nil, nil, false
	})
	pcfg := brokertest.SaramaConfig(sarama.V2_8_0_0)
	pcfg.Producer.Partitioner = sarama.NewManualPartitioner
	p := c.SyncProducer(t, pcfg)
	for i := 0; i < 10; i++ {
		if _, _, err := p.SendMessage(&sarama.ProducerMessage{Topic: "fss", Partition: 3, Value: sarama.StringEncoder(fmt.Sprint(i))}); err != nil {
			t.Fatal(err)
		}
	}
	lp := c.Broker(0).Replicas().Partition(replicaTP("fss", 3))
	fp := c.Broker(1).Replicas().Partition(replicaTP("fss", 3))
	brokertest.WaitFor(t, 30*time.Second, func() error {
		if le, fe := lp.Log().LogEndOffset(), fp.Log().LogEndOffset(); le != 10 || fe != 10 || lp.Log().HighWatermark() != 10 {
			return fmt.Errorf("leader LEO %d HW %d, follower LEO %d", le, lp.Log().HighWatermark(), fe)
		}
		return nil
	})
	mu.Lock()
	incremental, small := 0, 0
	for _, r := range reqs {
		if r.id != 0 && r.epoch > 0 {
			incremental++
			if r.named < 20 {
				small++
			}
		}
	}
	if incremental == 0 || small == 0 {
		t.Fatalf("follower requests %v: none incremental naming fewer than all 20 partitions", reqs)
	}
	mu.Unlock()
	// Partitions kept out of a round (backing off after an error while
	// leadership settles) are forgotten and added back: wait for all 20.
	// A session whose full answer the follower never got (a connection
	// replaced meanwhile) stays behind until evicted, as in Kafka: look at
	// the session the follower uses now.
	brokertest.WaitFor(t, 30*time.Second, func() error {
		mu.Lock()
		last := reqs[len(reqs)-1]
		mu.Unlock()
		if n, ok := c.Broker(0).FetchSessionSize(last.id); !ok || n != 20 {
			return fmt.Errorf("follower's current session %d holds %d partitions (cached %v), want 20", last.id, n, ok)
		}
		return nil
	})
}

// TestClusterNumReplicaFetchers: with num.replica.fetchers=3 the follower
// fetches its 20 partitions from the leader with three fetchers, each with
// its own session (and connection), and every partition is replicated.
func TestClusterNumReplicaFetchers(t *testing.T) {
	c := brokertest.NewCluster(t, 2, brokertest.WithProperty("num.replica.fetchers", "3"))
	leader, follower := c.Broker(0).ID(), c.Broker(1).ID()
	var mu sync.Mutex
	lastEpoch := map[int32]int32{} // session id -> latest epoch the follower sent
	c.Intercept(0, int16(kmsg.Fetch), func(r kmsg.Request) (kmsg.Response, error, bool) {
		if req := r.(*kmsg.FetchRequest); req.ReplicaID == follower && req.SessionID != 0 {
			mu.Lock()
			lastEpoch[req.SessionID] = req.SessionEpoch
			mu.Unlock()
		}
		return nil, nil, false
	})
	assign := map[int32][]int32{}
	for p := int32(0); p < 20; p++ {
		assign[p] = []int32{leader, follower}
	}
	admin := c.Admin(t, brokertest.SaramaConfig(sarama.V2_8_0_0))
	if err := admin.CreateTopic("nrf", &sarama.TopicDetail{NumPartitions: -1, ReplicationFactor: -1, ReplicaAssignment: assign}, false); err != nil {
		t.Fatal(err)
	}
	pcfg := brokertest.SaramaConfig(sarama.V2_8_0_0)
	pcfg.Producer.Partitioner = sarama.NewManualPartitioner
	p := c.SyncProducer(t, pcfg)
	for part := int32(0); part < 20; part++ {
		if _, _, err := p.SendMessage(&sarama.ProducerMessage{Topic: "nrf", Partition: part, Value: sarama.StringEncoder("v")}); err != nil {
			t.Fatal(err)
		}
	}
	brokertest.WaitFor(t, 30*time.Second, func() error {
		for part := int32(0); part < 20; part++ {
			fp := c.Broker(1).Replicas().Partition(replicaTP("nrf", part))
			if fp == nil || fp.Log().LogEndOffset() != 1 {
				return fmt.Errorf("follower of partition %d not caught up", part)
			}
		}
		return nil
	})
	// Three sessions in use (epochs moving), holding the 20 partitions
	// between them.
	brokertest.WaitFor(t, 30*time.Second, func() error {
		mu.Lock()
		defer mu.Unlock()
		total, used := 0, 0
		for id, epoch := range lastEpoch {
			n, ok := c.Broker(0).FetchSessionSize(id)
			if ok && epoch > 3 {
				total += n
				used++
			}
		}
		// (An orphaned session, whose full answer was lost, may add to it.)
		if used < 3 || total < 20 {
			return fmt.Errorf("follower sessions %v hold %d partitions, want 3 sessions in use with 20", lastEpoch, total)
		}
		return nil
	})
}
