package broker_test

import (
	"testing"

	"samsa/broker/brokertest"
	"samsa/kafka"
)

func TestMain(m *testing.M) { brokertest.Main(m) }

func replicaTP(topic string, p int32) kafka.TopicPartition {
	return kafka.TopicPartition{Topic: topic, Partition: p}
}
