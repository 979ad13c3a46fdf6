package brokertest

import (
	"crypto/tls"
	"net"
	"strings"
	"testing"
	"time"

	"samsa/broker/security/scram"
	"samsa/broker/security/tlsconf/tlstest"
	"samsa/zkutil"
)

// SecureCluster is a cluster whose brokers listen on PLAINTEXT (for the
// harness), SASL_SSL (clients: SCRAM-SHA-512, SCRAM-SHA-256, PLAIN) and
// INTERNAL (SASL_SSL, the inter-broker listener, SCRAM-SHA-512 as "admin")
// and SSL (mutual TLS: ssl.client.auth=required for that listener only).
type SecureCluster struct {
	*Cluster
	CA     *tlstest.CA // signs the broker's certificate; Client issues client certificates
	CAFile string      // the CA as PEM, for clients' trust stores
	Dir    string      // where the keystore and CA files live
}

func NewSecureCluster(t testing.TB, n int, extra ...Option) *SecureCluster {
	t.Helper()
	dir := t.TempDir()
	ca := tlstest.NewCA(t, "samsa-test-ca")
	leaf := ca.Server(t, "broker")
	sc := &SecureCluster{CA: ca, CAFile: ca.WriteCAPEM(t, dir, "ca.pem"), Dir: dir}
	props := map[string]string{
		"listeners":                                             "PLAINTEXT://127.0.0.1:0,SASL_SSL://127.0.0.1:0,INTERNAL://127.0.0.1:0,SSL://127.0.0.1:0",
		"listener.security.protocol.map":                        "PLAINTEXT:PLAINTEXT,SASL_SSL:SASL_SSL,INTERNAL:SASL_SSL,SSL:SSL",
		"listener.name.ssl.ssl.client.auth":                     "required",
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
		"ssl.truststore.location":                               sc.CAFile,
	}
	opts := []Option{WithZooKeeperSetup(func(zc *zkutil.Client) {
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
		opts = append(opts, WithProperty(k, v))
	}
	sc.Cluster = NewCluster(t, n, append(opts, extra...)...)
	return sc
}

// SASLAddrs returns the SASL_SSL listener of every broker.
func (sc *SecureCluster) SASLAddrs() []string {
	var out []string
	for i := 0; i < sc.N(); i++ {
		out = append(out, sc.Broker(i).Addr("SASL_SSL").String())
	}
	return out
}

// ClientTLS trusts the cluster's CA.
func (sc *SecureCluster) ClientTLS() *tls.Config {
	return &tls.Config{RootCAs: sc.CA.Pool(), ServerName: "127.0.0.1"}
}

// ListenerAddrs returns every broker's address on the named listener,
// comma-separated (kcat's -b form).
func (sc *SecureCluster) ListenerAddrs(listener string) string {
	var out []string
	for i := 0; i < sc.N(); i++ {
		out = append(out, sc.Broker(i).Addr(listener).String())
	}
	return strings.Join(out, ",")
}

// ServerCN is the common name of the certificate broker i's SASL_SSL
// listener presents to a new connection (to see a keystore reload).
func (sc *SecureCluster) ServerCN(i int) (string, error) {
	addr := sc.Broker(i).Addr("SASL_SSL").String()
	conn, err := tls.DialWithDialer(&net.Dialer{Timeout: 5 * time.Second}, "tcp", addr, sc.ClientTLS())
	if err != nil {
		return "", err
	}
	defer conn.Close()
	return conn.ConnectionState().PeerCertificates[0].Subject.CommonName, nil
}
