package clustertest_test

import (
	"fmt"
	"strconv"
	"testing"
	"time"

	"samsa/broker/brokertest"
	"samsa/broker/storage"
	"samsa/zkutil"
)

// TestClusterDynamicConfigApplied: topic overrides and dynamic broker
// configs (cluster default and per broker, Kafka's precedence) written to
// ZooKeeper with a /config/changes notification reach the running log
// without a restart.
func TestClusterDynamicConfigApplied(t *testing.T) {
	c := brokertest.NewCluster(t, 1)
	c.CreateTopic(t, "dyn", 1, 1)
	c.WaitForLeader(t, "dyn", 0)
	b := c.Broker(0)
	zk := c.ZooKeeper(t)
	id := strconv.Itoa(int(b.ID()))
	logConfig := func() (storage.Config, error) {
		for _, p := range b.Replicas().Partitions() {
			if p.TopicPartition().Topic == "dyn" && p.Log() != nil {
				return p.Log().Config(), nil
			}
		}
		return storage.Config{}, fmt.Errorf("no log for dyn-0")
	}
	waitConfig := func(what string, ok func(storage.Config) bool) {
		t.Helper()
		brokertest.WaitFor(t, 20*time.Second, func() error {
			cfg, err := logConfig()
			if err == nil && !ok(cfg) {
				err = fmt.Errorf("%s not applied: %+v", what, cfg)
			}
			return err
		})
	}
	set := func(typ, name string, cfg map[string]string) {
		t.Helper()
		if err := zk.SetEntityConfig(typ, name, cfg); err != nil {
			t.Fatal(err)
		}
	}

	set(zkutil.ConfigTypeTopic, "dyn", map[string]string{"retention.ms": "1234"})
	waitConfig("topic retention.ms", func(c storage.Config) bool { return c.RetentionMs == 1234 })

	set(zkutil.ConfigTypeBroker, "<default>", map[string]string{"log.segment.bytes": "2000000", "log.retention.bytes": "5000000"})
	waitConfig("cluster default", func(c storage.Config) bool {
		return c.SegmentBytes == 2000000 && c.RetentionBytes == 5000000 && c.RetentionMs == 1234
	})
	set(zkutil.ConfigTypeBroker, id, map[string]string{"log.segment.bytes": "3000000", "log.cleaner.threads": "2"})
	waitConfig("per-broker override", func(c storage.Config) bool { return c.SegmentBytes == 3000000 && c.RetentionBytes == 5000000 })
	set(zkutil.ConfigTypeTopic, "dyn", map[string]string{"retention.ms": "1234", "segment.bytes": "1500000"})
	waitConfig("topic override over dynamic broker", func(c storage.Config) bool { return c.SegmentBytes == 1500000 })
	set(zkutil.ConfigTypeTopic, "dyn", map[string]string{})
	set(zkutil.ConfigTypeBroker, id, map[string]string{"log.segment.bytes": "not-a-number"})
	waitConfig("back to the cluster default", func(c storage.Config) bool {
		return c.SegmentBytes == 2000000 && c.RetentionMs != 1234
	})
	if got := b.Config().LogSegmentBytes; got != 1073741824 {
		t.Fatalf("static config changed: log.segment.bytes %d", got)
	}

	// A restarted broker starts with the dynamic configs in ZooKeeper.
	c.Kill(0)
	c.Restart(0)
	b = c.Broker(0)
	c.WaitForLeader(t, "dyn", 0)
	waitConfig("dynamic config after restart", func(c storage.Config) bool { return c.SegmentBytes == 2000000 })
}
