package zkclient

import (
	"crypto/tls"
	"crypto/x509/pkix"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"samsa/broker/security/tlsconf/tlstest"
)

// TestTLS: TLS is off unless zookeeper.ssl.client.enable=true; on, the key
// store becomes the client certificate, the trust store the roots, the
// protocols the version range, and a store type follows the extension.
func TestTLS(t *testing.T) {
	dir := t.TempDir()
	ca := tlstest.NewCA(t, "ca")
	keystore := ca.Client(t, pkix.Name{CommonName: "admin"}).WritePKCS12(t, dir, "admin.p12", "pw")
	props := map[string]string{
		"zookeeper.ssl.keystore.location":   keystore,
		"zookeeper.ssl.keystore.password":   "pw",
		"zookeeper.ssl.truststore.location": ca.WriteCAPEM(t, dir, "ca.pem"),
		"zookeeper.ssl.enabled.protocols":   "TLSv1.3",
	}
	for _, enable := range []string{"", "false", "yes"} {
		props["zookeeper.ssl.client.enable"] = enable
		if c, err := TLS(props); c != nil || err != nil {
			t.Fatalf("zookeeper.ssl.client.enable=%q: %v %v", enable, c, err)
		}
	}
	props["zookeeper.ssl.client.enable"] = " TRUE "
	c, err := TLS(props)
	if err != nil || c == nil {
		t.Fatalf("TLS: %v %v", c, err)
	}
	if len(c.Certificates) != 1 || c.RootCAs == nil || c.MinVersion != tls.VersionTLS13 || c.InsecureSkipVerify {
		t.Fatalf("TLS config: %d certificates, roots %v, min version %x, skip verify %v", len(c.Certificates), c.RootCAs != nil, c.MinVersion, c.InsecureSkipVerify)
	}
	props["zookeeper.ssl.keystore.password"] = "wrong"
	if _, err := TLS(props); err == nil || !strings.Contains(err.Error(), "zookeeper.ssl.*") {
		t.Fatalf("a wrong key store password: %v", err)
	}
}

func TestStoreType(t *testing.T) {
	for _, c := range []struct{ typ, loc, want string }{
		{"", "/k/ks.p12", "PKCS12"}, {"", "/k/ks.PFX", "PKCS12"}, {"", "/k/ca.pem", "PEM"},
		{"", "/k/ks.jks", "JKS"}, {"", "/k/ks", "JKS"}, {"pkcs12", "/k/ks.jks", "PKCS12"},
	} {
		if got := StoreType(c.typ, c.loc); got != c.want {
			t.Errorf("StoreType(%q, %q) = %s, want %s", c.typ, c.loc, got, c.want)
		}
	}
}

// TestJAASFromKafkaOpts: the JAAS file comes from KAFKA_OPTS when no path is
// given, its Client section (or -Dzookeeper.sasl.clientconfig's) becomes
// the digest credential, and no file means no credential.
func TestJAASFromKafkaOpts(t *testing.T) {
	file := filepath.Join(t.TempDir(), "jaas.conf")
	if err := os.WriteFile(file, []byte(`Client {
  org.apache.zookeeper.server.auth.DigestLoginModule required username="kafka" password="s1";
};
ZkAdmin {
  org.apache.zookeeper.server.auth.DigestLoginModule required username="admin" password="s2";
};
`), 0o600); err != nil {
		t.Fatal(err)
	}
	t.Setenv("KAFKA_OPTS", "")
	if j, err := LoadJAAS(""); err != nil || Auth(j) != nil {
		t.Fatalf("no JAAS file: %v %v", j, err)
	}
	t.Setenv("KAFKA_OPTS", "-Xmx1G -Djava.security.auth.login.config="+file)
	j, err := LoadJAAS("")
	if err != nil {
		t.Fatal(err)
	}
	if a := Auth(j); len(a) != 1 || a[0].Scheme != "digest" || string(a[0].Auth) != "kafka:s1" {
		t.Fatalf("Client section: %+v", a)
	}
	t.Setenv("KAFKA_OPTS", "-Djava.security.auth.login.config="+file+" -Dzookeeper.sasl.clientconfig=ZkAdmin")
	if a := Auth(j); len(a) != 1 || string(a[0].Auth) != "admin:s2" {
		t.Fatalf("zookeeper.sasl.clientconfig=ZkAdmin: %+v", a)
	}
	if _, err := LoadJAAS(filepath.Join(t.TempDir(), "missing.conf")); err == nil {
		t.Fatal("a missing JAAS file loaded")
	}
}

// TestJavaOptionTLS: ZooKeeper's client system properties in KAFKA_OPTS map
// to the Kafka keys; hostnameVerification=false turns host checks off.
func TestJavaOptionTLS(t *testing.T) {
	t.Setenv("KAFKA_OPTS", "-Dzookeeper.client.secure=true -Dzookeeper.ssl.keyStore.location=/k/a.p12 "+
		"-Dzookeeper.ssl.trustStore.location=/k/ca.pem -Dzookeeper.ssl.enabledProtocols=TLSv1.3 -Dzookeeper.ssl.hostnameVerification=false")
	got := JavaOptionTLS()
	want := map[string]string{
		"zookeeper.ssl.client.enable":                     "true",
		"zookeeper.ssl.keystore.location":                 "/k/a.p12",
		"zookeeper.ssl.truststore.location":               "/k/ca.pem",
		"zookeeper.ssl.enabled.protocols":                 "TLSv1.3",
		"zookeeper.ssl.endpoint.identification.algorithm": "",
	}
	if len(got) != len(want) {
		t.Fatalf("JavaOptionTLS = %v, want %v", got, want)
	}
	for k, v := range want {
		if got[k] != v {
			t.Fatalf("JavaOptionTLS = %v, want %v", got, want)
		}
	}
	t.Setenv("KAFKA_OPTS", "-Xmx1G")
	if got := JavaOptionTLS(); len(got) != 0 {
		t.Fatalf("no system properties: %v", got)
	}
}
