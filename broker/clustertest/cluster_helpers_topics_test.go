package clustertest_test

import (
	"testing"

	"github.com/IBM/sarama"
)

// createAssigned creates topic through admin with the replica assignment
// (partition -> brokers, preferred leader first) and configs, as
// kafka-topics --replica-assignment does.
func createAssigned(t *testing.T, admin sarama.ClusterAdmin, topic string, assignment map[int32][]int32, configs map[string]*string) {
	t.Helper()
	if err := admin.CreateTopic(topic, &sarama.TopicDetail{NumPartitions: -1, ReplicationFactor: -1,
		ReplicaAssignment: assignment, ConfigEntries: configs}, false); err != nil {
		t.Fatalf("create %s: %v", topic, err)
	}
}
