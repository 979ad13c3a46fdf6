package zktest

import (
	"context"
	"os"
	"path/filepath"
	"testing"
	"time"

	"samsa/broker/security/tlsconf/tlstest"
	"samsa/zkutil"
)

// TLSServer is a ZooKeeper of one test's own with a TLS client port
// (SecureAddr) beside the plaintext one (Addr): its certificate comes from
// CA, which also makes the clients' certificates; Dir holds the stores.
type TLSServer struct {
	*Server
	CA  *tlstest.CA
	Dir string
}

// StartTLS starts a TLSServer that requires a client certificate
// (ssl.clientAuth=need) signed by its CA: a PKCS12 key store for
// 127.0.0.1 and a PKCS12 trust store holding the CA. It stops at cleanup.
func StartTLS(tb testing.TB) *TLSServer {
	tb.Helper()
	dir := tb.TempDir()
	ca := tlstest.NewCA(tb, "zk-ca")
	srv, err := StartTLSServer(TLSConfig{
		KeyStore: ca.Server(tb, "zookeeper").WritePKCS12(tb, dir, "zk.p12", "zkpass"), KeyStorePassword: "zkpass", KeyStoreType: "PKCS12",
		TrustStore: ca.WriteTrustPKCS12(tb, dir, "zktrust.p12", "trustpass"), TrustStorePassword: "trustpass", TrustStoreType: "PKCS12",
		ClientAuth: "need",
	})
	if err != nil {
		tb.Fatal(err)
	}
	tb.Cleanup(srv.Stop)
	return &TLSServer{Server: srv, CA: ca, Dir: dir}
}

// The digest identity StartDigest's JAAS file gives its client.
const (
	DigestUser     = "kafka"
	DigestPassword = "kafka-secret"
)

// StartDigest starts a ZooKeeper of one test's own (secure ACLs written
// there would otherwise lock the shared server's chroot parents for every
// later test), stopped at cleanup, and writes a JAAS file whose Client
// section (DigestLoginModule) names DigestUser and DigestPassword, for
// java.security.auth.login.config: the server and the file's path.
func StartDigest(tb testing.TB) (*Server, string) {
	tb.Helper()
	jaas := filepath.Join(tb.TempDir(), "client_jaas.conf")
	if err := os.WriteFile(jaas, []byte(`Client {
   org.apache.zookeeper.server.auth.DigestLoginModule required
   username="`+DigestUser+`"
   password="`+DigestPassword+`";
};
`), 0o600); err != nil {
		tb.Fatal(err)
	}
	srv, err := StartServer()
	if err != nil {
		tb.Fatal(err)
	}
	tb.Cleanup(srv.Stop)
	return srv, jaas
}

// DigestSessions opens two sessions on connect, closed at cleanup: anon
// without credentials and owner authenticated as StartDigest's identity.
func DigestSessions(tb testing.TB, connect string) (anon, owner *zkutil.Client) {
	tb.Helper()
	anon = connectTB(tb, zkutil.Config{Connect: connect, SessionTimeout: 10 * time.Second})
	owner = connectTB(tb, zkutil.Config{Connect: connect, SessionTimeout: 10 * time.Second,
		Auth: []zkutil.Credential{{Scheme: "digest", Auth: []byte(DigestUser + ":" + DigestPassword)}}})
	return anon, owner
}

func connectTB(tb testing.TB, cfg zkutil.Config) *zkutil.Client {
	tb.Helper()
	c, err := zkutil.Connect(context.Background(), cfg)
	if err != nil {
		tb.Fatal(err)
	}
	tb.Cleanup(c.Close)
	return c
}
