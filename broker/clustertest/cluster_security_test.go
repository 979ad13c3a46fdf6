package clustertest_test

import (
	"context"
	"crypto/tls"
	"crypto/x509/pkix"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/IBM/sarama"
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kmsg"
	"github.com/twmb/franz-go/pkg/sasl"
	"github.com/twmb/franz-go/pkg/sasl/plain"
	kscram "github.com/twmb/franz-go/pkg/sasl/scram"

	"samsa/broker/acl"
	"samsa/broker/brokertest"
	"samsa/broker/principal"
	"samsa/kafka"
)

// saramaSCRAM adapts franz-go's SCRAM client to Sarama's SCRAMClient.
type saramaSCRAM struct {
	mech    func(kscram.Auth) sasl.Mechanism
	sess    sasl.Session
	first   []byte
	started bool
	done    bool
}

func (s *saramaSCRAM) Begin(user, password, authzID string) error {
	sess, first, err := s.mech(kscram.Auth{User: user, Pass: password, Zid: authzID}).Authenticate(context.Background(), "")
	s.sess, s.first = sess, first
	return err
}

func (s *saramaSCRAM) Step(challenge string) (string, error) {
	if !s.started {
		s.started = true
		return string(s.first), nil
	}
	done, next, err := s.sess.Challenge([]byte(challenge))
	s.done = done
	return string(next), err
}

func (s *saramaSCRAM) Done() bool { return s.done }

func saramaSASLConfig(sc *brokertest.SecureCluster, user, password string) *sarama.Config {
	cfg := brokertest.SaramaConfig(sarama.V2_1_0_0)
	cfg.Net.TLS.Enable = true
	cfg.Net.TLS.Config = sc.ClientTLS()
	cfg.Net.SASL.Enable = true
	cfg.Net.SASL.Mechanism = sarama.SASLTypeSCRAMSHA512
	cfg.Net.SASL.User, cfg.Net.SASL.Password = user, password
	cfg.Net.SASL.SCRAMClientGeneratorFunc = func() sarama.SCRAMClient {
		return &saramaSCRAM{mech: func(a kscram.Auth) sasl.Mechanism { return a.AsSha512Mechanism() }}
	}
	cfg.Producer.Return.Successes = true
	cfg.Metadata.Retry.Max = 1
	return cfg
}

// TestClusterSASLSSLReplicationAndClients: two brokers that replicate over a
// SASL_SSL inter-broker listener (SCRAM-SHA-512 as admin, credentials in
// /config/users), and Sarama and franz-go clients producing and consuming
// over SASL_SSL with SCRAM-SHA-512; a wrong password is refused with
// SASL_AUTHENTICATION_FAILED.
func TestClusterSASLSSLReplicationAndClients(t *testing.T) {
	sc := brokertest.NewSecureCluster(t, 2)
	sc.CreateTopic(t, "secure", 1, 2)
	sc.WaitForISR(t, "secure", 0, 2) // the follower fetches over INTERNAL (SASL_SSL)

	cfg := saramaSASLConfig(sc, "alice", "alice-secret")
	p, err := sarama.NewSyncProducer(sc.SASLAddrs(), cfg)
	if err != nil {
		t.Fatalf("sarama over SASL_SSL: %v", err)
	}
	defer p.Close()
	for i := 0; i < 10; i++ {
		if _, _, err := p.SendMessage(&sarama.ProducerMessage{Topic: "secure", Value: sarama.StringEncoder(fmt.Sprintf("s-%d", i))}); err != nil {
			t.Fatalf("sarama produce: %v", err)
		}
	}

	cl, err := kgo.NewClient(kgo.SeedBrokers(sc.SASLAddrs()...), kgo.DialTLSConfig(sc.ClientTLS()),
		kgo.SASL(kscram.Auth{User: "alice", Pass: "alice-secret"}.AsSha512Mechanism()),
		kgo.ConsumeTopics("secure"), kgo.ConsumeResetOffset(kgo.NewOffset().AtStart()))
	if err != nil {
		t.Fatal(err)
	}
	defer cl.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	if err := cl.ProduceSync(ctx, &kgo.Record{Topic: "secure", Value: []byte("franz")}).FirstErr(); err != nil {
		t.Fatalf("franz-go produce over SASL_SSL: %v", err)
	}
	var got []string
	for len(got) < 11 {
		fs := cl.PollFetches(ctx)
		if err := ctx.Err(); err != nil {
			t.Fatalf("consumed %d of 11 records: %v", len(got), err)
		}
		fs.EachError(func(_ string, _ int32, err error) { t.Fatalf("fetch: %v", err) })
		fs.EachRecord(func(r *kgo.Record) { got = append(got, string(r.Value)) })
	}
	if got[0] != "s-0" || got[10] != "franz" {
		t.Fatalf("records %v", got)
	}
	// Both replicas hold all 11 records: the follower fetched them over
	// INTERNAL (SASL_SSL, SCRAM-SHA-512), the only listener it may use.
	brokertest.WaitFor(t, 30*time.Second, func() error {
		for i := 0; i < sc.N(); i++ {
			p := sc.Broker(i).Replicas().Partition(kafka.TopicPartition{Topic: "secure", Partition: 0})
			if p == nil || p.Log() == nil || p.Log().LogEndOffset() != 11 {
				return fmt.Errorf("broker %d has not replicated the 11 records", i)
			}
		}
		return nil
	})

	_, err = sarama.NewClient(sc.SASLAddrs(), saramaSASLConfig(sc, "alice", "wrong"))
	if err == nil || !strings.Contains(err.Error(), "SASL Authentication failed") {
		t.Fatalf("wrong password: %v, want SASL authentication failure", err)
	}
	bad, err := kgo.NewClient(kgo.SeedBrokers(sc.SASLAddrs()...), kgo.DialTLSConfig(sc.ClientTLS()),
		kgo.SASL(kscram.Auth{User: "mallory", Pass: "x"}.AsSha256Mechanism()))
	if err != nil {
		t.Fatal(err)
	}
	defer bad.Close()
	err = bad.Ping(ctx)
	var ke interface{ Error() string }
	if err == nil || !errors.As(err, &ke) || !strings.Contains(err.Error(), "SASL_AUTHENTICATION_FAILED") {
		t.Fatalf("unknown user: %v", err)
	}
}

// TestClusterSASLSSLKcatAndKafkaPython: librdkafka (kcat) and kafka-python
// produce and consume over SASL_SSL with SCRAM-SHA-512, kcat also with
// PLAIN; a wrong password fails.
func TestClusterSASLSSLKcatAndKafkaPython(t *testing.T) {
	kcat := needTool(t, "kcat")
	sc := brokertest.NewSecureCluster(t, 1)
	sc.CreateTopic(t, "kc", 1, 1)
	bootstrap := sc.ListenerAddrs("SASL_SSL")
	scramArgs := []string{"-b", bootstrap, "-X", "security.protocol=SASL_SSL", "-X", "sasl.mechanisms=SCRAM-SHA-512",
		"-X", "sasl.username=alice", "-X", "sasl.password=alice-secret", "-X", "ssl.ca.location=" + sc.CAFile}
	run(t, "k1\nk2\n", kcat, append(scramArgs, "-P", "-t", "kc")...)
	plainArgs := []string{"-b", bootstrap, "-X", "security.protocol=SASL_SSL", "-X", "sasl.mechanisms=PLAIN",
		"-X", "sasl.username=bob", "-X", "sasl.password=bob-secret", "-X", "ssl.ca.location=" + sc.CAFile}
	run(t, "k3\n", kcat, append(plainArgs, "-P", "-t", "kc")...)
	got := run(t, "", kcat, append(scramArgs, "-C", "-t", "kc", "-o", "beginning", "-e", "-q")...)
	if strings.Fields(got)[0] != "k1" || len(strings.Fields(got)) != 3 {
		t.Fatalf("kcat consumed %q", got)
	}
	bad := exec.Command(kcat, "-b", bootstrap, "-X", "security.protocol=SASL_SSL", "-X", "sasl.mechanisms=SCRAM-SHA-512",
		"-X", "sasl.username=alice", "-X", "sasl.password=nope", "-X", "ssl.ca.location="+sc.CAFile, "-L", "-m", "10")
	out, err := bad.CombinedOutput()
	if err == nil || !strings.Contains(string(out), "Authentication failed") {
		t.Fatalf("kcat with a wrong password: %v\n%s", err, out)
	}

	py := needTool(t, "/usr/bin/python3")
	if err := exec.Command(py, "-c", "import kafka").Run(); err != nil {
		if os.Getenv("CI") != "" {
			t.Fatalf("python3-kafka is required in CI: %v", err)
		}
		t.Skipf("python3-kafka not installed: %v", err)
	}
	script := `
import sys
from kafka import KafkaProducer, KafkaConsumer
bs, ca = sys.argv[1].split(","), sys.argv[2]
sec = dict(security_protocol="SASL_SSL", sasl_mechanism="SCRAM-SHA-512", sasl_plain_username="alice",
           sasl_plain_password="alice-secret", ssl_cafile=ca, ssl_check_hostname=True)
p = KafkaProducer(bootstrap_servers=bs, acks="all", **sec)
for i in range(5):
    p.send("kc", value=("py%d" % i).encode()).get(timeout=30)
p.close()
c = KafkaConsumer("kc", bootstrap_servers=bs, auto_offset_reset="earliest", group_id=None,
                  consumer_timeout_ms=15000, **sec)
vals = [m.value.decode() for _, m in zip(range(8), c)]
c.close()
print(len(vals), vals[-1])
`
	if out := run(t, "", py, "-c", script, bootstrap, sc.CAFile); strings.TrimSpace(out) != "8 py4" {
		t.Fatalf("kafka-python over SASL_SSL: %q", out)
	}
}

// TestClusterMutualTLSClients: on an SSL listener with ssl.client.auth=required,
// Sarama, franz-go and kcat with a client certificate produce and consume;
// without one the handshake fails.
func TestClusterMutualTLSClients(t *testing.T) {
	sc := brokertest.NewSecureCluster(t, 1)
	sc.CreateTopic(t, "mtls", 1, 1)
	client := sc.CA.Client(t, pkix.Name{CommonName: "alice", Organization: []string{"Acme"}})
	withCert := sc.ClientTLS()
	withCert.Certificates = []tls.Certificate{client.TLS()}
	bootstrap := sc.ListenerAddrs("SSL")

	cfg := brokertest.SaramaConfig(sarama.V2_1_0_0)
	cfg.Net.TLS.Enable, cfg.Net.TLS.Config = true, withCert
	cfg.Producer.Return.Successes = true
	p, err := sarama.NewSyncProducer([]string{bootstrap}, cfg)
	if err != nil {
		t.Fatalf("sarama with a client certificate: %v", err)
	}
	if _, _, err := p.SendMessage(&sarama.ProducerMessage{Topic: "mtls", Value: sarama.StringEncoder("sarama")}); err != nil {
		t.Fatal(err)
	}
	p.Close()

	cl, err := kgo.NewClient(kgo.SeedBrokers(bootstrap), kgo.DialTLSConfig(withCert),
		kgo.ConsumeTopics("mtls"), kgo.ConsumeResetOffset(kgo.NewOffset().AtStart()))
	if err != nil {
		t.Fatal(err)
	}
	defer cl.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	if err := cl.ProduceSync(ctx, &kgo.Record{Topic: "mtls", Value: []byte("franz")}).FirstErr(); err != nil {
		t.Fatalf("franz-go with a client certificate: %v", err)
	}
	n := 0
	for n < 2 && ctx.Err() == nil {
		n += cl.PollFetches(ctx).NumRecords()
	}
	if n != 2 {
		t.Fatalf("franz-go consumed %d of 2", n)
	}

	noCert := brokertest.SaramaConfig(sarama.V2_1_0_0)
	noCert.Net.TLS.Enable, noCert.Net.TLS.Config = true, sc.ClientTLS()
	noCert.Metadata.Retry.Max = 0
	if c, err := sarama.NewClient([]string{bootstrap}, noCert); err == nil {
		c.Close()
		t.Fatal("a client without a certificate was served")
	}

	if kcat, err := exec.LookPath("kcat"); err == nil {
		keyFile := filepath.Join(sc.Dir, "client.key")
		certFile := filepath.Join(sc.Dir, "client.pem")
		if err := os.WriteFile(keyFile, client.KeyPEM(), 0o600); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(certFile, client.ChainPEM(), 0o600); err != nil {
			t.Fatal(err)
		}
		got := run(t, "", kcat, "-b", bootstrap, "-X", "security.protocol=SSL", "-X", "ssl.ca.location="+sc.CAFile,
			"-X", "ssl.certificate.location="+certFile, "-X", "ssl.key.location="+keyFile, "-C", "-t", "mtls", "-o", "beginning", "-e", "-q")
		if strings.Join(strings.Fields(got), " ") != "sarama franz" {
			t.Fatalf("kcat over mutual TLS consumed %q", got)
		}
	}
}

// TestClusterKeystoreReload: kafka-configs --alter --entity-type brokers
// --add-config listener.name.sasl_ssl.ssl.keystore.location=<new> (here
// through AlterConfigs, the --bootstrap-server path) makes new connections
// get the new certificate without a restart.
func TestClusterKeystoreReload(t *testing.T) {
	sc := brokertest.NewSecureCluster(t, 1)
	if cn, err := sc.ServerCN(0); err != nil || cn != "broker" {
		t.Fatalf("before: %q %v", cn, err)
	}
	newStore := sc.CA.Server(t, "broker-renewed").WritePKCS12(t, sc.Dir, "renewed.p12", "storepw")
	reloadKeystore(t, sc, "1", map[string]*string{"listener.name.sasl_ssl.ssl.keystore.location": &newStore})
}

// reloadKeystore alters broker id's keystore configs kv (a keystore for
// CN broker-renewed) through AlterConfigs and waits until new SASL_SSL
// connections get the new certificate.
func reloadKeystore(t *testing.T, sc *brokertest.SecureCluster, id string, kv map[string]*string) {
	t.Helper()
	if err := sc.Admin(t, nil).AlterConfig(sarama.BrokerResource, id, kv, false); err != nil {
		t.Fatalf("AlterConfigs: %v", err)
	}
	brokertest.WaitFor(t, 30*time.Second, func() error {
		cn, err := sc.ServerCN(0)
		if err != nil || cn != "broker-renewed" {
			return fmt.Errorf("new connections still get %q (%v)", cn, err)
		}
		return nil
	})
}

// TestClusterAuthenticatedPrincipalsAuthorized: the principals SASL and TLS
// give a connection are the ones the AclAuthorizer checks: alice (SCRAM)
// and the certificate DN "CN=writer,O=Acme" may write the topic by ACL, bob
// (PLAIN) and another certificate may not; the inter-broker SCRAM user
// admin is a super user, so replication and the controller keep working.
func TestClusterAuthenticatedPrincipalsAuthorized(t *testing.T) {
	sc := brokertest.NewSecureCluster(t, 1,
		brokertest.WithProperty("authorizer.class.name", "kafka.security.authorizer.AclAuthorizer"),
		brokertest.WithProperty("super.users", "User:admin;User:ANONYMOUS")) // ANONYMOUS: the harness's PLAINTEXT admin
	sc.CreateTopic(t, "authz", 1, 1)
	writer := acl.Binding{Resource: acl.Resource{Type: acl.ResourceTopic, Name: "authz", Pattern: acl.PatternLiteral},
		Entry: acl.Entry{Principal: principal.User("CN=writer,O=Acme"), Host: "*", Operation: acl.OpWrite, Permission: acl.Allow}}
	alice := writer
	alice.Entry.Principal = principal.User("alice")
	brokertest.WriteACLs(t, sc.ZooKeeper(t), writer, alice)

	produce := func(opts ...kgo.Opt) error {
		cl, err := kgo.NewClient(append([]kgo.Opt{kgo.DefaultProduceTopic("authz"), kgo.RequestRetries(1),
			kgo.RecordRetries(1), kgo.DisableIdempotentWrite()}, opts...)...)
		if err != nil {
			return err
		}
		defer cl.Close()
		ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
		defer cancel()
		return cl.ProduceSync(ctx, &kgo.Record{Value: []byte("x")}).FirstErr()
	}
	saslOpts := func(m sasl.Mechanism) []kgo.Opt {
		return []kgo.Opt{kgo.SeedBrokers(sc.SASLAddrs()...), kgo.DialTLSConfig(sc.ClientTLS()), kgo.SASL(m)}
	}
	certOpts := func(cn string) []kgo.Opt {
		c := sc.ClientTLS()
		c.Certificates = []tls.Certificate{sc.CA.Client(t, pkix.Name{CommonName: cn, Organization: []string{"Acme"}}).TLS()}
		return []kgo.Opt{kgo.SeedBrokers(sc.ListenerAddrs("SSL")), kgo.DialTLSConfig(c)}
	}
	// The ACL cache follows /kafka-acl-changes; wait until alice may write.
	brokertest.WaitFor(t, 30*time.Second, func() error {
		return produce(saslOpts(kscram.Auth{User: "alice", Pass: "alice-secret"}.AsSha512Mechanism())...)
	})
	if err := produce(certOpts("writer")...); err != nil {
		t.Fatalf("User:CN=writer,O=Acme by ACL: %v", err)
	}
	if err := produce(saslOpts(plain.Auth{User: "bob", Pass: "bob-secret"}.AsMechanism())...); !errors.Is(err, kerr.TopicAuthorizationFailed) {
		t.Fatalf("User:bob without an ACL: %v, want TOPIC_AUTHORIZATION_FAILED", err)
	}
	if err := produce(certOpts("reader")...); !errors.Is(err, kerr.TopicAuthorizationFailed) {
		t.Fatalf("User:CN=reader,O=Acme without an ACL: %v, want TOPIC_AUTHORIZATION_FAILED", err)
	}

	// KIP-554 APIs need Describe / Alter on the cluster, which alice lacks.
	cl, err := kgo.NewClient(saslOpts(kscram.Auth{User: "alice", Pass: "alice-secret"}.AsSha512Mechanism())...)
	if err != nil {
		t.Fatal(err)
	}
	defer cl.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	dresp, err := kmsg.NewPtrDescribeUserSCRAMCredentialsRequest().RequestWith(ctx, cl)
	if err != nil || dresp.ErrorCode != kerr.ClusterAuthorizationFailed.Code {
		t.Fatalf("DescribeUserScramCredentials as alice: %+v %v", dresp, err)
	}
	areq := kmsg.NewPtrAlterUserSCRAMCredentialsRequest()
	up := kmsg.NewAlterUserSCRAMCredentialsRequestUpsertion()
	up.Name, up.Mechanism, up.Iterations, up.Salt, up.SaltedPassword = "alice", 2, 4096, []byte("salt"), make([]byte, 64)
	areq.Upsertions = append(areq.Upsertions, up)
	aresp, err := areq.RequestWith(ctx, cl)
	if err != nil || len(aresp.Results) != 1 || aresp.Results[0].ErrorCode != kerr.ClusterAuthorizationFailed.Code {
		t.Fatalf("AlterUserScramCredentials as alice: %+v %v", aresp, err)
	}
}

// TestClusterQuotaBySASLUser: client quotas match the authenticated user
// (/config/users/alice), not ANONYMOUS: alice's produces get throttled,
// bob's on the same listener do not.
func TestClusterQuotaBySASLUser(t *testing.T) {
	sc := brokertest.NewSecureCluster(t, 1)
	sc.CreateTopic(t, "q", 1, 1)
	admin := sc.Admin(t, brokertest.SaramaConfig(sarama.V2_8_0_0))
	ent := []sarama.QuotaEntityComponent{{EntityType: sarama.QuotaEntityUser, MatchType: sarama.QuotaMatchExact, Name: "alice"}}
	if err := admin.AlterClientQuotas(ent, sarama.ClientQuotasOp{Key: "producer_byte_rate", Value: 1}, false); err != nil {
		t.Fatal(err)
	}
	throttle := func(m sasl.Mechanism) (int32, error) {
		cl, err := kgo.NewClient(kgo.SeedBrokers(sc.SASLAddrs()...), kgo.DialTLSConfig(sc.ClientTLS()), kgo.SASL(m))
		if err != nil {
			return 0, err
		}
		defer cl.Close()
		ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
		defer cancel()
		resp, err := cl.Broker(int(sc.Broker(0).ID())).Request(ctx, brokertest.QuotaProduce(t, "q", 1))
		if err != nil {
			return 0, err
		}
		return resp.(*kmsg.ProduceResponse).ThrottleMillis, nil
	}
	alice := kscram.Auth{User: "alice", Pass: "alice-secret"}.AsSha512Mechanism()
	brokertest.WaitFor(t, 30*time.Second, func() error {
		ms, err := throttle(alice)
		if err == nil && ms == 0 {
			err = errors.New("alice not throttled yet")
		}
		return err
	})
	if ms, err := throttle(plain.Auth{User: "bob", Pass: "bob-secret"}.AsMechanism()); err != nil || ms != 0 {
		t.Fatalf("bob (no quota) throttled %d ms: %v", ms, err)
	}
}
