package clustertest_test

import (
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"testing"
	"time"

	"github.com/IBM/sarama"

	"samsa/broker/brokertest"
)

// TestClusterScaleProcCreate is the creation half of
// TestClusterScaleProcControlledShutdownAndFailover on its own (issue 18
// point 2: 10,000 partitions, RF 3, on three broker processes ≤ 20 s), for
// profiling and before/after comparisons without the shutdown and failover
// rounds. Opt-in with SAMSA_SCALE_PARTITIONS=N; the same
// SAMSA_SCALE_LOG_DIR=dir keeps the brokers' logs. The topics (100
// partitions each) are created the way the full test does, one CreateTopics
// after another, each waiting for its partitions' leaders (Sarama's
// ClusterAdmin.CreateTopic); the test reports when the last was answered,
// when ZooKeeper showed every partition led with ISR 3, and when every
// broker's Metadata did.
func TestClusterScaleProcCreate(t *testing.T) {
	n, _ := strconv.Atoi(os.Getenv("SAMSA_SCALE_PARTITIONS"))
	if n <= 0 {
		t.Skip("set SAMSA_SCALE_PARTITIONS=10000 to run the scale measurement")
	}
	const perTopic = 100
	const long = 10 * time.Minute
	c := brokertest.NewProcCluster(t, 3, brokertest.WithProperty("auto.leader.rebalance.enable", "false"))
	keepScaleLogs(t, c, "create-")
	topics := make([]string, (n+perTopic-1)/perTopic)
	for i := range topics {
		topics[i] = fmt.Sprintf("s%04d", i)
	}
	admin := c.Admin(t)
	start := time.Now()
	var slowest time.Duration
	for _, topic := range topics {
		one := time.Now()
		err := admin.CreateTopic(topic, &sarama.TopicDetail{NumPartitions: perTopic, ReplicationFactor: 3}, false)
		if err != nil {
			t.Fatalf("create topic %s: %v", topic, err)
		}
		slowest = max(slowest, time.Since(one))
	}
	answered := time.Since(start)
	t.Logf("CreateTopics of %d topics answered after %v (%v per topic on average, slowest %v)",
		len(topics), answered, answered/time.Duration(len(topics)), slowest)
	live := map[int32]bool{c.ID(0): true, c.ID(1): true, c.ID(2): true}
	waitScaleStates(t, c, topics, len(topics)*perTopic, live, 3, long)
	t.Logf("created %d partitions (RF 3): every partition led with ISR 3 in ZooKeeper after %v",
		len(topics)*perTopic, time.Since(start))
	waitScaleMetadata(t, c, topics, live, long)
	t.Logf("... and in every broker's Metadata after %v", time.Since(start))
}

// keepScaleLogs copies the brokers' logs to $SAMSA_SCALE_LOG_DIR (when
// set) as <prefix>broker-<id>.log at the end of the test, for reading the
// timings.
func keepScaleLogs(t *testing.T, c *brokertest.ProcCluster, prefix string) {
	dir := os.Getenv("SAMSA_SCALE_LOG_DIR")
	if dir == "" {
		return
	}
	t.Cleanup(func() {
		for i := 0; i < c.N(); i++ {
			name := filepath.Join(dir, fmt.Sprintf("%sbroker-%d.log", prefix, c.ID(i)))
			if err := os.WriteFile(name, []byte(c.Log(i)), 0o644); err != nil {
				t.Error(err)
			}
		}
	})
}
