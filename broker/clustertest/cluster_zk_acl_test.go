package clustertest_test

import (
	"errors"
	"reflect"
	"testing"

	"samsa/broker/brokertest"
	"samsa/zkutil"
)

// TestClusterZooKeeperSetACL: zookeeper.set.acl=true with a digest
// identity: the znodes the brokers create (registration, topic) belong to
// that identity and are world-readable; an unauthenticated ZooKeeper
// client cannot rewrite them.
func TestClusterZooKeeperSetACL(t *testing.T) {
	c := brokertest.NewCluster(t, 1, brokertest.WithProperty("zookeeper.set.acl", "true"),
		brokertest.WithZooKeeperAuth(zkutil.Credential{Scheme: "digest", Auth: []byte("broker:secret")}))
	c.CreateTopic(t, "t", 1, 1)
	// ZooKeeper shows another session the digest id with its hash masked
	// ("broker:x", ZOOKEEPER-1392).
	want := []zkutil.ZnodeACL{{Scheme: "digest", ID: "broker:x", Perms: zkutil.PermAll},
		{Scheme: "world", ID: "anyone", Perms: zkutil.PermRead}}
	anon := c.ZooKeeper(t)
	id := c.Broker(0).ID()
	for _, path := range []string{zkutil.BrokerIDPath(id), zkutil.TopicPath("t"), zkutil.PartitionStatePath("t", 0)} {
		got, err := anon.GetACL(path)
		if err != nil {
			t.Fatal(err)
		}
		if !reflect.DeepEqual(got, want) {
			t.Errorf("ACL of %s = %+v, want %+v", path, got, want)
		}
	}
	if _, err := anon.Set(zkutil.PartitionStatePath("t", 0), []byte(`{}`), zkutil.AnyVersion); !errors.Is(err, zkutil.ErrNoAuth) {
		t.Fatalf("unauthenticated rewrite of partition state: %v, want ErrNoAuth", err)
	}
	if err := anon.Delete(zkutil.BrokerIDPath(id), zkutil.AnyVersion); !errors.Is(err, zkutil.ErrNoAuth) {
		t.Fatalf("unauthenticated delete of a broker registration: %v, want ErrNoAuth", err)
	}
}
