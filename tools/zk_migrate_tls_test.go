package tools

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"samsa/zkutil"
)

// TestToolsZooKeeperSecurityMigrationTLS: zookeeper-security-migration
// with --zk-tls-config-file and no JAAS file takes the TLS client
// certificate as its identity (Kafka's zkTlsClientAuthEnabled): unsecure
// opens the ACL znode kafka-acls wrote over TLS to a plaintext session,
// secure gives it back to the certificate (x509) with world-read.
func TestToolsZooKeeperSecurityMigrationTLS(t *testing.T) {
	t.Setenv("KAFKA_OPTS", "")
	srv, tlsFile := startTLSZooKeeper(t)
	connect := srv.SecureAddr + "/migrate"
	if out, errOut, code := runTool(t, "", "kafka-acls", "--authorizer-properties", "zookeeper.connect="+connect, "--zk-tls-config-file", tlsFile,
		"--add", "--allow-principal", "User:alice", "--operation", "Read", "--topic", "secured"); code != 0 {
		t.Fatalf("kafka-acls --add over TLS: %d %q %q", code, out, errOut)
	}
	path := zkutil.ACLResourcePath(zkutil.ACLResource{Type: "Topic", Name: "secured", PatternType: zkutil.ACLPatternLiteral})
	plain, err := zkutil.Connect(context.Background(), zkutil.Config{Connect: srv.Addr + "/migrate", SessionTimeout: 10 * time.Second})
	if err != nil {
		t.Fatal(err)
	}
	defer plain.Close()
	rewrite := func() error {
		data, st, err := plain.Get(path)
		if err == nil {
			_, err = plain.Set(path, data, st.Version)
		}
		return err
	}
	if err := rewrite(); !errors.Is(err, zkutil.ErrNoAuth) {
		t.Fatalf("a plaintext session wrote the certificate's ACL znode: %v", err)
	}

	migrate := func(mode string) {
		t.Helper()
		out, errOut, code := runTool(t, "", "zookeeper-security-migration", "--zookeeper.acl", mode, "--zookeeper.connect", connect,
			"--zk-tls-config-file", tlsFile)
		if code != 0 || strings.Contains(errOut, "ERROR") {
			t.Fatalf("%s over TLS: exit %d, stdout %q, stderr %q", mode, code, out, errOut)
		}
	}
	migrate("unsecure")
	if err := rewrite(); err != nil {
		t.Fatalf("after unsecure a plaintext session cannot write %s: %v", path, err)
	}
	migrate("secure")
	if err := rewrite(); !errors.Is(err, zkutil.ErrNoAuth) {
		t.Fatalf("after secure a plaintext session wrote %s: %v", path, err)
	}
	acl, err := plain.GetACL(path)
	if err != nil || len(acl) != 2 || acl[0].Scheme != "x509" || !strings.Contains(acl[0].ID, "CN=kafka-admin") ||
		acl[0].Perms != zkutil.PermAll || acl[1] != (zkutil.ZnodeACL{Scheme: "world", ID: "anyone", Perms: zkutil.PermRead}) {
		t.Fatalf("ACL of %s after secure: %v, %v", path, acl, err)
	}
}
