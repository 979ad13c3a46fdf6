package clustertest_test

import (
	"errors"
	"strconv"
	"testing"

	"github.com/IBM/sarama"

	"samsa/broker/brokertest"
	"samsa/zkutil"
)

// Regression tests for Samsa bugs found by Sarama's functional test suite
// (bin/samsa-compat-sarama.sh, docs/compatibility.md). Each names the FVT
// test that found it.

// TestAPICompatSaramaIncrementalAlterBrokerConfig: TestFuncAdminIncrementalAlterConfigs
// sets log.cleaner.backoff.ms on broker resource "1". A dynamic broker key is
// stored in /config/brokers/<id>; a static key, a bad value or another
// broker's id answers INVALID_REQUEST; validate_only writes nothing.
func TestAPICompatSaramaIncrementalAlterBrokerConfig(t *testing.T) {
	c := brokertest.NewCluster(t, 1)
	admin := c.Admin(t, brokertest.SaramaConfig(sarama.V2_8_0_0))
	id := strconv.Itoa(int(c.Broker(0).ID()))
	zk := c.ZooKeeper(t)
	set := func(key, value string, validateOnly bool) error {
		return admin.IncrementalAlterConfig(sarama.BrokerResource, id, map[string]sarama.IncrementalAlterConfigsEntry{
			key: {Operation: sarama.IncrementalAlterConfigsOperationSet, Value: &value},
		}, validateOnly)
	}
	stored := func() map[string]string {
		t.Helper()
		cfg, err := zk.GetEntityConfig(zkutil.ConfigTypeBroker, id)
		if err != nil {
			t.Fatal(err)
		}
		return cfg
	}

	if err := set("log.cleaner.backoff.ms", "15001", true); err != nil {
		t.Fatalf("validate only: %v", err)
	}
	if got := stored(); len(got) != 0 {
		t.Fatalf("validate_only wrote %v", got)
	}
	if err := set("log.cleaner.backoff.ms", "15001", false); err != nil {
		t.Fatalf("set dynamic key: %v", err)
	}
	if got := stored()["log.cleaner.backoff.ms"]; got != "15001" {
		t.Fatalf("/config/brokers/%s log.cleaner.backoff.ms = %q, want 15001", id, got)
	}
	changes, err := zk.GetConfigChanges()
	if err != nil || len(changes) == 0 {
		t.Fatalf("no config change notification: %v %v", changes, err)
	}
	for _, bad := range []struct{ key, value string }{
		{"zookeeper.connect", "elsewhere:2181"}, // not dynamic
		{"log.cleaner.backoff.ms", "soon"},      // not a number
	} {
		if err := set(bad.key, bad.value, false); !errors.Is(err, sarama.ErrInvalidRequest) {
			t.Errorf("%s=%s: %v, want INVALID_REQUEST", bad.key, bad.value, err)
		}
	}
	if got := stored()["log.cleaner.backoff.ms"]; got != "15001" {
		t.Fatalf("refused changes altered the stored value: %q", got)
	}
}

// TestAPICompatSaramaRecreateAfterDelete: the FVT's TestMain deletes its
// topics, polls Metadata until they are gone and creates them again at
// once. DeleteTopics answers only after the controller finished, so the
// CreateTopics that follows does not meet TOPIC_ALREADY_EXISTS ("marked for
// deletion").
func TestAPICompatSaramaRecreateAfterDelete(t *testing.T) {
	c := brokertest.NewCluster(t, 3)
	admin := c.Admin(t, brokertest.SaramaConfig(sarama.V2_8_0_0))
	detail := &sarama.TopicDetail{NumPartitions: 16, ReplicationFactor: 3}
	c.CreateTopic(t, "again", detail.NumPartitions, detail.ReplicationFactor)
	for round := 0; round < 3; round++ {
		if err := admin.DeleteTopic("again"); err != nil {
			t.Fatalf("round %d: delete: %v", round, err)
		}
		if err := admin.CreateTopic("again", detail, false); err != nil {
			t.Fatalf("round %d: create right after delete: %v", round, err)
		}
		c.WaitForLeader(t, "again", detail.NumPartitions-1)
	}
}

// TestAPICompatSaramaAlterBrokerConfig: AlterConfigs on a broker resource
// replaces all of its dynamic overrides (Kafka's non-incremental
// semantics); the cluster default is the empty resource name; a static key
// answers INVALID_REQUEST and writes nothing.
func TestAPICompatSaramaAlterBrokerConfig(t *testing.T) {
	c := brokertest.NewCluster(t, 1)
	admin := c.Admin(t, brokertest.SaramaConfig(sarama.V2_8_0_0))
	id := strconv.Itoa(int(c.Broker(0).ID()))
	zk := c.ZooKeeper(t)
	stored := func(entity string) map[string]string {
		t.Helper()
		cfg, err := zk.GetEntityConfig(zkutil.ConfigTypeBroker, entity)
		if err != nil {
			t.Fatal(err)
		}
		return cfg
	}
	a, b, two := "20000", "30000", "2"
	if err := admin.AlterConfig(sarama.BrokerResource, id, map[string]*string{"log.cleaner.backoff.ms": &a}, false); err != nil {
		t.Fatalf("alter: %v", err)
	}
	if err := admin.AlterConfig(sarama.BrokerResource, id, map[string]*string{"log.cleaner.threads": &two}, false); err != nil {
		t.Fatalf("alter again: %v", err)
	}
	if got := stored(id); len(got) != 1 || got["log.cleaner.threads"] != "2" {
		t.Fatalf("/config/brokers/%s = %v, want only log.cleaner.threads=2 (replaced)", id, got)
	}
	if err := admin.AlterConfig(sarama.BrokerResource, "", map[string]*string{"log.cleaner.backoff.ms": &b}, false); err != nil {
		t.Fatalf("alter cluster default: %v", err)
	}
	if got := stored("<default>")["log.cleaner.backoff.ms"]; got != b {
		t.Fatalf("/config/brokers/<default> log.cleaner.backoff.ms = %q, want %s", got, b)
	}
	err := admin.AlterConfig(sarama.BrokerResource, id, map[string]*string{"broker.id": &a}, false)
	if !errors.Is(err, sarama.ErrInvalidRequest) {
		t.Fatalf("static key: %v, want INVALID_REQUEST", err)
	}
	if got := stored(id); got["log.cleaner.threads"] != "2" {
		t.Fatalf("refused change altered the overrides: %v", got)
	}
}
