package broker_test

import (
	"errors"
	"fmt"
	"strconv"
	"testing"
	"time"

	"github.com/IBM/sarama"

	"samsa/broker/brokertest"
)

// TestAPITopicConfigs: DescribeConfigs shows overrides as
// DYNAMIC_TOPIC_CONFIG; AlterConfigs and IncrementalAlterConfigs change
// them, and the change reaches the partitions through /config/changes
// (min.insync.replicas above the ISR makes acks=all fail with
// NOT_ENOUGH_REPLICAS).
func TestAPITopicConfigs(t *testing.T) {
	c := brokertest.NewCluster(t, 1)
	ret := "3600000"
	c.CreateTopic(t, "cfg", 1, 1, map[string]*string{"retention.ms": &ret})
	admin := c.Admin(t, brokertest.SaramaConfig(sarama.V2_8_0_0))
	entries, err := admin.DescribeConfig(sarama.ConfigResource{Type: sarama.TopicResource, Name: "cfg"})
	if err != nil {
		t.Fatal(err)
	}
	found := false
	for _, e := range entries {
		if e.Name == "retention.ms" {
			found = true
			if e.Value != ret || e.Source != sarama.SourceTopic {
				t.Errorf("retention.ms: %+v", e)
			}
		}
		if e.Name == "segment.bytes" && e.Source != sarama.SourceDefault {
			t.Errorf("segment.bytes source %v", e.Source)
		}
	}
	if !found || len(entries) < 20 {
		t.Fatalf("%d entries, retention.ms found %v", len(entries), found)
	}

	three := "3"
	if err := admin.AlterConfig(sarama.TopicResource, "cfg", map[string]*string{"min.insync.replicas": &three}, false); err != nil {
		t.Fatal(err)
	}
	cfg := brokertest.SaramaConfig(sarama.V2_8_0_0)
	cfg.Producer.RequiredAcks = sarama.WaitForAll
	cfg.Producer.Retry.Max = 0
	p := c.SyncProducer(t, cfg)
	brokertest.WaitFor(t, 30*time.Second, func() error {
		_, _, err := p.SendMessage(&sarama.ProducerMessage{Topic: "cfg", Value: sarama.StringEncoder("x")})
		if !errors.Is(err, sarama.ErrNotEnoughReplicas) {
			return fmt.Errorf("produce: %v, want NOT_ENOUGH_REPLICAS", err)
		}
		return nil
	})
	// AlterConfigs replaced every override: retention.ms is gone.
	entries, err = admin.DescribeConfig(sarama.ConfigResource{Type: sarama.TopicResource, Name: "cfg"})
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range entries {
		if e.Name == "retention.ms" && e.Source == sarama.SourceTopic {
			t.Errorf("retention.ms still overridden after AlterConfigs")
		}
	}
	// Incremental: delete the override again; acks=all works.
	if err := admin.IncrementalAlterConfig(sarama.TopicResource, "cfg", map[string]sarama.IncrementalAlterConfigsEntry{
		"min.insync.replicas": {Operation: sarama.IncrementalAlterConfigsOperationDelete},
	}, false); err != nil {
		t.Fatal(err)
	}
	brokertest.WaitFor(t, 30*time.Second, func() error {
		_, _, err := p.SendMessage(&sarama.ProducerMessage{Topic: "cfg", Value: sarama.StringEncoder("x")})
		return err
	})
	// Bad values are refused.
	bad := "-5"
	if err := admin.AlterConfig(sarama.TopicResource, "cfg", map[string]*string{"retention.bytes": &bad, "nope": &bad}, false); err == nil {
		t.Fatal("invalid config accepted")
	}
	// Broker configs of this broker.
	entries, err = admin.DescribeConfig(sarama.ConfigResource{Type: sarama.BrokerResource, Name: strconv.Itoa(int(c.Broker(0).ID()))})
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range entries {
		if e.Name == "auto.create.topics.enable" && (e.Value != "false" || e.Source != sarama.SourceStaticBroker) {
			t.Errorf("auto.create.topics.enable: %+v", e)
		}
	}
}

// TestAPIDynamicBrokerConfigDescribed: a dynamic broker override stored
// with IncrementalAlterConfigs is described with source
// DYNAMIC_BROKER_CONFIG.
func TestAPIDynamicBrokerConfigDescribed(t *testing.T) {
	c := brokertest.NewCluster(t, 1)
	admin := c.Admin(t, brokertest.SaramaConfig(sarama.V2_8_0_0))
	id := strconv.Itoa(int(c.Broker(0).ID()))
	v := "1000"
	if err := admin.IncrementalAlterConfig(sarama.BrokerResource, id, map[string]sarama.IncrementalAlterConfigsEntry{
		"max.connections.per.ip": {Operation: sarama.IncrementalAlterConfigsOperationSet, Value: &v},
	}, false); err != nil {
		t.Fatal(err)
	}
	entries, err := admin.DescribeConfig(sarama.ConfigResource{Type: sarama.BrokerResource, Name: id})
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range entries {
		if e.Name == "max.connections.per.ip" {
			if e.Value != v || e.Source != sarama.SourceDynamicBroker {
				t.Fatalf("described as %+v", e)
			}
			return
		}
	}
	t.Fatal("max.connections.per.ip not described")
}

// TestAPIAclsSecurityDisabled: without an authorizer the ACL APIs answer
// SECURITY_DISABLED, as Kafka.
func TestAPIAclsSecurityDisabled(t *testing.T) {
	c := brokertest.NewCluster(t, 1)
	admin := c.Admin(t, brokertest.SaramaConfig(sarama.V2_8_0_0))
	_, err := admin.ListAcls(sarama.AclFilter{ResourceType: sarama.AclResourceAny, Operation: sarama.AclOperationAny,
		PermissionType: sarama.AclPermissionAny, ResourcePatternTypeFilter: sarama.AclPatternAny})
	if !errors.Is(err, sarama.ErrSecurityDisabled) {
		t.Fatalf("ListAcls: %v, want SECURITY_DISABLED", err)
	}
}

// TestAPIClientQuotas: quotas set with AlterClientQuotas are stored in
// ZooKeeper and described with DescribeClientQuotas; removing the last
// value removes the entity from the description.
func TestAPIClientQuotas(t *testing.T) {
	c := brokertest.NewCluster(t, 1)
	admin := c.Admin(t, brokertest.SaramaConfig(sarama.V2_8_0_0))
	user := "alice smith"
	ent := []sarama.QuotaEntityComponent{{EntityType: sarama.QuotaEntityUser, MatchType: sarama.QuotaMatchExact, Name: user}}
	if err := admin.AlterClientQuotas(ent, sarama.ClientQuotasOp{Key: "producer_byte_rate", Value: 1024}, false); err != nil {
		t.Fatal(err)
	}
	got, err := admin.DescribeClientQuotas([]sarama.QuotaFilterComponent{{EntityType: sarama.QuotaEntityUser, MatchType: sarama.QuotaMatchExact, Match: user}}, false)
	if err != nil {
		t.Fatal(err)
	}
	if len(got) != 1 || got[0].Values["producer_byte_rate"] != 1024 {
		t.Fatalf("described %+v", got)
	}
	if err := admin.AlterClientQuotas(ent, sarama.ClientQuotasOp{Key: "no_such_quota", Value: 1}, false); err == nil {
		t.Fatal("unknown quota key accepted")
	}
	if err := admin.AlterClientQuotas(ent, sarama.ClientQuotasOp{Key: "producer_byte_rate", Remove: true}, false); err != nil {
		t.Fatal(err)
	}
	got, err = admin.DescribeClientQuotas(nil, false)
	if err != nil || len(got) != 0 {
		t.Fatalf("after removal: %+v %v", got, err)
	}
}
