package broker_test

import (
	"testing"

	"github.com/IBM/sarama"

	"samsa/broker/brokertest"
	"samsa/zkutil"
)

// TestAPITopicConfigChangeWritesOneNotification: AlterConfigs and
// IncrementalAlterConfigs on a topic each create exactly one sequential
// /config/changes/config_change_ znode naming topics/<topic>, as Kafka's
// AdminZkClient.changeTopicConfig does (the notifications stay for 15
// minutes, so counting them after each request is exact).
func TestAPITopicConfigChangeWritesOneNotification(t *testing.T) {
	c := brokertest.NewCluster(t, 1)
	c.CreateTopic(t, "onechange", 1, 1)
	admin := c.Admin(t, brokertest.SaramaConfig(sarama.V2_8_0_0))
	zk := c.ZooKeeper(t)
	changes := func() []string {
		t.Helper()
		nodes, err := zk.GetConfigChanges()
		if err != nil {
			t.Fatal(err)
		}
		return nodes
	}
	expectOneMore := func(what string, before []string) {
		t.Helper()
		after := changes()
		if len(after) != len(before)+1 {
			t.Fatalf("%s: %d config_change_ znodes, then %d (%v), want exactly one more", what, len(before), len(after), after)
		}
		entity, _, err := zk.ReadConfigChange(after[len(after)-1])
		if want := zkutil.ConfigTypeTopic + "/onechange"; err != nil || entity != want {
			t.Fatalf("%s: newest notification names %q (%v), want %q", what, entity, err, want)
		}
	}

	before := changes()
	ret := "3600000"
	if err := admin.AlterConfig(sarama.TopicResource, "onechange", map[string]*string{"retention.ms": &ret}, false); err != nil {
		t.Fatal(err)
	}
	expectOneMore("AlterConfigs", before)

	before = changes()
	seg := "2000000"
	err := admin.IncrementalAlterConfig(sarama.TopicResource, "onechange", map[string]sarama.IncrementalAlterConfigsEntry{
		"segment.bytes": {Operation: sarama.IncrementalAlterConfigsOperationSet, Value: &seg},
	}, false)
	if err != nil {
		t.Fatal(err)
	}
	expectOneMore("IncrementalAlterConfigs", before)

	// A validate-only request writes nothing.
	before = changes()
	if err := admin.AlterConfig(sarama.TopicResource, "onechange", map[string]*string{"retention.ms": &ret}, true); err != nil {
		t.Fatal(err)
	}
	if after := changes(); len(after) != len(before) {
		t.Fatalf("validate-only AlterConfigs: %d config_change_ znodes, then %d", len(before), len(after))
	}
}

// TestAPIClientQuotaChangeWritesOneNotification: AlterClientQuotas on a
// user creates exactly one config_change_ znode naming users/<user>, as
// Kafka's AdminZkClient.changeUserOrUserClientIdConfig does.
func TestAPIClientQuotaChangeWritesOneNotification(t *testing.T) {
	c := brokertest.NewCluster(t, 1)
	admin := c.Admin(t, brokertest.SaramaConfig(sarama.V2_8_0_0))
	zk := c.ZooKeeper(t)
	before, err := zk.GetConfigChanges()
	if err != nil {
		t.Fatal(err)
	}
	ent := []sarama.QuotaEntityComponent{{EntityType: sarama.QuotaEntityUser, MatchType: sarama.QuotaMatchExact, Name: "bob"}}
	if err := admin.AlterClientQuotas(ent, sarama.ClientQuotasOp{Key: "producer_byte_rate", Value: 2048}, false); err != nil {
		t.Fatal(err)
	}
	after, err := zk.GetConfigChanges()
	if err != nil {
		t.Fatal(err)
	}
	if len(after) != len(before)+1 {
		t.Fatalf("%d config_change_ znodes, then %d (%v), want exactly one more", len(before), len(after), after)
	}
	entity, _, err := zk.ReadConfigChange(after[len(after)-1])
	if want := zkutil.ConfigTypeUser + "/bob"; err != nil || entity != want {
		t.Fatalf("newest notification names %q (%v), want %q", entity, err, want)
	}
}
