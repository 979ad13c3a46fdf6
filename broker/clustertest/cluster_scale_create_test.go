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
	c, topics := scaleProcCluster(t, "create-")
	createScaleTopics(t, c, topics)
}

// scalePerTopic is how many partitions each scale topic has; scaleLong
// bounds every wait of a scale measurement.
const (
	scalePerTopic = 100
	scaleLong     = 10 * time.Minute
)

// scalePartitions returns SAMSA_SCALE_PARTITIONS and skips the test when it
// is not set: the scale measurements are opt-in.
func scalePartitions(t *testing.T) int {
	t.Helper()
	n, _ := strconv.Atoi(os.Getenv("SAMSA_SCALE_PARTITIONS"))
	if n <= 0 {
		t.Skip("set SAMSA_SCALE_PARTITIONS=10000 to run the scale measurement")
	}
	return n
}

// scaleProcCluster starts the three broker processes of a process-based
// scale measurement (auto.leader.rebalance.enable=false, so that leaders
// stay where the measurement moved them), keeps their logs as
// <logPrefix>broker-<id>.log when SAMSA_SCALE_LOG_DIR is set, and names
// the SAMSA_SCALE_PARTITIONS/100 topics (rounded up) it will create.
func scaleProcCluster(t *testing.T, logPrefix string) (*brokertest.ProcCluster, []string) {
	t.Helper()
	n := scalePartitions(t)
	c := brokertest.NewProcCluster(t, 3, brokertest.WithProperty("auto.leader.rebalance.enable", "false"))
	keepScaleLogs(t, c, logPrefix)
	topics := make([]string, (n+scalePerTopic-1)/scalePerTopic)
	for i := range topics {
		topics[i] = fmt.Sprintf("s%04d", i)
	}
	return c, topics
}

// createScaleTopics creates topics (scalePerTopic partitions, RF 3) one
// CreateTopics after another, waits until ZooKeeper and then every broker's
// Metadata show each partition led with ISR 3, logs the three times, and
// returns the live brokers.
func createScaleTopics(t *testing.T, c *brokertest.ProcCluster, topics []string) map[int32]bool {
	t.Helper()
	admin := c.Admin(t)
	start := time.Now()
	var slowest time.Duration
	for _, topic := range topics {
		one := time.Now()
		err := admin.CreateTopic(topic, &sarama.TopicDetail{NumPartitions: scalePerTopic, ReplicationFactor: 3}, false)
		if err != nil {
			t.Fatalf("create topic %s: %v", topic, err)
		}
		slowest = max(slowest, time.Since(one))
	}
	answered := time.Since(start)
	t.Logf("CreateTopics of %d topics answered after %v (%v per topic on average, slowest %v)",
		len(topics), answered, answered/time.Duration(len(topics)), slowest)
	live := map[int32]bool{c.ID(0): true, c.ID(1): true, c.ID(2): true}
	waitScaleStates(t, c, topics, len(topics)*scalePerTopic, live, 3, scaleLong)
	t.Logf("created %d partitions (RF 3): every partition led with ISR 3 in ZooKeeper after %v",
		len(topics)*scalePerTopic, time.Since(start))
	waitScaleMetadata(t, c, topics, live, scaleLong)
	t.Logf("... and in every broker's Metadata after %v", time.Since(start))
	return live
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
