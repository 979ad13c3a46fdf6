package zkconsumer

import (
	"strings"
	"testing"
	"time"
)

// TestZKConsumerConfigDefaults checks Kafka's old-consumer defaults
// (ConsumerConfig.scala).
func TestZKConsumerConfigDefaults(t *testing.T) {
	c, unknown, err := ParseProperties(map[string]string{"group.id": "g", "zookeeper.connect": "zk:2181/kafka"})
	if err != nil || len(unknown) != 0 {
		t.Fatalf("err %v, unknown %v", err, unknown)
	}
	checks := []struct {
		name      string
		got, want any
	}{
		{"zookeeper.session.timeout.ms", c.ZooKeeperSessionTimeout, 6 * time.Second},
		{"rebalance.max.retries", c.RebalanceMaxRetries, 4},
		{"rebalance.backoff.ms", c.RebalanceBackoff, 2 * time.Second},
		{"rebalance.processing.wait.ms (Samsa)", c.RebalanceProcessingWait, 3 * time.Second},
		{"auto.offset.reset", c.AutoOffsetReset, "largest"},
		{"auto.commit.enable", c.AutoCommitEnable, true},
		{"auto.commit.interval.ms", c.AutoCommitInterval, 60 * time.Second},
		{"offsets.storage", c.OffsetsStorage, "zookeeper"},
		{"dual.commit.enabled (storage zookeeper)", c.DualCommitEnabled, false},
		{"consumer.timeout.ms", c.ConsumerTimeout, -time.Millisecond},
		{"fetch.message.max.bytes", c.FetchMessageMaxBytes, int32(1048576)},
		{"partition.assignment.strategy", c.PartitionAssignmentStrategy, "range"},
		{"exclude.internal.topics", c.ExcludeInternalTopics, true},
	}
	for _, ch := range checks {
		if ch.got != ch.want {
			t.Errorf("%s = %v, want %v", ch.name, ch.got, ch.want)
		}
	}
}

func TestZKConsumerParseProperties(t *testing.T) {
	c, unknown, err := ParseProperties(map[string]string{
		"group.id": "g", "zookeeper.connect": "zk:2181", "offsets.storage": "kafka",
		"rebalance.max.retries": "7", "rebalance.backoff.ms": "150", "consumer.timeout.ms": "500",
		"partition.assignment.strategy": "roundrobin", "auto.commit.enable": "false",
		"fetch.message.max.bytes": "2048", "socket.receive.buffer.bytes": "65536",
	})
	if err != nil {
		t.Fatal(err)
	}
	if len(unknown) != 1 || unknown[0] != "socket.receive.buffer.bytes" {
		t.Errorf("unknown = %v", unknown)
	}
	if !c.DualCommitEnabled {
		t.Error("dual.commit.enabled must default to true with offsets.storage=kafka")
	}
	if c.RebalanceMaxRetries != 7 || c.RebalanceBackoff != 150*time.Millisecond || c.ConsumerTimeout != 500*time.Millisecond ||
		c.PartitionAssignmentStrategy != "roundrobin" || c.AutoCommitEnable || c.FetchMessageMaxBytes != 2048 {
		t.Errorf("parsed %+v", c)
	}
}

// TestZKConsumerConfigErrors checks that every problem is reported at once.
func TestZKConsumerConfigErrors(t *testing.T) {
	_, _, err := ParseProperties(map[string]string{
		"auto.offset.reset": "earliest", "offsets.storage": "redis", "partition.assignment.strategy": "sticky",
		"rebalance.max.retries": "x",
	})
	if err == nil {
		t.Fatal("expected errors")
	}
	for _, want := range []string{"rebalance.max.retries", "group.id", "zookeeper.connect", "auto.offset.reset", "offsets.storage", "partition.assignment.strategy"} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("error does not mention %s: %v", want, err)
		}
	}
}
