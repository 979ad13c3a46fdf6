package clustertest_test

import (
	"testing"

	"samsa/broker/brokertest"
	"samsa/broker/replica"
)

func TestMain(m *testing.M) { brokertest.Main(m) }

func replicaTP(topic string, p int32) replica.TopicPartition {
	return replica.TopicPartition{Topic: topic, Partition: p}
}
