package broker_test

import (
	"testing"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"

	"samsa/broker/brokertest"
)

// TestAPIAuthzTransactionPartitionSide: Kafka 2.8's checks on the
// partition-side transaction APIs: WriteTxnMarkers needs ClusterAction on
// the cluster (CLUSTER_AUTHORIZATION_FAILED, nothing appended),
// DescribeProducers Read on the topic (TOPIC_AUTHORIZATION_FAILED); the
// trusted host has both.
func TestAPIAuthzTransactionPartitionSide(t *testing.T) {
	c := authzCluster(t, 1, trustedHostACLs(true))
	c.CreateTopic(t, "tx", 1, 1)
	c.WaitForLeader(t, "tx", 0)
	client := dialRawFrom(t, c.Addr(0), authzClientIP)
	trusted := dialRawFrom(t, c.Addr(0), authzTrustedIP)
	if code := brokertest.WriteMarker(t, client, "tx", 5, 0, false, 0); code != kerr.ClusterAuthorizationFailed.Code {
		t.Fatalf("WriteTxnMarkers without ClusterAction: %v", kerr.ErrorForCode(code))
	}
	if leo := brokertest.ListLatest(t, trusted, "tx", 0); leo != 0 {
		t.Fatalf("a refused marker was appended: latest %d", leo)
	}
	if code := brokertest.WriteMarker(t, trusted, "tx", 5, 0, false, 0); code != 0 {
		t.Fatalf("WriteTxnMarkers from the trusted host: %v", kerr.ErrorForCode(code))
	}
	describe := func(rc *brokertest.RawConn) int16 {
		req := kmsg.NewPtrDescribeProducersRequest()
		dt := kmsg.NewDescribeProducersRequestTopic()
		dt.Topic, dt.Partitions = "tx", []int32{0}
		req.Topics = append(req.Topics, dt)
		return mustRoundTrip(t, rc, req).(*kmsg.DescribeProducersResponse).Topics[0].Partitions[0].ErrorCode
	}
	if code := describe(client); code != kerr.TopicAuthorizationFailed.Code {
		t.Fatalf("DescribeProducers without Read: %v", kerr.ErrorForCode(code))
	}
	if code := describe(trusted); code != 0 {
		t.Fatalf("DescribeProducers from the trusted host: %v", kerr.ErrorForCode(code))
	}
}
