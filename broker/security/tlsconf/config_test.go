package tlsconf

import (
	"context"
	"crypto/tls"
	"crypto/x509/pkix"
	"errors"
	"net"
	"testing"
	"time"

	"samsa/broker/security/tlsconf/tlstest"
)

// serve accepts one TLS connection with cfg and returns the peer
// certificate's principal (or the handshake error).
func serve(t *testing.T, cfg *Config) (addr string, result chan error, principal chan string) {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { ln.Close() })
	result, principal = make(chan error, 1), make(chan string, 1)
	go func() {
		nc, err := ln.Accept()
		if err != nil {
			result <- err
			return
		}
		defer nc.Close()
		tc := tls.Server(nc, cfg.ServerTLS())
		tc.SetDeadline(time.Now().Add(10 * time.Second))
		if err := tc.Handshake(); err != nil {
			result <- err
			return
		}
		var p string
		if certs := tc.ConnectionState().PeerCertificates; len(certs) > 0 {
			pr, err := cfg.Mapper().Principal(certs[0])
			if err != nil {
				result <- err
				return
			}
			p = pr.String()
		}
		principal <- p
		result <- nil
		tc.Write([]byte("x"))
	}()
	return ln.Addr().String(), result, principal
}

func dialWith(t *testing.T, addr string, cfg *tls.Config) (*x509Subject, error) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	c, err := (&tls.Dialer{Config: cfg}).DialContext(ctx, "tcp", addr)
	if err != nil {
		return nil, err
	}
	defer c.Close()
	buf := make([]byte, 1)
	if _, err := c.Read(buf); err != nil {
		return nil, err
	}
	cs := c.(*tls.Conn).ConnectionState()
	return &x509Subject{cn: cs.PeerCertificates[0].Subject.CommonName, version: cs.Version}, nil
}

type x509Subject struct {
	cn      string
	version uint16
}

func TestTLSKeystoreTypes(t *testing.T) {
	dir := t.TempDir()
	ca := tlstest.NewCA(t, "test-ca")
	leaf := ca.Server(t, "broker")
	stores := map[string]map[string]string{
		"PEM file": {"ssl.keystore.type": "PEM", "ssl.keystore.location": leaf.WritePEM(t, dir, "k.pem")},
		"PEM inline": {"ssl.keystore.type": "PEM", "ssl.keystore.key": string(leaf.KeyPEM()),
			"ssl.keystore.certificate.chain": string(leaf.ChainPEM())},
		"PKCS12": {"ssl.keystore.type": "PKCS12", "ssl.keystore.location": leaf.WritePKCS12(t, dir, "k.p12", "storepw"),
			"ssl.keystore.password": "storepw"},
		"JKS (keytool)": {"ssl.keystore.location": leaf.WriteJKS(t, dir, "k.jks", "storepw"),
			"ssl.keystore.password": "storepw", "ssl.key.password": "storepw"},
	}
	for name, keys := range stores {
		cfg, err := New(keys, true)
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		addr, result, _ := serve(t, cfg)
		got, err := dialWith(t, addr, &tls.Config{RootCAs: ca.Pool(), ServerName: "localhost"})
		if err != nil || got.cn != "broker" {
			t.Fatalf("%s: dial %v %v", name, got, err)
		}
		if err := <-result; err != nil {
			t.Fatalf("%s: server %v", name, err)
		}
	}
	if _, err := New(map[string]string{"ssl.keystore.type": "PKCS12", "ssl.keystore.location": stores["PKCS12"]["ssl.keystore.location"],
		"ssl.keystore.password": "wrong"}, true); !errors.Is(err, ErrConfig) {
		t.Fatalf("wrong keystore password: %v", err)
	}
	if _, err := New(map[string]string{}, true); !errors.Is(err, ErrConfig) {
		t.Fatalf("no keystore: %v", err)
	}
}

func TestTLSClientAuthAndPrincipal(t *testing.T) {
	dir := t.TempDir()
	ca := tlstest.NewCA(t, "test-ca")
	other := tlstest.NewCA(t, "other-ca")
	keys := map[string]string{"ssl.keystore.type": "PEM", "ssl.keystore.location": ca.Server(t, "broker").WritePEM(t, dir, "k.pem"),
		"ssl.truststore.type": "PKCS12", "ssl.truststore.location": ca.WriteTrustPKCS12(t, dir, "t.p12", "tpw"),
		"ssl.truststore.password": "tpw", "ssl.client.auth": "required"}
	cfg, err := New(keys, true)
	if err != nil {
		t.Fatal(err)
	}
	alice := ca.Client(t, pkix.Name{CommonName: "alice", OrganizationalUnit: []string{"eng"}, Organization: []string{"Acme, Inc"}, Country: []string{"GB"}})
	addr, result, principal := serve(t, cfg)
	if _, err := dialWith(t, addr, &tls.Config{RootCAs: ca.Pool(), ServerName: "localhost", Certificates: []tls.Certificate{alice.TLS()}}); err != nil {
		t.Fatal(err)
	}
	if err := <-result; err != nil {
		t.Fatal(err)
	}
	if p := <-principal; p != `User:CN=alice,OU=eng,O=Acme\, Inc,C=GB` {
		t.Fatalf("principal %q", p)
	}
	// No certificate, or one from another CA: refused.
	for _, certs := range [][]tls.Certificate{nil, {other.Client(t, pkix.Name{CommonName: "mallory"}).TLS()}} {
		addr, result, _ := serve(t, cfg)
		dialWith(t, addr, &tls.Config{RootCAs: ca.Pool(), ServerName: "localhost", Certificates: certs})
		if err := <-result; err == nil {
			t.Fatalf("handshake without a trusted client certificate succeeded (%d certs)", len(certs))
		}
	}
}

func TestTLSReloadServesNewCertificate(t *testing.T) {
	dir := t.TempDir()
	ca := tlstest.NewCA(t, "test-ca")
	keys := map[string]string{"ssl.keystore.type": "PEM", "ssl.keystore.location": ca.Server(t, "first").WritePEM(t, dir, "a.pem")}
	cfg, err := New(keys, true)
	if err != nil {
		t.Fatal(err)
	}
	keys["ssl.keystore.location"] = ca.Server(t, "second").WritePEM(t, dir, "b.pem")
	if err := cfg.Reload(keys, true); err != nil {
		t.Fatal(err)
	}
	addr, _, _ := serve(t, cfg)
	got, err := dialWith(t, addr, &tls.Config{RootCAs: ca.Pool(), ServerName: "localhost"})
	if err != nil || got.cn != "second" {
		t.Fatalf("after reload: %v %v", got, err)
	}
	if err := cfg.Reload(map[string]string{"ssl.keystore.location": "/nonexistent"}, true); err == nil {
		t.Fatal("reload of a missing keystore succeeded")
	}
}

func TestTLSProtocolsCiphersAndHostname(t *testing.T) {
	dir := t.TempDir()
	ca := tlstest.NewCA(t, "test-ca")
	pemPath := ca.Server(t, "broker").WritePEM(t, dir, "k.pem")
	cfg, err := New(map[string]string{"ssl.keystore.type": "PEM", "ssl.keystore.location": pemPath,
		"ssl.enabled.protocols": "TLSv1.2", "ssl.cipher.suites": "TLS_ECDHE_ECDSA_WITH_AES_128_GCM_SHA256,TLS_AES_128_GCM_SHA256"}, true)
	if err != nil {
		t.Fatal(err)
	}
	addr, _, _ := serve(t, cfg)
	got, err := dialWith(t, addr, &tls.Config{RootCAs: ca.Pool(), ServerName: "localhost"})
	if err != nil || got.version != tls.VersionTLS12 {
		t.Fatalf("TLSv1.2 only: %v %v", got, err)
	}
	for _, bad := range []map[string]string{{"ssl.enabled.protocols": "TLSv1"}, {"ssl.cipher.suites": "TLS_NOPE"},
		{"ssl.client.auth": "maybe"}, {"ssl.principal.mapping.rules": "RULE:x"}} {
		bad["ssl.keystore.type"], bad["ssl.keystore.location"] = "PEM", pemPath
		if _, err := New(bad, true); !errors.Is(err, ErrConfig) {
			t.Errorf("%v: %v", bad, err)
		}
	}
	// Outbound: https verifies the name; the certificate names 127.0.0.1
	// and localhost, not 127.0.0.2.
	client, err := New(map[string]string{"ssl.truststore.type": "PEM", "ssl.truststore.location": ca.WriteCAPEM(t, dir, "ca.pem")}, false)
	if err != nil {
		t.Fatal(err)
	}
	srv, _ := New(map[string]string{"ssl.keystore.type": "PEM", "ssl.keystore.location": pemPath}, true)
	addr, _, _ = serve(t, srv)
	if c, err := client.Dial(context.Background(), "tcp", addr); err != nil {
		t.Fatalf("verified dial: %v", err)
	} else {
		c.Close()
	}
	_, port, _ := net.SplitHostPort(addr)
	wrongName := client.ClientTLS("example.com:" + port)
	if _, err := dialWith(t, addr, wrongName); err == nil {
		t.Fatal("host name not verified")
	}
	noVerify, _ := New(map[string]string{"ssl.truststore.type": "PEM", "ssl.truststore.location": ca.WriteCAPEM(t, dir, "ca2.pem"),
		"ssl.endpoint.identification.algorithm": ""}, false)
	addr, _, _ = serve(t, srv)
	if _, err := dialWith(t, addr, noVerify.ClientTLS("example.com:"+port)); err != nil {
		t.Fatalf("endpoint identification disabled: %v", err)
	}
	addr, _, _ = serve(t, srv)
	untrusted, _ := New(map[string]string{"ssl.truststore.type": "PEM", "ssl.truststore.location": tlstest.NewCA(t, "x").WriteCAPEM(t, dir, "x.pem"),
		"ssl.endpoint.identification.algorithm": ""}, false)
	if _, err := dialWith(t, addr, untrusted.ClientTLS(addr)); err == nil {
		t.Fatal("an untrusted chain was accepted with endpoint identification off")
	}
}

func TestTLSPrincipalMappingRules(t *testing.T) {
	m, err := NewMapper(`RULE:^CN=(.*?),OU=ServiceUsers.*$/$1/,RULE:^CN=(.*?),OU=(.*?),O=(.*?).*$/$1@$2/L, DEFAULT`)
	if err != nil {
		t.Fatal(err)
	}
	for dn, want := range map[string]string{
		"CN=kafka-broker,OU=ServiceUsers,O=Acme": "kafka-broker",
		"CN=Alice,OU=ENG,O=Acme,C=GB":            "alice@eng",
		"CN=bob":                                 "CN=bob",
	} {
		if got, err := m.Name(dn); err != nil || got != want {
			t.Errorf("Name(%q) = %q %v, want %q", dn, got, err, want)
		}
	}
	m, _ = NewMapper(`RULE:^CN=(.*)$/$1/U`)
	if _, err := m.Name("O=x"); err == nil {
		t.Fatal("no matching rule accepted")
	}
	if got, _ := m.Name("CN=a/b"); got != "A/B" {
		t.Fatalf("upper: %q", got)
	}
}
