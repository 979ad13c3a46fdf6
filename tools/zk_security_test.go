package tools

import (
	"bytes"
	"context"
	"crypto/x509/pkix"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"samsa/broker/acl"
	"samsa/broker/security/scram"
	"samsa/tools/internal/tooltest"
	"samsa/zkutil"
	"samsa/zkutil/zktest"
)

// startTLSZooKeeper starts a ZooKeeper of its own with a TLS client port
// that requires a client certificate (ssl.clientAuth=need), and writes a
// --zk-tls-config-file for a tool: its client certificate, the CA, and a
// key Kafka's loader ignores.
func startTLSZooKeeper(t *testing.T) (*zktest.Server, string) {
	t.Helper()
	srv := zktest.StartTLS(t)
	dir, ca := srv.Dir, srv.CA
	keystore := ca.Client(t, pkix.Name{CommonName: "kafka-admin"}).WritePKCS12(t, dir, "admin.p12", "apass")
	file := filepath.Join(dir, "zk-tls.properties")
	props := "zookeeper.clientCnxnSocket=org.apache.zookeeper.ClientCnxnSocketNetty\n" +
		"zookeeper.ssl.client.enable=true\n" +
		"zookeeper.ssl.protocol=TLSv1.2\n" +
		"zookeeper.ssl.enabled.protocols=TLSv1.2,TLSv1.3\n" +
		"zookeeper.ssl.keystore.location=" + keystore + "\n" +
		"zookeeper.ssl.keystore.password=apass\n" +
		"zookeeper.ssl.truststore.location=" + ca.WriteCAPEM(t, dir, "ca.pem") + "\n" +
		"zookeeper.ssl.endpoint.identification.algorithm=HTTPS\n" +
		"zookeeper.connect=ignored:1\n"
	if err := os.WriteFile(file, []byte(props), 0o600); err != nil {
		t.Fatal(err)
	}
	return srv.Server, file
}

// TestToolsZooKeeperTLS: kafka-configs --zookeeper, kafka-acls
// --authorizer-properties and zookeeper-shell reach a TLS-only ZooKeeper
// port with Kafka's --zk-tls-config-file (and kafka-acls' inline
// zookeeper.ssl.* properties); what they write is there afterwards, owned
// by the tool's certificate identity (a plaintext session cannot change it).
// ZooKeeper's client system properties in KAFKA_OPTS configure TLS too.
func TestToolsZooKeeperTLS(t *testing.T) {
	t.Setenv("KAFKA_OPTS", "")
	srv, tlsFile := startTLSZooKeeper(t)
	connect := srv.SecureAddr + "/tls"

	out, errOut, code := runTool(t, "", "kafka-configs", "--zookeeper", connect, "--zk-tls-config-file", tlsFile,
		"--alter", "--entity-type", "users", "--entity-name", "alice", "--add-config", "SCRAM-SHA-256=[iterations=4096,password=alice-secret]")
	if code != 0 || !strings.Contains(out, "Completed updating config for entity: user-principal 'alice'.") {
		t.Fatalf("kafka-configs --alter over TLS: %d %q %q", code, out, errOut)
	}
	out, errOut, code = runTool(t, "", "kafka-configs", "--zookeeper", connect, "--zk-tls-config-file", tlsFile,
		"--describe", "--entity-type", "users", "--entity-name", "alice")
	if code != 0 || !strings.Contains(out, "SCRAM-SHA-256=salt=") {
		t.Fatalf("kafka-configs --describe over TLS: %d %q %q", code, out, errOut)
	}
	plain, err := zkutil.Connect(context.Background(), zkutil.Config{Connect: srv.Addr + "/tls", SessionTimeout: 10 * time.Second})
	if err != nil {
		t.Fatal(err)
	}
	defer plain.Close()
	// /config/users is one of Kafka's sensitive paths: with secure ACLs
	// only the writer's identity may even read it.
	if _, _, err := plain.Get(zkutil.EntityConfigPath(zkutil.ConfigTypeUser, "alice")); !errors.Is(err, zkutil.ErrNoAuth) {
		t.Fatalf("a session without the tool's certificate read the SCRAM credential: %v", err)
	}
	if _, err := plain.Set(zkutil.EntityConfigPath(zkutil.ConfigTypeUser, "alice"), []byte("{}"), -1); !errors.Is(err, zkutil.ErrNoAuth) {
		t.Fatalf("a session without the tool's certificate changed the SCRAM credential: %v", err)
	}
	// zookeeper-shell: Kafka's -zk-tls-config-file after the host; the
	// stored credential is Kafka's format.
	out, errOut, code = runTool(t, "", "zookeeper-shell", connect, "-zk-tls-config-file", tlsFile, "get", zkutil.EntityConfigPath(zkutil.ConfigTypeUser, "alice"))
	if code != 0 {
		t.Fatalf("zookeeper-shell over TLS: %d %q %q", code, out, errOut)
	}
	var doc struct{ Config map[string]string }
	if err := json.Unmarshal([]byte(out), &doc); err != nil {
		t.Fatalf("zookeeper-shell get: %q: %v", out, err)
	}
	if cred, err := scram.ParseCredential(doc.Config["SCRAM-SHA-256"]); err != nil || cred.Iterations != 4096 {
		t.Fatalf("stored SCRAM-SHA-256 %q: %v", doc.Config["SCRAM-SHA-256"], err)
	}

	// kafka-acls with the TLS keys inline (authorizer.-prefixed wins) ...
	args := append([]string{"kafka-acls", "--authorizer-properties", "zookeeper.connect=" + connect}, authorizerSSLArgs(t, tlsFile)...)
	out, errOut, code = runTool(t, "", append(args, "--add", "--allow-principal", "User:alice", "--operation", "Read", "--topic", "secured")...)
	if code != 0 || !strings.Contains(out, "Adding ACLs for resource `ResourcePattern(resourceType=TOPIC, name=secured, patternType=LITERAL)`") {
		t.Fatalf("kafka-acls --add over TLS: %d %q %q", code, out, errOut)
	}
	bindings, err := acl.NewStore(plain).List(acl.Filter{Type: acl.ResourceAny, Pattern: acl.PatternAny, Operation: acl.OpAny, Permission: acl.PermissionAny})
	if err != nil || len(bindings) != 1 || bindings[0].Resource.Name != "secured" || bindings[0].Entry.Principal.String() != "User:alice" {
		t.Fatalf("ACLs after kafka-acls --add: %+v %v", bindings, err)
	}
	// ... and with --zk-tls-config-file.
	out, errOut, code = runTool(t, "", "kafka-acls", "--authorizer-properties", "zookeeper.connect="+connect, "--zk-tls-config-file", tlsFile,
		"--list", "--topic", "secured")
	if code != 0 || !strings.Contains(out, "(principal=User:alice, host=*, operation=READ, permissionType=ALLOW)") {
		t.Fatalf("kafka-acls --list over TLS: %d %q %q", code, out, errOut)
	}

	// ZooKeeper's own client system properties in KAFKA_OPTS work too, as
	// a Kafka tool's ZKClientConfig starts from them.
	t.Setenv("KAFKA_OPTS", zkClientSystemProps(t, tlsFile))
	out, errOut, code = runTool(t, "", "zookeeper-shell", connect, "ls", zkutil.EntityTypeConfigPath(zkutil.ConfigTypeUser))
	if code != 0 || strings.TrimSpace(out) != "[alice]" {
		t.Fatalf("zookeeper-shell with -Dzookeeper.client.secure=true in KAFKA_OPTS: %d %q %q", code, out, errOut)
	}
}

// authorizerSSLArgs turns the zookeeper.ssl.* keys of the TLS config file
// into kafka-acls --authorizer-properties authorizer.zookeeper.ssl.*
// arguments.
func authorizerSSLArgs(t *testing.T, file string) []string {
	t.Helper()
	data, err := os.ReadFile(file)
	if err != nil {
		t.Fatal(err)
	}
	var args []string
	for _, l := range strings.Split(strings.TrimSpace(string(data)), "\n") {
		if strings.HasPrefix(l, "zookeeper.ssl.") {
			args = append(args, "--authorizer-properties", "authorizer."+l)
		}
	}
	return args
}

// zkClientSystemProps is the TLS config file as ZooKeeper's own client
// system properties (-Dzookeeper.client.secure=true ...), for KAFKA_OPTS.
func zkClientSystemProps(t *testing.T, file string) string {
	t.Helper()
	data, err := os.ReadFile(file)
	if err != nil {
		t.Fatal(err)
	}
	sysProp := map[string]string{
		"zookeeper.ssl.client.enable":       "zookeeper.client.secure",
		"zookeeper.ssl.keystore.location":   "zookeeper.ssl.keyStore.location",
		"zookeeper.ssl.keystore.password":   "zookeeper.ssl.keyStore.password",
		"zookeeper.ssl.truststore.location": "zookeeper.ssl.trustStore.location",
	}
	var opts []string
	for _, l := range strings.Split(string(data), "\n") {
		if k, v, ok := strings.Cut(l, "="); ok && sysProp[k] != "" {
			opts = append(opts, "-D"+sysProp[k]+"="+v)
		}
	}
	return strings.Join(opts, " ")
}

// TestToolsZooKeeperTLSPortWithoutTLS: a tool pointed at the TLS port
// without TLS settings fails with Kafka's timeout message and a hint naming
// the command's TLS option, within its connection bound (here the
// command's context, 3 s).
func TestToolsZooKeeperTLSPortWithoutTLS(t *testing.T) {
	t.Setenv("KAFKA_OPTS", "")
	srv, _ := startTLSZooKeeper(t)
	for _, tc := range []struct {
		args []string
		hint string
	}{
		{[]string{"kafka-configs", "--zookeeper", srv.SecureAddr, "--describe", "--entity-type", "users"}, "in --zk-tls-config-file"},
		{[]string{"kafka-acls", "--authorizer-properties", "zookeeper.connect=" + srv.SecureAddr, "--list"}, "in --authorizer-properties or --zk-tls-config-file"},
		{[]string{"zookeeper-shell", srv.SecureAddr, "ls", "/"}, "in -zk-tls-config-file"},
	} {
		ctx, cancel := context.WithTimeout(context.Background(), 3*time.Second)
		var out, errOut bytes.Buffer
		start := time.Now()
		code := Run(append([]string{"samsa"}, tc.args...), Env{Stdin: strings.NewReader(""), Stdout: &out, Stderr: &errOut, Context: ctx})
		took := time.Since(start)
		cancel()
		msg := out.String() + errOut.String()
		if code == 0 || !strings.Contains(msg, "Timed out waiting for connection while in state: CONNECTING") ||
			!strings.Contains(msg, "zookeeper.ssl.client.enable=true "+tc.hint) {
			t.Errorf("%s without TLS on the TLS port: %d %q", tc.args[0], code, msg)
		}
		if took > 25*time.Second {
			t.Errorf("%s waited %v, past its 3 s bound", tc.args[0], took)
		}
	}
}

// TestToolsZooKeeperJAASClient: with -Djava.security.auth.login.config in
// KAFKA_OPTS (how Kafka's scripts pass JVM options), bin/kafka-configs.sh
// --zookeeper authenticates as the JAAS Client section's user and, as
// Kafka's tools do then, creates its znodes with secure ACLs: only that
// identity can change the SCRAM credential it wrote.
func TestToolsZooKeeperJAASClient(t *testing.T) {
	srv, jaas := zktest.StartDigest(t)
	connect := srv.Addr + "/jaas"
	// Through the real script: bin/kafka-configs.sh hands KAFKA_OPTS on.
	out, code := tooltest.RunScript(t, []string{"KAFKA_OPTS=-Xmx512M -Djava.security.auth.login.config=" + jaas}, "kafka-configs.sh",
		"--zookeeper", connect, "--alter", "--entity-type", "users", "--entity-name", "bob", "--add-config", "SCRAM-SHA-512=[password=bob-secret]")
	if code != 0 {
		t.Fatalf("kafka-configs.sh with the JAAS Client identity: %d %q", code, out)
	}
	path := zkutil.EntityConfigPath(zkutil.ConfigTypeUser, "bob")
	anon, same := zktest.DigestSessions(t, connect)
	if _, err := anon.Set(path, []byte("{}"), -1); !errors.Is(err, zkutil.ErrNoAuth) {
		t.Fatalf("an unauthenticated session changed the SCRAM credential: %v", err)
	}
	data, _, err := same.Get(path)
	if err != nil || !strings.Contains(string(data), "SCRAM-SHA-512") {
		t.Fatalf("%s: %q %v", path, data, err)
	}
	if _, err := same.Set(path, data, -1); err != nil {
		t.Fatalf("the JAAS Client identity cannot change its own znode: %v", err)
	}
}
