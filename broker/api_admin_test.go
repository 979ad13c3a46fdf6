package broker_test

import (
	"fmt"
	"testing"
	"time"

	"github.com/IBM/sarama"
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"

	"samsa/broker/brokertest"
)

func createTopicsReq(v int16, validateOnly bool, topics ...kmsg.CreateTopicsRequestTopic) *kmsg.CreateTopicsRequest {
	req := kmsg.NewPtrCreateTopicsRequest()
	req.SetVersion(v)
	req.TimeoutMillis = 30000
	req.ValidateOnly = validateOnly
	req.Topics = topics
	return req
}

func newTopic(name string, partitions int32, rf int16, configs map[string]string) kmsg.CreateTopicsRequestTopic {
	t := kmsg.NewCreateTopicsRequestTopic()
	t.Topic, t.NumPartitions, t.ReplicationFactor = name, partitions, rf
	for k, v := range configs {
		c := kmsg.NewCreateTopicsRequestTopicConfig()
		c.Name, c.Value = k, kmsg.StringPtr(v)
		t.Configs = append(t.Configs, c)
	}
	return t
}

// TestAPICreateTopicsValidation: Kafka's per-topic CreateTopics errors.
func TestAPICreateTopicsValidation(t *testing.T) {
	c := brokertest.NewCluster(t, 2)
	ctrl := c.Controller()
	rc := brokertest.DialRaw(t, c.Addr(ctrl))
	req := createTopicsReq(5, false,
		newTopic("ok", 2, 2, map[string]string{"retention.ms": "1000"}),
		newTopic("rf-too-big", 1, 3, nil),
		newTopic("no-partitions", 0, 1, nil),
		newTopic("bad/name", 1, 1, nil),
		newTopic("bad-config", 1, 1, map[string]string{"no.such.config": "1"}),
		newTopic("bad-value", 1, 1, map[string]string{"retention.ms": "soon"}),
		newTopic("defaults", -1, -1, nil),
	)
	kr, err := rc.RoundTrip(req)
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]int16{
		"ok": 0, "rf-too-big": kerr.InvalidReplicationFactor.Code, "no-partitions": kerr.InvalidPartitions.Code,
		"bad/name": kerr.InvalidTopicException.Code, "bad-config": kerr.InvalidConfig.Code,
		"bad-value": kerr.InvalidConfig.Code, "defaults": 0,
	}
	for _, rt := range kr.(*kmsg.CreateTopicsResponse).Topics {
		if rt.ErrorCode != want[rt.Topic] {
			msg := ""
			if rt.ErrorMessage != nil {
				msg = *rt.ErrorMessage
			}
			t.Errorf("%s: code %d, want %d (%s)", rt.Topic, rt.ErrorCode, want[rt.Topic], msg)
		}
		if rt.Topic == "ok" && (rt.NumPartitions != 2 || rt.ReplicationFactor != 2 || len(rt.Configs) == 0) {
			t.Errorf("ok: v5 fields %d %d %d configs", rt.NumPartitions, rt.ReplicationFactor, len(rt.Configs))
		}
	}
	// The answer waited for the leaders.
	if ps, ok := c.Broker(ctrl).Metadata().Partition("ok", 1); !ok || ps.Leader < 0 {
		t.Fatalf("ok-1 has no leader after CreateTopics returned: %+v", ps)
	}
	// Again: TOPIC_ALREADY_EXISTS; validate_only creates nothing.
	kr, err = rc.RoundTrip(createTopicsReq(5, false, newTopic("ok", 1, 1, nil)))
	if err != nil {
		t.Fatal(err)
	}
	if code := kr.(*kmsg.CreateTopicsResponse).Topics[0].ErrorCode; code != kerr.TopicAlreadyExists.Code {
		t.Errorf("existing topic: %d", code)
	}
	kr, err = rc.RoundTrip(createTopicsReq(1, true, newTopic("dry", 1, 1, nil)))
	if err != nil {
		t.Fatal(err)
	}
	if code := kr.(*kmsg.CreateTopicsResponse).Topics[0].ErrorCode; code != 0 {
		t.Errorf("validate_only: %d", code)
	}
	exists, err := c.Broker(ctrl).ZooKeeper().TopicExists("dry")
	if err != nil || exists {
		t.Errorf("validate_only created the topic: %v %v", exists, err)
	}
	// Another broker is not the controller.
	other := brokertest.DialRaw(t, c.Addr(1-ctrl))
	kr, err = other.RoundTrip(createTopicsReq(2, false, newTopic("elsewhere", 1, 1, nil)))
	if err != nil {
		t.Fatal(err)
	}
	if code := kr.(*kmsg.CreateTopicsResponse).Topics[0].ErrorCode; code != kerr.NotController.Code {
		t.Errorf("non-controller: %d", code)
	}
}

// TestAPIDeleteTopics: deletion marks the topic and waits until it has
// left the metadata; unknown topics answer UNKNOWN_TOPIC_OR_PARTITION.
func TestAPIDeleteTopics(t *testing.T) {
	c := brokertest.NewCluster(t, 1)
	c.CreateTopic(t, "doomed", 2, 1)
	admin := c.Admin(t, nil)
	if err := admin.DeleteTopic("doomed"); err != nil {
		t.Fatalf("delete: %v", err)
	}
	brokertest.WaitFor(t, 30*time.Second, func() error {
		if _, ok := c.Broker(0).Metadata().Topics["doomed"]; ok {
			return fmt.Errorf("topic still in metadata")
		}
		return nil
	})
	err := admin.DeleteTopic("never-was")
	if err == nil {
		t.Fatal("deleting an unknown topic succeeded")
	}
}

// TestAPIDeleteTopicsDisabled: delete.topic.enable=false answers
// TOPIC_DELETION_DISABLED.
func TestAPIDeleteTopicsDisabled(t *testing.T) {
	c := brokertest.NewCluster(t, 1, brokertest.WithProperty("delete.topic.enable", "false"))
	c.CreateTopic(t, "kept", 1, 1)
	rc := brokertest.DialRaw(t, c.Addr(0))
	req := kmsg.NewPtrDeleteTopicsRequest()
	req.SetVersion(4)
	req.TopicNames = []string{"kept"}
	req.TimeoutMillis = 1000
	kr, err := rc.RoundTrip(req)
	if err != nil {
		t.Fatal(err)
	}
	if code := kr.(*kmsg.DeleteTopicsResponse).Topics[0].ErrorCode; code != kerr.TopicDeletionDisabled.Code {
		t.Fatalf("code %d, want TOPIC_DELETION_DISABLED", code)
	}
}

// TestAPIMetadataAutoCreate: with auto.create.topics.enable a Metadata
// request that allows it creates the topic (LEADER_NOT_AVAILABLE until the
// leader exists); v4+ allow_auto_topic_creation=false does not.
func TestAPIMetadataAutoCreate(t *testing.T) {
	c := brokertest.NewCluster(t, 1, brokertest.WithProperty("auto.create.topics.enable", "true"),
		brokertest.WithProperty("num.partitions", "3"))
	rc := brokertest.DialRaw(t, c.Addr(0))
	md := func(topic string, allow bool) int16 {
		req := kmsg.NewPtrMetadataRequest()
		req.SetVersion(9)
		req.AllowAutoTopicCreation = allow
		rt := kmsg.NewMetadataRequestTopic()
		rt.Topic = kmsg.StringPtr(topic)
		req.Topics = append(req.Topics, rt)
		kr, err := rc.RoundTrip(req)
		if err != nil {
			t.Fatal(err)
		}
		return kr.(*kmsg.MetadataResponse).Topics[0].ErrorCode
	}
	if code := md("not-allowed", false); code != kerr.UnknownTopicOrPartition.Code {
		t.Fatalf("allow=false: %d", code)
	}
	if code := md("auto", true); code != kerr.LeaderNotAvailable.Code {
		t.Fatalf("first auto-create answer: %d", code)
	}
	brokertest.WaitFor(t, 30*time.Second, func() error {
		if code := md("auto", true); code != 0 {
			return fmt.Errorf("code %d", code)
		}
		return nil
	})
	if n := len(c.Broker(0).Metadata().Partitions("auto")); n != 3 {
		t.Fatalf("%d partitions, want num.partitions=3", n)
	}
	// Sarama producing to a new topic relies on it too.
	brokertest.ProduceConsume(t, c, brokertest.SaramaConfig(sarama.V2_1_0_0), "auto-sarama", 3, 10)
}

// TestAPIMetadataAutoCreateInternal: a Metadata request naming
// __consumer_offsets or __transaction_state before first use creates it with
// its own settings (offsets.topic.num.partitions, compact; Kafka's
// createInternalTopic), not num.partitions: otherwise every group hashing
// past the last partition never finds its coordinator (what left
// kafka-consumer-perf-test reading 0 records in bin/samsa-benchmark.sh
// -txn-only, where Sarama's transactional producer asked first).
func TestAPIMetadataAutoCreateInternal(t *testing.T) {
	c := brokertest.NewCluster(t, 1, brokertest.WithProperty("auto.create.topics.enable", "true"),
		brokertest.WithProperty("num.partitions", "1"), brokertest.WithProperty("offsets.topic.num.partitions", "5"),
		brokertest.WithProperty("transaction.state.log.num.partitions", "4"))
	rc := brokertest.DialRaw(t, c.Addr(0))
	req := kmsg.NewPtrMetadataRequest()
	req.SetVersion(9)
	req.AllowAutoTopicCreation = true
	for _, name := range []string{"__consumer_offsets", "__transaction_state"} {
		rt := kmsg.NewMetadataRequestTopic()
		rt.Topic = kmsg.StringPtr(name)
		req.Topics = append(req.Topics, rt)
	}
	if _, err := rc.RoundTrip(req); err != nil {
		t.Fatal(err)
	}
	want := map[string]int{"__consumer_offsets": 5, "__transaction_state": 4}
	brokertest.WaitFor(t, 30*time.Second, func() error {
		for name, n := range want {
			if got := len(c.Broker(0).Metadata().Partitions(name)); got != n {
				return fmt.Errorf("%s: %d partitions, want %d", name, got, n)
			}
		}
		return nil
	})
	dc := kmsg.NewPtrDescribeConfigsRequest()
	dr := kmsg.NewDescribeConfigsRequestResource()
	dr.ResourceType, dr.ResourceName, dr.ConfigNames = kmsg.ConfigResourceTypeTopic, "__consumer_offsets", []string{"cleanup.policy"}
	dc.Resources = append(dc.Resources, dr)
	kr, err := rc.RoundTrip(dc)
	if err != nil {
		t.Fatal(err)
	}
	if res := kr.(*kmsg.DescribeConfigsResponse).Resources; len(res) != 1 || len(res[0].Configs) != 1 ||
		res[0].Configs[0].Value == nil || *res[0].Configs[0].Value != "compact" {
		t.Fatalf("__consumer_offsets cleanup.policy: %+v", res)
	}
	// Every group finds its coordinator, whichever partition it hashes to.
	for i := 0; i < 20; i++ {
		group := fmt.Sprintf("g-%d", i)
		brokertest.WaitFor(t, 30*time.Second, func() error {
			fc := kmsg.NewPtrFindCoordinatorRequest()
			fc.SetVersion(2)
			fc.CoordinatorKey = group
			kr, err := rc.RoundTrip(fc)
			if err != nil {
				return err
			}
			if code := kr.(*kmsg.FindCoordinatorResponse).ErrorCode; code != 0 {
				return fmt.Errorf("%s: FindCoordinator code %d", group, code)
			}
			return nil
		})
	}
}
