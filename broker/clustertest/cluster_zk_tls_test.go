package clustertest_test

import (
	"context"
	"crypto/x509/pkix"
	"errors"
	"testing"
	"time"

	"github.com/IBM/sarama"

	"samsa/broker/brokertest"
	"samsa/zkutil"
	"samsa/zkutil/zktest"
)

// TestClusterZooKeeperTLS: a broker configured with zookeeper.ssl.* (KIP-515)
// registers, elects itself controller and serves a topic through
// ZooKeeper's TLS client port, presenting a client certificate
// (ssl.clientAuth=need on the server); a plaintext client cannot use that port.
// With zookeeper.set.acl the znodes belong to the certificate's x509
// identity: a plaintext session may read them but not change them.
func TestClusterZooKeeperTLS(t *testing.T) {
	srv := zktest.StartTLS(t)
	brokerCert := srv.CA.Client(t, pkix.Name{CommonName: "kafka-broker"})
	c := brokertest.NewCluster(t, 1,
		brokertest.WithProperty("zookeeper.connect", srv.SecureAddr+"/tls"),
		brokertest.WithProperty("zookeeper.ssl.client.enable", "true"),
		brokertest.WithProperty("zookeeper.set.acl", "true"),
		brokertest.WithProperty("zookeeper.clientCnxnSocket", "org.apache.zookeeper.ClientCnxnSocketNetty"),
		brokertest.WithProperty("zookeeper.ssl.keystore.location", brokerCert.WritePKCS12(t, srv.Dir, "broker.p12", "bpass")),
		brokertest.WithProperty("zookeeper.ssl.keystore.password", "bpass"),
		brokertest.WithProperty("zookeeper.ssl.truststore.location", srv.CA.WriteCAPEM(t, srv.Dir, "ca.pem")))
	c.CreateTopic(t, "over-tls", 1, 1)
	if _, _, err := c.SyncProducer(t, nil).SendMessage(&sarama.ProducerMessage{Topic: "over-tls", Value: sarama.StringEncoder("v")}); err != nil {
		t.Fatalf("produce: %v", err)
	}
	// The same ZooKeeper through its plaintext port holds what the broker wrote.
	zc, err := zkutil.Connect(context.Background(), zkutil.Config{Connect: srv.Addr + "/tls", SessionTimeout: 10 * time.Second})
	if err != nil {
		t.Fatal(err)
	}
	defer zc.Close()
	if ok, _, err := zc.Exists("/brokers/topics/over-tls"); err != nil || !ok {
		t.Fatalf("/brokers/topics/over-tls: %v %v", ok, err)
	}
	if _, err := zc.Set("/brokers/topics/over-tls", []byte("{}"), -1); !errors.Is(err, zkutil.ErrNoAuth) {
		t.Fatalf("a session without the broker's identity changed the topic znode: %v", err)
	}
	// A plaintext session on the TLS port fails.
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Second)
	defer cancel()
	if bad, err := zkutil.Connect(ctx, zkutil.Config{Connect: srv.SecureAddr, SessionTimeout: 2 * time.Second, ConnectionTimeout: 2 * time.Second}); err == nil {
		bad.Close()
		t.Fatal("a plaintext client got a session on ZooKeeper's TLS port")
	}
}

// TestClusterZooKeeperJAASClientDigest: the JAAS file's Client section
// (java.security.auth.login.config) gives the broker its ZooKeeper
// identity, so zookeeper.set.acl=true starts and its znodes can be changed
// only by a session with the same credentials.
func TestClusterZooKeeperJAASClientDigest(t *testing.T) {
	srv, jaas := zktest.StartDigest(t)
	connect := srv.Addr + "/digest"
	c := brokertest.NewCluster(t, 1,
		brokertest.WithProperty("zookeeper.connect", connect),
		brokertest.WithProperty("java.security.auth.login.config", jaas),
		brokertest.WithProperty("zookeeper.set.acl", "true"))
	c.CreateTopic(t, "digest", 1, 1)
	anon, same := zktest.DigestSessions(t, connect)
	if _, err := anon.Set("/brokers/topics/digest", []byte("{}"), -1); !errors.Is(err, zkutil.ErrNoAuth) {
		t.Fatalf("an unauthenticated session changed a broker znode: %v", err)
	}
	data, _, err := same.Get("/brokers/topics/digest")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := same.Set("/brokers/topics/digest", data, -1); err != nil {
		t.Fatalf("the brokers' own identity cannot change its znode: %v", err)
	}
}
