package clustertest_test

import (
	"context"
	"crypto/x509/pkix"
	"errors"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/IBM/sarama"

	"samsa/broker/brokertest"
	"samsa/broker/security/tlsconf/tlstest"
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
	dir := t.TempDir()
	ca := tlstest.NewCA(t, "zk-ca")
	srv, err := zktest.StartTLSServer(zktest.TLSConfig{
		KeyStore: ca.Server(t, "zookeeper").WritePKCS12(t, dir, "zk.p12", "zkpass"), KeyStorePassword: "zkpass", KeyStoreType: "PKCS12",
		TrustStore: ca.WriteTrustPKCS12(t, dir, "zktrust.p12", "trustpass"), TrustStorePassword: "trustpass", TrustStoreType: "PKCS12",
		ClientAuth: "need",
	})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(srv.Stop)
	brokerCert := ca.Client(t, pkix.Name{CommonName: "kafka-broker"})
	c := brokertest.NewCluster(t, 1,
		brokertest.WithProperty("zookeeper.connect", srv.SecureAddr+"/tls"),
		brokertest.WithProperty("zookeeper.ssl.client.enable", "true"),
		brokertest.WithProperty("zookeeper.set.acl", "true"),
		brokertest.WithProperty("zookeeper.clientCnxnSocket", "org.apache.zookeeper.ClientCnxnSocketNetty"),
		brokertest.WithProperty("zookeeper.ssl.keystore.location", brokerCert.WritePKCS12(t, dir, "broker.p12", "bpass")),
		brokertest.WithProperty("zookeeper.ssl.keystore.password", "bpass"),
		brokertest.WithProperty("zookeeper.ssl.truststore.location", ca.WriteCAPEM(t, dir, "ca.pem")))
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
	jaas := filepath.Join(t.TempDir(), "kafka_server_jaas.conf")
	if err := os.WriteFile(jaas, []byte(`Client {
   org.apache.zookeeper.server.auth.DigestLoginModule required
   username="kafka"
   password="kafka-secret";
};
`), 0o600); err != nil {
		t.Fatal(err)
	}
	// A ZooKeeper of its own: the secure ACLs would otherwise lock the
	// shared server's /samsa parent for every later test.
	srv, err := zktest.StartServer()
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(srv.Stop)
	connect := srv.Addr + "/digest"
	c := brokertest.NewCluster(t, 1,
		brokertest.WithProperty("zookeeper.connect", connect),
		brokertest.WithProperty("java.security.auth.login.config", jaas),
		brokertest.WithProperty("zookeeper.set.acl", "true"))
	c.CreateTopic(t, "digest", 1, 1)
	anon, err := zkutil.Connect(context.Background(), zkutil.Config{Connect: connect, SessionTimeout: 10 * time.Second})
	if err != nil {
		t.Fatal(err)
	}
	defer anon.Close()
	if _, err := anon.Set("/brokers/topics/digest", []byte("{}"), -1); !errors.Is(err, zkutil.ErrNoAuth) {
		t.Fatalf("an unauthenticated session changed a broker znode: %v", err)
	}
	same, err := zkutil.Connect(context.Background(), zkutil.Config{Connect: connect, SessionTimeout: 10 * time.Second,
		Auth: []zkutil.Credential{{Scheme: "digest", Auth: []byte("kafka:kafka-secret")}}})
	if err != nil {
		t.Fatal(err)
	}
	defer same.Close()
	data, _, err := same.Get("/brokers/topics/digest")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := same.Set("/brokers/topics/digest", data, -1); err != nil {
		t.Fatalf("the brokers' own identity cannot change its znode: %v", err)
	}
}
