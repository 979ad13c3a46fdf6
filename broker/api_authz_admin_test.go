package broker_test

import (
	"testing"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"

	"samsa/broker/acl"
	"samsa/broker/brokertest"
)

// TestAPIAuthzAdminAPIs: admin and coordinator APIs refuse a client
// without ACLs as Kafka 2.8 does (per-topic, per-resource and cluster
// errors; DescribeLogDirs empty, no error), and InitProducerId for an
// idempotent producer is allowed by Write on any topic (KIP-679).
func TestAPIAuthzAdminAPIs(t *testing.T) {
	c := authzCluster(t, 1, trustedHostACLs(true))
	c.CreateTopic(t, "t", 1, 1)
	rc := dialRawFrom(t, c.Addr(0), authzClientIP)

	azCheckAdminRefusals(t, rc)
	pid := kmsg.NewPtrInitProducerIDRequest()
	pid.SetVersion(2)
	pid.TransactionTimeoutMillis = 60000
	if r := mustRoundTrip(t, rc, pid).(*kmsg.InitProducerIDResponse); r.ErrorCode != kerr.ClusterAuthorizationFailed.Code || r.ProducerID != -1 {
		t.Fatalf("idempotent InitProducerId without IdempotentWrite or any Write: %+v", r)
	}
	fc := kmsg.NewPtrFindCoordinatorRequest()
	fc.SetVersion(2)
	fc.CoordinatorKey = "g"
	if r := mustRoundTrip(t, rc, fc).(*kmsg.FindCoordinatorResponse); r.ErrorCode != kerr.GroupAuthorizationFailed.Code || r.NodeID != -1 {
		t.Fatalf("FindCoordinator without Describe on the group: %+v", r)
	}

	azCheckAuthorizedOperations(t, c, rc)

	// Write on some other topic is enough for an idempotent producer id.
	admin := dialRawFrom(t, c.Addr(0), authzTrustedIP)
	cr := mustRoundTrip(t, admin, createACLsReq(acl.Binding{Resource: acl.Resource{Type: acl.ResourceTopic, Name: "logs-", Pattern: acl.PatternPrefixed},
		Entry: anonEntry(authzClientIP, acl.OpWrite, acl.Allow)})).(*kmsg.CreateACLsResponse)
	if cr.Results[0].ErrorCode != 0 {
		t.Fatalf("CreateAcls: %d", cr.Results[0].ErrorCode)
	}
	if r := mustRoundTrip(t, rc, pid).(*kmsg.InitProducerIDResponse); r.ErrorCode != 0 || r.ProducerID < 0 {
		t.Fatalf("idempotent InitProducerId with Write on a topic prefix: %+v", r)
	}
	// DeleteAcls through the trusted host; the client is back to nothing.
	da := kmsg.NewPtrDeleteACLsRequest()
	da.SetVersion(1)
	f := kmsg.NewDeleteACLsRequestFilter()
	f.ResourceType, f.ResourcePatternType, f.Operation, f.PermissionType = kmsg.ACLResourceTypeTopic, kmsg.ACLResourcePatternTypePrefixed, kmsg.ACLOperationAny, kmsg.ACLPermissionTypeAny
	da.Filters = append(da.Filters, f)
	dar := mustRoundTrip(t, admin, da).(*kmsg.DeleteACLsResponse)
	if len(dar.Results) != 1 || len(dar.Results[0].MatchingACLs) != 1 || dar.Results[0].MatchingACLs[0].ResourceName != "logs-" {
		t.Fatalf("DeleteAcls: %+v", dar.Results)
	}
	if r := mustRoundTrip(t, rc, pid).(*kmsg.InitProducerIDResponse); r.ErrorCode != kerr.ClusterAuthorizationFailed.Code {
		t.Fatalf("InitProducerId after the ACL was deleted: %+v", r)
	}
	if r := mustRoundTrip(t, rc, da).(*kmsg.DeleteACLsResponse); r.Results[0].ErrorCode != kerr.ClusterAuthorizationFailed.Code {
		t.Fatalf("DeleteAcls from the client: %+v", r.Results[0])
	}
}

// azCheckAdminRefusals: a client without grants is refused CreateTopics,
// DeleteTopics and DescribeConfigs with Kafka's codes and sees no log dirs.
func azCheckAdminRefusals(t *testing.T, rc *brokertest.RawConn) {
	t.Helper()
	ct := mustRoundTrip(t, rc, createTopicsReq(5, false, newTopic("x", 1, 1, nil))).(*kmsg.CreateTopicsResponse)
	if ct.Topics[0].ErrorCode != kerr.TopicAuthorizationFailed.Code || ct.Topics[0].ErrorMessage == nil || *ct.Topics[0].ErrorMessage != "Authorization failed." {
		t.Fatalf("CreateTopics without Create: %+v", ct.Topics[0])
	}
	dt := kmsg.NewPtrDeleteTopicsRequest()
	dt.SetVersion(4)
	dt.TimeoutMillis, dt.TopicNames = 5000, []string{"t", "missing"}
	for _, rt := range mustRoundTrip(t, rc, dt).(*kmsg.DeleteTopicsResponse).Topics {
		if rt.ErrorCode != kerr.TopicAuthorizationFailed.Code {
			t.Fatalf("DeleteTopics %s without Delete: code %d", *rt.Topic, rt.ErrorCode)
		}
	}
	dc := kmsg.NewPtrDescribeConfigsRequest()
	dc.SetVersion(3)
	for _, r := range []struct {
		typ  kmsg.ConfigResourceType
		name string
	}{{kmsg.ConfigResourceTypeBroker, "1"}, {kmsg.ConfigResourceTypeTopic, "t"}} {
		res := kmsg.NewDescribeConfigsRequestResource()
		res.ResourceType, res.ResourceName = r.typ, r.name
		dc.Resources = append(dc.Resources, res)
	}
	dcr := mustRoundTrip(t, rc, dc).(*kmsg.DescribeConfigsResponse)
	if dcr.Resources[0].ErrorCode != kerr.ClusterAuthorizationFailed.Code || dcr.Resources[1].ErrorCode != kerr.TopicAuthorizationFailed.Code || len(dcr.Resources[1].Configs) != 0 {
		t.Fatalf("DescribeConfigs without DescribeConfigs: %d %d", dcr.Resources[0].ErrorCode, dcr.Resources[1].ErrorCode)
	}
	ld := kmsg.NewPtrDescribeLogDirsRequest()
	ld.SetVersion(1)
	if ldr := mustRoundTrip(t, rc, ld).(*kmsg.DescribeLogDirsResponse); len(ldr.Dirs) != 0 {
		t.Fatalf("DescribeLogDirs without Describe on the cluster lists %d dirs", len(ldr.Dirs))
	}
}

// azCheckAuthorizedOperations: KIP-430 authorized operations are 0 for the
// client without Describe on the cluster, every allowed one for the trusted
// host.
func azCheckAuthorizedOperations(t *testing.T, c *brokertest.Cluster, rc *brokertest.RawConn) {
	t.Helper()
	md := metadataReq()
	md.SetVersion(10)
	md.IncludeClusterAuthorizedOperations, md.IncludeTopicAuthorizedOperations = true, true
	if r := mustRoundTrip(t, rc, md).(*kmsg.MetadataResponse); r.AuthorizedOperations != 0 {
		t.Fatalf("cluster authorized operations for the client: %b", r.AuthorizedOperations)
	}
	admin0 := dialRawFrom(t, c.Addr(0), authzTrustedIP)
	var clusterOps int32
	for _, op := range acl.SupportedOperations(acl.ResourceCluster) {
		clusterOps |= 1 << uint(op)
	}
	if r := mustRoundTrip(t, admin0, md).(*kmsg.MetadataResponse); r.AuthorizedOperations != clusterOps || len(r.Topics) != 1 || r.Topics[0].AuthorizedOperations == 0 {
		t.Fatalf("authorized operations for the trusted host: cluster %b (want %b), topics %+v", r.AuthorizedOperations, clusterOps, r.Topics)
	}
}
