package acls

import (
	"context"
	"errors"
	"fmt"
	"net"
	"strings"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kmsg"

	"samsa/broker/acl"
	"samsa/broker/brokertest"
	"samsa/broker/principal"
	"samsa/zkutil"
)

// The brokers and this test's admin calls come from 127.0.0.1, which the
// setup grants everything; the client under test connects from 127.0.0.2
// and gets only what kafka-acls grants it (every connection is
// User:ANONYMOUS until SASL exists).
const aclsClientIP = "127.0.0.2"

func aclsTestCluster(t *testing.T) *brokertest.Cluster {
	t.Helper()
	trusted := func(r acl.Resource) acl.Binding {
		return acl.Binding{Resource: r, Entry: acl.Entry{Principal: principal.Anonymous, Host: "127.0.0.1", Operation: acl.OpAll, Permission: acl.Allow}}
	}
	return brokertest.NewCluster(t, 2,
		brokertest.WithProperty("authorizer.class.name", "kafka.security.auth.SimpleAclAuthorizer"),
		brokertest.WithZooKeeperSetup(func(zk *zkutil.Client) {
			errs, _ := acl.NewStore(zk).Create([]acl.Binding{
				trusted(acl.Resource{Type: acl.ResourceCluster, Name: acl.ClusterName, Pattern: acl.PatternLiteral}),
				trusted(acl.Resource{Type: acl.ResourceTopic, Name: "*", Pattern: acl.PatternLiteral}),
			})
			for _, err := range errs {
				if err != nil {
					t.Fatal(err)
				}
			}
		}))
}

func clientDialer() *net.Dialer {
	return &net.Dialer{Timeout: 5 * time.Second, LocalAddr: &net.TCPAddr{IP: net.ParseIP(aclsClientIP)}}
}

// clientSeesTopic asks broker addr, from the client address, for the
// metadata of topic and reports whether it is visible.
func clientSeesTopic(ctx context.Context, addr, topic string) (bool, error) {
	d := clientDialer()
	cl, err := kgo.NewClient(kgo.SeedBrokers(addr), kgo.Dialer(d.DialContext))
	if err != nil {
		return false, err
	}
	defer cl.Close()
	req := kmsg.NewPtrMetadataRequest()
	mt := kmsg.NewMetadataRequestTopic()
	mt.Topic = kmsg.StringPtr(topic)
	req.Topics = append(req.Topics, mt)
	resp, err := req.RequestWith(ctx, cl)
	if err != nil {
		return false, err
	}
	return len(resp.Topics) == 1 && resp.Topics[0].ErrorCode == 0, nil
}

const aclsProducerBlock = " \t(principal=User:ANONYMOUS, host=127.0.0.2, operation=WRITE, permissionType=ALLOW)\n" +
	"\t(principal=User:ANONYMOUS, host=127.0.0.2, operation=DESCRIBE, permissionType=ALLOW)\n" +
	"\t(principal=User:ANONYMOUS, host=127.0.0.2, operation=CREATE, permissionType=ALLOW) \n\n"

// TestToolACLsAuthorizerPropertiesSeenWithinASecond: kafka-acls
// --authorizer-properties writes ZooKeeper directly; both running brokers
// apply it within a second, and a franz-go producer refused before is
// accepted after. Then --bootstrap-server lists and removes through the
// API, with Kafka's output.
func TestToolACLsAuthorizerPropertiesSeenWithinASecond(t *testing.T) {
	c := aclsTestCluster(t)
	c.CreateTopic(t, "t", 1, 1)
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	d := clientDialer()
	prod, err := kgo.NewClient(kgo.SeedBrokers(c.Addrs()...), kgo.Dialer(d.DialContext), kgo.RecordRetries(1))
	if err != nil {
		t.Fatal(err)
	}
	defer prod.Close()
	if err := prod.ProduceSync(ctx, &kgo.Record{Topic: "t", Value: []byte("x")}).FirstErr(); !errors.Is(err, kerr.TopicAuthorizationFailed) {
		t.Fatalf("produce before the ACL: %v", err)
	}

	out, errOut, code := runTool(t, "", "kafka-acls", "--authorizer-properties", "zookeeper.connect="+c.ZKConnect(),
		"--add", "--allow-principal", "User:ANONYMOUS", "--allow-host", aclsClientIP, "--producer", "--topic", "t")
	written := time.Now()
	if code != 0 || errOut != "" {
		t.Fatalf("kafka-acls --add: exit %d, stderr %q\n%s", code, errOut, out)
	}
	res := "`ResourcePattern(resourceType=TOPIC, name=t, patternType=LITERAL)`: \n"
	want := "Adding ACLs for resource " + res + aclsProducerBlock + "Current ACLs for resource " + res + aclsProducerBlock
	if out != want {
		t.Fatalf("kafka-acls --add printed\n%q\nwant\n%q", out, want)
	}
	// Within a second on every broker: the change notification's watch.
	brokertest.WaitFor(t, time.Second, func() error {
		for _, addr := range c.Addrs() {
			ok, err := clientSeesTopic(ctx, addr, "t")
			if err != nil {
				return err
			}
			if !ok {
				return fmt.Errorf("broker %s does not apply the new ACL yet", addr)
			}
		}
		return nil
	})
	t.Logf("both brokers applied the ACL %v after kafka-acls returned", time.Since(written))
	if err := prod.ProduceSync(ctx, &kgo.Record{Topic: "t", Value: []byte("x")}).FirstErr(); err != nil {
		t.Fatalf("produce after the ACL: %v", err)
	}

	boot := c.Addr(1)
	out, errOut, code = runTool(t, "", "kafka-acls", "--bootstrap-server", boot, "--list", "--topic", "t")
	if code != 0 || errOut != "" || out != "Current ACLs for resource "+res+aclsProducerBlock {
		t.Fatalf("kafka-acls --bootstrap-server --list: exit %d, stderr %q\n%q", code, errOut, out)
	}
	out, errOut, code = runTool(t, "", "kafka-acls", "--bootstrap-server", boot, "--remove", "--force",
		"--allow-principal", "User:ANONYMOUS", "--allow-host", aclsClientIP, "--operation", "Create", "--topic", "t")
	if code != 0 || errOut != "" {
		t.Fatalf("kafka-acls --remove: exit %d, stderr %q\n%s", code, errOut, out)
	}
	left := " \t(principal=User:ANONYMOUS, host=127.0.0.2, operation=WRITE, permissionType=ALLOW)\n" +
		"\t(principal=User:ANONYMOUS, host=127.0.0.2, operation=DESCRIBE, permissionType=ALLOW) \n\n"
	if !strings.HasSuffix(out, "Current ACLs for resource "+res+left) {
		t.Fatalf("after --remove the listing is\n%q", out)
	}
	// The znode holds what Kafka's AclAuthorizer reads.
	zk := c.ZooKeeper(t)
	data, _, err := zk.Get(zkutil.ACLResourcePath(zkutil.ACLResource{Type: "Topic", Name: "t", PatternType: zkutil.ACLPatternLiteral}))
	if err != nil {
		t.Fatal(err)
	}
	if string(data) != `{"version":1,"acls":[{"principal":"User:ANONYMOUS","permissionType":"Allow","operation":"Write","host":"127.0.0.2"},{"principal":"User:ANONYMOUS","permissionType":"Allow","operation":"Describe","host":"127.0.0.2"}]}` {
		t.Fatalf("/kafka-acl/Topic/t = %s", data)
	}
}

func TestToolACLsUsageErrors(t *testing.T) {
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"--list"}, "Missing required argument \"[authorizer-properties]\""},
		{[]string{"--authorizer-properties", "zookeeper.connect=127.0.0.1:1", "--add", "--list", "--topic", "t"}, "Command must include exactly one action: --list, --add, --remove. "},
		{[]string{"--authorizer-properties", "zookeeper.connect=127.0.0.1:1", "--add", "--producer"}, "With --producer you must specify a --topic"},
		{[]string{"--bootstrap-server", "127.0.0.1:1", "--authorizer-properties", "zookeeper.connect=x", "--list"}, "The --authorizer-properties option can only be used with --authorizer option"},
	} {
		_, errOut, code := runTool(t, "", append([]string{"kafka-acls"}, c.args...)...)
		if code != 1 || !strings.Contains(errOut, c.want) {
			t.Errorf("%v: exit %d, stderr %q, want %q", c.args, code, errOut, c.want)
		}
	}
}
