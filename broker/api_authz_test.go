package broker_test

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/IBM/sarama"
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kmsg"

	"samsa/broker/acl"
	"samsa/broker/brokertest"
)

// TestAPIAuthzClientRefusedWithoutACLs: with the AclAuthorizer and no ACL
// for it, a client is refused produce, fetch and every topic's metadata,
// and cannot tell an existing topic from a missing one.
func TestAPIAuthzClientRefusedWithoutACLs(t *testing.T) {
	c := authzCluster(t, 1, trustedHostACLs(true))
	c.CreateTopic(t, "t", 1, 1)
	addr := c.Addr(0)

	cl := kgoFrom(t, c.Addrs(), authzClientIP, kgo.RecordRetries(1))
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	err := cl.ProduceSync(ctx, &kgo.Record{Topic: "t", Value: []byte("v")}).FirstErr()
	if !errors.Is(err, kerr.TopicAuthorizationFailed) {
		t.Fatalf("franz-go produce without Write: %v, want TOPIC_AUTHORIZATION_FAILED", err)
	}

	rc := dialRawFrom(t, addr, authzClientIP)
	if code := fetchErr(t, rc, -1, "t"); code != kerr.TopicAuthorizationFailed.Code {
		t.Fatalf("consumer fetch without Read: code %d", code)
	}
	all := mustRoundTrip(t, rc, metadataReq()).(*kmsg.MetadataResponse)
	if len(all.Topics) != 0 {
		t.Fatalf("all-topics metadata shows %d topics to a client without Describe", len(all.Topics))
	}
	named := mustRoundTrip(t, rc, metadataReq("t", "missing")).(*kmsg.MetadataResponse)
	for _, mt := range named.Topics {
		if mt.ErrorCode != kerr.TopicAuthorizationFailed.Code || len(mt.Partitions) != 0 {
			t.Fatalf("named metadata for %s: code %d, %d partitions (existence must not leak)", *mt.Topic, mt.ErrorCode, len(mt.Partitions))
		}
	}
	dreq := kmsg.NewPtrDescribeACLsRequest()
	dreq.SetVersion(1)
	dreq.ResourceType, dreq.ResourcePatternType, dreq.Operation, dreq.PermissionType = kmsg.ACLResourceTypeAny, kmsg.ACLResourcePatternTypeAny, kmsg.ACLOperationAny, kmsg.ACLPermissionTypeAny
	if d := mustRoundTrip(t, rc, dreq).(*kmsg.DescribeACLsResponse); d.ErrorCode != kerr.ClusterAuthorizationFailed.Code {
		t.Fatalf("DescribeAcls without Describe on the cluster: %d", d.ErrorCode)
	}
	// The trusted host sees it all, through the same broker.
	admin := dialRawFrom(t, addr, authzTrustedIP)
	if d := mustRoundTrip(t, admin, dreq).(*kmsg.DescribeACLsResponse); d.ErrorCode != 0 || len(d.Resources) != 3 {
		t.Fatalf("DescribeAcls from the trusted host: code %d, %d resources", d.ErrorCode, len(d.Resources))
	}
}

// TestAPIAuthzImpersonatingAFollowerOrController: a client with Read on a
// topic still cannot fetch as a replica (CVE-2018-1288), nor send
// LeaderAndIsr or UpdateMetadata; nothing changes on the broker.
func TestAPIAuthzImpersonatingAFollowerOrController(t *testing.T) {
	grants := append(trustedHostACLs(true),
		acl.Binding{Resource: litRes(acl.ResourceTopic, "t"), Entry: anonEntry(authzClientIP, acl.OpRead, acl.Allow)})
	c := authzCluster(t, 1, grants)
	c.CreateTopic(t, "t", 1, 1)
	rc := dialRawFrom(t, c.Addr(0), authzClientIP)
	if code := fetchErr(t, rc, -1, "t"); code != 0 {
		t.Fatalf("consumer fetch with Read: code %d", code)
	}
	if code := fetchErr(t, rc, c.Broker(0).ID(), "t"); code != kerr.TopicAuthorizationFailed.Code {
		t.Fatalf("fetch with replica_id %d from a client: code %d, want TOPIC_AUTHORIZATION_FAILED", c.Broker(0).ID(), code)
	}

	lisr := kmsg.NewPtrLeaderAndISRRequest()
	lisr.SetVersion(4)
	lisr.ControllerID, lisr.ControllerEpoch, lisr.BrokerEpoch = c.Broker(0).ID(), 1<<20, -1
	tps := kmsg.NewLeaderAndISRRequestTopicPartition()
	tps.Topic, tps.Partition, tps.ControllerEpoch, tps.Leader, tps.LeaderEpoch = "t", 0, 1<<20, -1, 1<<20
	tps.ISR, tps.Replicas = []int32{}, []int32{c.Broker(0).ID()}
	lisr.PartitionStates = append(lisr.PartitionStates, tps)
	if resp := mustRoundTrip(t, rc, lisr).(*kmsg.LeaderAndISRResponse); resp.ErrorCode != kerr.ClusterAuthorizationFailed.Code {
		t.Fatalf("LeaderAndIsr from a client: code %d", resp.ErrorCode)
	}
	um := kmsg.NewPtrUpdateMetadataRequest()
	um.SetVersion(6)
	um.ControllerID, um.ControllerEpoch, um.BrokerEpoch = c.Broker(0).ID(), 1<<20, -1
	if resp := mustRoundTrip(t, rc, um).(*kmsg.UpdateMetadataResponse); resp.ErrorCode != kerr.ClusterAuthorizationFailed.Code {
		t.Fatalf("UpdateMetadata from a client: code %d", resp.ErrorCode)
	}
	snap := c.Broker(0).Metadata()
	if ps, ok := snap.Partition("t", 0); !ok || ps.Leader != c.Broker(0).ID() || len(snap.BrokerIDs) != 1 {
		t.Fatalf("refused control requests changed the broker's view: %+v ok=%v brokers=%v", ps, ok, snap.BrokerIDs)
	}
	if code := fetchErr(t, rc, -1, "t"); code != 0 {
		t.Fatalf("the broker still leads t-0: consumer fetch code %d", code)
	}
}

// TestAPIAuthzCreateAclsPrefixedDenyAndMetadata: ACLs created through
// CreateAcls take effect on the next request: a prefixed Write grants
// produce and (implied) Describe, a literal Deny beats it, and the
// all-topics Metadata lists only what the client may describe.
func TestAPIAuthzCreateAclsPrefixedDenyAndMetadata(t *testing.T) {
	c := authzCluster(t, 1, trustedHostACLs(true))
	for _, tp := range []string{"app-orders", "app-payments", "other"} {
		c.CreateTopic(t, tp, 1, 1)
	}
	admin := dialRawFrom(t, c.Addr(0), authzTrustedIP)
	prefixed := acl.Resource{Type: acl.ResourceTopic, Name: "app-", Pattern: acl.PatternPrefixed}
	cr := mustRoundTrip(t, admin, createACLsReq(
		acl.Binding{Resource: prefixed, Entry: anonEntry(authzClientIP, acl.OpWrite, acl.Allow)},
		acl.Binding{Resource: litRes(acl.ResourceTopic, "app-payments"), Entry: anonEntry(authzClientIP, acl.OpAll, acl.Deny)},
		acl.Binding{Resource: litRes(acl.ResourceCluster, "not-the-cluster"), Entry: anonEntry("*", acl.OpAlter, acl.Allow)},
	)).(*kmsg.CreateACLsResponse)
	if len(cr.Results) != 3 || cr.Results[0].ErrorCode != 0 || cr.Results[1].ErrorCode != 0 || cr.Results[2].ErrorCode != kerr.InvalidRequest.Code {
		t.Fatalf("CreateAcls results %+v", cr.Results)
	}

	cl := kgoFrom(t, c.Addrs(), authzClientIP, kgo.RecordRetries(1))
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	if err := cl.ProduceSync(ctx, &kgo.Record{Topic: "app-orders", Value: []byte("v")}).FirstErr(); err != nil {
		t.Fatalf("produce with a prefixed Write: %v", err)
	}
	if err := cl.ProduceSync(ctx, &kgo.Record{Topic: "app-payments", Value: []byte("v")}).FirstErr(); !errors.Is(err, kerr.TopicAuthorizationFailed) {
		t.Fatalf("produce under a Deny: %v, want TOPIC_AUTHORIZATION_FAILED (deny beats allow)", err)
	}
	rc := dialRawFrom(t, c.Addr(0), authzClientIP)
	if code := fetchErr(t, rc, -1, "app-orders"); code != kerr.TopicAuthorizationFailed.Code {
		t.Fatalf("Write does not grant Read: fetch code %d", code)
	}
	all := mustRoundTrip(t, rc, metadataReq()).(*kmsg.MetadataResponse)
	if len(all.Topics) != 1 || *all.Topics[0].Topic != "app-orders" {
		var names []string
		for _, mt := range all.Topics {
			names = append(names, *mt.Topic)
		}
		t.Fatalf("all-topics metadata lists %v, want only app-orders", names)
	}
}

// TestAPIAuthzGroupsSarama: a Sarama consumer group with Read on the topic
// but not on the group is refused with GROUP_AUTHORIZATION_FAILED, and
// consumes once the group ACL exists.
func TestAPIAuthzGroupsSarama(t *testing.T) {
	grants := append(trustedHostACLs(true),
		acl.Binding{Resource: litRes(acl.ResourceTopic, "t"), Entry: anonEntry(authzClientIP, acl.OpRead, acl.Allow)})
	c := authzCluster(t, 1, grants)
	c.CreateTopic(t, "t", 1, 1)
	cfg := brokertest.SaramaConfig(sarama.V2_8_0_0)
	cfg.Net.LocalAddr = dialerFrom(authzClientIP).LocalAddr
	cfg.Consumer.Return.Errors = true
	cfg.Metadata.Retry.Backoff = 50 * time.Millisecond
	cfg.Consumer.Group.Rebalance.Retry.Backoff = 100 * time.Millisecond
	runSaramaGroupAuthz(t, c, cfg)
}

type saramaGroupHandler struct{ got chan string }

func (saramaGroupHandler) Setup(sarama.ConsumerGroupSession) error   { return nil }
func (saramaGroupHandler) Cleanup(sarama.ConsumerGroupSession) error { return nil }
func (h saramaGroupHandler) ConsumeClaim(s sarama.ConsumerGroupSession, claim sarama.ConsumerGroupClaim) error {
	for m := range claim.Messages() {
		select {
		case h.got <- string(m.Value):
		default:
		}
		s.MarkMessage(m, "")
	}
	return nil
}

func runSaramaGroupAuthz(t *testing.T, c *brokertest.Cluster, cfg *sarama.Config) {
	t.Helper()
	cfg.Consumer.Offsets.Initial = sarama.OffsetOldest
	prod := c.SyncProducer(t, nil)
	if _, _, err := prod.SendMessage(&sarama.ProducerMessage{Topic: "t", Value: sarama.StringEncoder("hello")}); err != nil {
		t.Fatal(err)
	}
	g, err := sarama.NewConsumerGroup(c.Addrs(), "g", cfg)
	if err != nil {
		t.Fatal(err)
	}
	defer g.Close()
	h := saramaGroupHandler{got: make(chan string, 1)}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	start := time.Now()
	err = g.Consume(ctx, []string{"t"}, h)
	t.Logf("refused after %v", time.Since(start))
	if !errors.Is(err, sarama.ErrGroupAuthorizationFailed) {
		t.Fatalf("Sarama group without Read on the group: %v, want GROUP_AUTHORIZATION_FAILED", err)
	}
	admin := dialRawFrom(t, c.Addr(0), authzTrustedIP)
	cr := mustRoundTrip(t, admin, createACLsReq(acl.Binding{Resource: litRes(acl.ResourceGroup, "g"),
		Entry: anonEntry(authzClientIP, acl.OpRead, acl.Allow)})).(*kmsg.CreateACLsResponse)
	if cr.Results[0].ErrorCode != 0 {
		t.Fatalf("CreateAcls: %d", cr.Results[0].ErrorCode)
	}
	done := make(chan error, 1)
	go func() {
		for ctx.Err() == nil {
			if err := g.Consume(ctx, []string{"t"}, h); err != nil && ctx.Err() == nil {
				done <- err
				return
			}
		}
		done <- nil
	}()
	select {
	case v := <-h.got:
		t.Logf("consumed after %v", time.Since(start))
		if v != "hello" {
			t.Fatalf("consumed %q", v)
		}
	case err := <-done:
		t.Fatalf("Sarama group with Read on group and topic: %v", err)
	case <-ctx.Done():
		t.Fatal("Sarama group with Read on group and topic consumed nothing")
	}
	cancel()
	<-done
}
