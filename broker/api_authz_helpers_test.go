package broker_test

import (
	"context"
	"net"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kmsg"

	"samsa/broker/acl"
	"samsa/broker/brokertest"
	"samsa/broker/principal"
	"samsa/zkutil"
)

// Until SASL lands every connection is User:ANONYMOUS, so these tests tell
// the trusted side from the client by host, with Kafka's host-matching
// ACLs: brokers and the test's admin connect from 127.0.0.1 (granted
// everything below), the client under test from authzClientIP, which no
// ACL grants anything until a test says so.
const (
	authzTrustedIP = "127.0.0.1"
	authzClientIP  = "127.0.0.2"
)

func anonEntry(host string, op acl.Operation, perm acl.Permission) acl.Entry {
	return acl.Entry{Principal: principal.Anonymous, Host: host, Operation: op, Permission: perm}
}

func litRes(t acl.ResourceType, name string) acl.Resource {
	return acl.Resource{Type: t, Name: name, Pattern: acl.PatternLiteral}
}

// trustedHostACLs lets 127.0.0.1 do everything on the cluster, and on every
// topic and group when allTopics is set.
func trustedHostACLs(allTopics bool) []acl.Binding {
	out := []acl.Binding{{Resource: litRes(acl.ResourceCluster, acl.ClusterName), Entry: anonEntry(authzTrustedIP, acl.OpAll, acl.Allow)}}
	if allTopics {
		out = append(out,
			acl.Binding{Resource: litRes(acl.ResourceTopic, acl.Wildcard), Entry: anonEntry(authzTrustedIP, acl.OpAll, acl.Allow)},
			acl.Binding{Resource: litRes(acl.ResourceGroup, acl.Wildcard), Entry: anonEntry(authzTrustedIP, acl.OpAll, acl.Allow)})
	}
	return out
}

// authzCluster starts n brokers with the AclAuthorizer and the given
// bindings in ZooKeeper before they start.
func authzCluster(t testing.TB, n int, bindings []acl.Binding, opts ...brokertest.Option) *brokertest.Cluster {
	t.Helper()
	opts = append([]brokertest.Option{
		brokertest.WithProperty("authorizer.class.name", acl.ClassAclAuthorizer),
		brokertest.WithZooKeeperSetup(func(zk *zkutil.Client) { brokertest.WriteACLs(t, zk, bindings...) }),
	}, opts...)
	return brokertest.NewCluster(t, n, opts...)
}

func dialerFrom(ip string) *net.Dialer {
	return &net.Dialer{Timeout: 5 * time.Second, LocalAddr: &net.TCPAddr{IP: net.ParseIP(ip)}}
}

// dialRawFrom is dialRaw from a chosen loopback address.
func dialRawFrom(t testing.TB, addr, ip string) *brokertest.RawConn {
	t.Helper()
	c, err := dialerFrom(ip).Dial("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	return brokertest.NewRawConn(t, c)
}

// kgoFrom is a franz-go client connecting from ip.
func kgoFrom(t testing.TB, addrs []string, ip string, opts ...kgo.Opt) *kgo.Client {
	t.Helper()
	d := dialerFrom(ip)
	cl, err := kgo.NewClient(append([]kgo.Opt{kgo.SeedBrokers(addrs...),
		kgo.Dialer(func(ctx context.Context, network, host string) (net.Conn, error) {
			return d.DialContext(ctx, network, host)
		}),
		kgo.RetryTimeout(10 * time.Second)}, opts...)...)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(cl.Close)
	return cl
}

func mustRoundTrip(t testing.TB, rc *brokertest.RawConn, req kmsg.Request) kmsg.Response {
	t.Helper()
	resp, err := rc.RoundTrip(req)
	if err != nil {
		t.Fatalf("%T: %v", req, err)
	}
	return resp
}

func metadataReq(topics ...string) *kmsg.MetadataRequest {
	req := kmsg.NewPtrMetadataRequest()
	req.SetVersion(9)
	if topics != nil {
		req.Topics = []kmsg.MetadataRequestTopic{}
	}
	for _, tp := range topics {
		mt := kmsg.NewMetadataRequestTopic()
		mt.Topic = kmsg.StringPtr(tp)
		req.Topics = append(req.Topics, mt)
	}
	return req
}

func fetchErr(t testing.TB, rc *brokertest.RawConn, replicaID int32, topic string) int16 {
	t.Helper()
	resp := mustRoundTrip(t, rc, brokertest.FetchRequest(replicaID, 10, topic)).(*kmsg.FetchResponse)
	if len(resp.Topics) != 1 || len(resp.Topics[0].Partitions) != 1 {
		t.Fatalf("fetch answer %+v", resp)
	}
	return resp.Topics[0].Partitions[0].ErrorCode
}

// createACLsReq is a CreateAcls v1 of anonymous bindings.
func createACLsReq(bindings ...acl.Binding) *kmsg.CreateACLsRequest {
	req := kmsg.NewPtrCreateACLsRequest()
	req.SetVersion(1)
	for _, bd := range bindings {
		c := kmsg.NewCreateACLsRequestCreation()
		c.ResourceType, c.ResourceName = kmsg.ACLResourceType(bd.Resource.Type), bd.Resource.Name
		c.ResourcePatternType = kmsg.ACLResourcePatternType(bd.Resource.Pattern)
		c.Principal, c.Host = bd.Entry.Principal.String(), bd.Entry.Host
		c.Operation, c.PermissionType = kmsg.ACLOperation(bd.Entry.Operation), kmsg.ACLPermissionType(bd.Entry.Permission)
		req.Creations = append(req.Creations, c)
	}
	return req
}
