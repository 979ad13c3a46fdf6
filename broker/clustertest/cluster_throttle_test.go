package clustertest_test

import (
	"fmt"
	"slices"
	"strconv"
	"testing"
	"time"

	"github.com/IBM/sarama"

	"samsa/broker/brokertest"
	"samsa/zkutil"
)

// TestClusterThrottledReassignmentStaysWithinRate: a partition of ~2 MB
// moves to a new broker with leader.replication.throttled.rate and
// follower.replication.throttled.rate at 400 kB/s and the partition listed
// in both throttled-replicas configs, as kafka-reassign-partitions
// --throttle sets them. The copy takes at least as long as the rate allows
// (one second of burst aside) and still completes.
func TestClusterThrottledReassignmentStaysWithinRate(t *testing.T) {
	c := brokertest.NewCluster(t, 2)
	ids := []int32{c.Broker(0).ID(), c.Broker(1).ID()}
	admin := c.Admin(t, brokertest.SaramaConfig(sarama.V2_8_0_0))
	createAssigned(t, admin, "thr", map[int32][]int32{0: {ids[0]}}, nil)
	c.WaitForLeader(t, "thr", 0)
	cfg := brokertest.SaramaConfig(sarama.V2_8_0_0)
	cfg.Producer.Return.Successes = true
	cfg.Producer.Compression = sarama.CompressionNone
	p := c.SyncProducer(t, cfg)
	value := make([]byte, 10_000)
	for i := range value {
		value[i] = byte(i * 7)
	}
	const n = 200
	for i := 0; i < n; i++ {
		if _, _, err := p.SendMessage(&sarama.ProducerMessage{Topic: "thr", Value: sarama.ByteEncoder(value)}); err != nil {
			t.Fatal(err)
		}
	}
	const rate = 400_000
	zk := c.ZooKeeper(t)
	for _, id := range ids {
		if err := zk.SetEntityConfig(zkutil.ConfigTypeBroker, strconv.Itoa(int(id)), map[string]string{
			"leader.replication.throttled.rate": strconv.Itoa(rate), "follower.replication.throttled.rate": strconv.Itoa(rate),
		}); err != nil {
			t.Fatal(err)
		}
	}
	if err := zk.SetEntityConfig(zkutil.ConfigTypeTopic, "thr", map[string]string{
		"leader.replication.throttled.replicas":   fmt.Sprintf("0:%d", ids[0]),
		"follower.replication.throttled.replicas": fmt.Sprintf("0:%d", ids[1]),
	}); err != nil {
		t.Fatal(err)
	}
	// The brokers apply the configs asynchronously.
	brokertest.WaitFor(t, 10*time.Second, func() error {
		for i := range ids {
			r := c.Broker(i).Replicas()
			if r.LeaderThrottle.Rate() != rate || r.FollowerThrottle.Rate() != rate {
				return fmt.Errorf("broker %d: rates not applied yet", ids[i])
			}
		}
		return nil
	})
	start := time.Now()
	target := []int32{ids[0], ids[1]}
	if err := admin.AlterPartitionReassignments("thr", [][]int32{target}); err != nil {
		t.Fatal(err)
	}
	brokertest.WaitFor(t, 60*time.Second, func() error {
		ps, ok := c.Broker(0).Metadata().Partition("thr", 0)
		if !ok || !slices.Equal(ps.Replicas, target) || len(ps.ISR) != 2 {
			return fmt.Errorf("partition state %+v", ps)
		}
		return nil
	})
	elapsed := time.Since(start)
	total := float64(n * len(value))
	// One second of burst is allowed; the rest must respect the rate.
	minTime := time.Duration((total - rate) / rate * float64(time.Second))
	t.Logf("copied %.0f bytes in %v (rate %d B/s, lower bound %v)", total, elapsed, rate, minTime)
	if elapsed < minTime*9/10 {
		t.Fatalf("reassignment of %.0f bytes took %v, faster than %d B/s allows (%v)", total, elapsed, rate, minTime)
	}
}
