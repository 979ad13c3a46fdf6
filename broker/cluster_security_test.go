package broker_test

import (
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/IBM/sarama"
	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/sasl"
	kscram "github.com/twmb/franz-go/pkg/sasl/scram"

	"samsa/broker/brokertest"
	"samsa/broker/replica"
	"samsa/broker/security/scram"
	"samsa/broker/security/tlsconf/tlstest"
	"samsa/zkutil"
)

// secureCluster is a cluster whose brokers listen on PLAINTEXT (for the
// harness), SASL_SSL (clients: SCRAM-SHA-512, SCRAM-SHA-256, PLAIN) and
// INTERNAL (SASL_SSL, the inter-broker listener, SCRAM-SHA-512 as "admin").
type secureCluster struct {
	*brokertest.Cluster
	ca     *tlstest.CA
	caFile string
}

func newSecureCluster(t *testing.T, n int, extra ...brokertest.Option) *secureCluster {
	t.Helper()
	dir := t.TempDir()
	ca := tlstest.NewCA(t, "samsa-test-ca")
	leaf := ca.Server(t, "broker")
	sc := &secureCluster{ca: ca, caFile: ca.WriteCAPEM(t, dir, "ca.pem")}
	props := map[string]string{
		"listeners":                                             "PLAINTEXT://127.0.0.1:0,SASL_SSL://127.0.0.1:0,INTERNAL://127.0.0.1:0",
		"listener.security.protocol.map":                        "PLAINTEXT:PLAINTEXT,SASL_SSL:SASL_SSL,INTERNAL:SASL_SSL",
		"inter.broker.listener.name":                            "INTERNAL",
		"sasl.enabled.mechanisms":                               "SCRAM-SHA-512,SCRAM-SHA-256,PLAIN",
		"sasl.mechanism.inter.broker.protocol":                  "SCRAM-SHA-512",
		"listener.name.internal.sasl.enabled.mechanisms":        "SCRAM-SHA-512",
		"listener.name.internal.scram-sha-512.sasl.jaas.config": `org.apache.kafka.common.security.scram.ScramLoginModule required username="admin" password="admin-secret";`,
		"listener.name.sasl_ssl.plain.sasl.jaas.config":         `org.apache.kafka.common.security.plain.PlainLoginModule required user_bob="bob-secret";`,
		"ssl.keystore.type":                                     "PKCS12",
		"ssl.keystore.location":                                 leaf.WritePKCS12(t, dir, "broker.p12", "storepw"),
		"ssl.keystore.password":                                 "storepw",
		"ssl.truststore.type":                                   "PEM",
		"ssl.truststore.location":                               sc.caFile,
	}
	opts := []brokertest.Option{brokertest.WithSetup(func(connect string) {
		zc, err := zkutil.Connect(context.Background(), zkutil.Config{Connect: connect, SessionTimeout: 10 * time.Second})
		if err != nil {
			t.Fatal(err)
		}
		defer zc.Close()
		if err := zc.CreatePersistentPaths(); err != nil {
			t.Fatal(err)
		}
		for user, pw := range map[string]string{"admin": "admin-secret", "alice": "alice-secret"} {
			cfg := map[string]string{"SCRAM-SHA-512": scram.SHA512.NewCredential(pw, 4096).String(),
				"SCRAM-SHA-256": scram.SHA256.NewCredential(pw, 4096).String()}
			if err := zc.SetEntityConfig(zkutil.ConfigTypeUser, user, cfg); err != nil {
				t.Fatal(err)
			}
		}
	})}
	for k, v := range props {
		opts = append(opts, brokertest.WithProperty(k, v))
	}
	sc.Cluster = brokertest.NewCluster(t, n, append(opts, extra...)...)
	return sc
}

// saslAddrs returns the SASL_SSL listener of every broker.
func (sc *secureCluster) saslAddrs() []string {
	var out []string
	for i := 0; i < sc.N(); i++ {
		out = append(out, sc.Broker(i).Addr("SASL_SSL").String())
	}
	return out
}

func (sc *secureCluster) clientTLS() *tls.Config {
	return &tls.Config{RootCAs: sc.ca.Pool(), ServerName: "127.0.0.1"}
}

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

func saramaSASLConfig(sc *secureCluster, user, password string) *sarama.Config {
	cfg := brokertest.SaramaConfig(sarama.V2_1_0_0)
	cfg.Net.TLS.Enable = true
	cfg.Net.TLS.Config = sc.clientTLS()
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
	sc := newSecureCluster(t, 2)
	sc.CreateTopic(t, "secure", 1, 2)
	sc.WaitForISR(t, "secure", 0, 2) // the follower fetches over INTERNAL (SASL_SSL)

	cfg := saramaSASLConfig(sc, "alice", "alice-secret")
	p, err := sarama.NewSyncProducer(sc.saslAddrs(), cfg)
	if err != nil {
		t.Fatalf("sarama over SASL_SSL: %v", err)
	}
	defer p.Close()
	for i := 0; i < 10; i++ {
		if _, _, err := p.SendMessage(&sarama.ProducerMessage{Topic: "secure", Value: sarama.StringEncoder(fmt.Sprintf("s-%d", i))}); err != nil {
			t.Fatalf("sarama produce: %v", err)
		}
	}

	cl, err := kgo.NewClient(kgo.SeedBrokers(sc.saslAddrs()...), kgo.DialTLSConfig(sc.clientTLS()),
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
			p := sc.Broker(i).Replicas().Partition(replica.TopicPartition{Topic: "secure", Partition: 0})
			if p == nil || p.Log() == nil || p.Log().LogEndOffset() != 11 {
				return fmt.Errorf("broker %d has not replicated the 11 records", i)
			}
		}
		return nil
	})

	_, err = sarama.NewClient(sc.saslAddrs(), saramaSASLConfig(sc, "alice", "wrong"))
	if err == nil || !strings.Contains(err.Error(), "SASL Authentication failed") {
		t.Fatalf("wrong password: %v, want SASL authentication failure", err)
	}
	bad, err := kgo.NewClient(kgo.SeedBrokers(sc.saslAddrs()...), kgo.DialTLSConfig(sc.clientTLS()),
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
