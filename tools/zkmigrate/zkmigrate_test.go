package zkmigrate

import (
	"context"
	"crypto/sha1"
	"encoding/base64"
	"errors"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"time"

	"samsa/broker/brokertest"
	"samsa/broker/security/scram"
	"samsa/zkutil"
	"samsa/zkutil/zktest"
)

const (
	brokerUser = "broker"
	brokerPass = "broker-secret"
)

// writeJAAS writes a JAAS file and points KAFKA_OPTS at it, as Kafka's
// scripts pass it.
func writeJAAS(t *testing.T, text string) string {
	t.Helper()
	f := filepath.Join(t.TempDir(), "zk_jaas.conf")
	if err := os.WriteFile(f, []byte(text), 0o600); err != nil {
		t.Fatal(err)
	}
	t.Setenv("KAFKA_OPTS", "-Xmx256M -Djava.security.auth.login.config="+f)
	return f
}

const brokerJAAS = `Client {
   org.apache.zookeeper.server.auth.DigestLoginModule required
   username="broker"
   password="broker-secret";
};
`

func connectZK(t *testing.T, connect string, creds ...zkutil.Credential) *zkutil.Client {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	c, err := zkutil.Connect(ctx, zkutil.Config{Connect: connect, SessionTimeout: 10 * time.Second, Auth: creds})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(c.Close)
	return c
}

// brokerDigestID is the digest identity ZooKeeper stores for
// broker:broker-secret: user:base64(sha1(user:password)).
func brokerDigestID() string {
	sum := sha1.Sum([]byte(brokerUser + ":" + brokerPass))
	return brokerUser + ":" + base64.StdEncoding.EncodeToString(sum[:])
}

// rewrite sets path's data to what it holds: a write that needs the write
// permission and changes nothing.
func rewrite(c *zkutil.Client, path string) error {
	data, st, err := c.Get(path)
	if err != nil {
		return err
	}
	_, err = c.Set(path, data, st.Version)
	return err
}

// TestZKMigrateSecureAndBack: an unsecured cluster whose broker has the
// JAAS Client identity is migrated to secure ACLs: every znode under
// Kafka's roots gets CREATOR_ALL for that identity plus world-read (the
// sensitive /config/users ones owner-only), an unauthenticated client can
// read but not write /brokers/..., /config/..., /kafka-acl/..., the
// identity can, and the broker keeps creating topics and electing leaders.
// --zookeeper.acl unsecure opens them all again.
func TestZKMigrateSecureAndBack(t *testing.T) {
	writeJAAS(t, brokerJAAS)
	creds := zkutil.Credential{Scheme: "digest", Auth: []byte(brokerUser + ":" + brokerPass)}
	c := brokertest.NewCluster(t, 1, brokertest.WithZooKeeperAuth(creds))
	c.CreateTopic(t, "before", 1, 1)
	c.WaitForLeader(t, "before", 0)
	owner := connectZK(t, c.ZKConnect(), creds)
	aclPath := zkutil.ACLResourcePath(zkutil.ACLResource{Type: "Topic", Name: "orders", PatternType: zkutil.ACLPatternLiteral})
	if _, err := owner.CreateRecursive(aclPath, zkutil.EncodeACLs(nil), zkutil.Persistent); err != nil {
		t.Fatal(err)
	}
	if err := owner.SetEntityConfig(zkutil.ConfigTypeUser, "alice", map[string]string{"SCRAM-SHA-256": scram.SHA256.NewCredential("alice-secret", 4096).String()}); err != nil {
		t.Fatal(err)
	}
	anon := connectZK(t, c.ZKConnect())
	public := []string{zkutil.TopicPath("before"), zkutil.PartitionStatePath("before", 0),
		zkutil.EntityConfigPath(zkutil.ConfigTypeTopic, "before"), aclPath}
	sensitive := zkutil.EntityConfigPath(zkutil.ConfigTypeUser, "alice")
	for _, p := range append(public, sensitive) {
		if err := rewrite(anon, p); err != nil {
			t.Fatalf("before the migration an unauthenticated client cannot write %s: %v", p, err)
		}
	}

	if out, errOut, code := runTool(t, "--zookeeper.acl", "secure", "--zookeeper.connect", c.ZKConnect()); code != 0 {
		t.Fatalf("secure: exit %d, stdout %q, stderr %q", code, out, errOut)
	}
	secureACL := []zkutil.ZnodeACL{{Scheme: "digest", ID: brokerDigestID(), Perms: zkutil.PermAll}, {Scheme: "world", ID: "anyone", Perms: zkutil.PermRead}}
	for _, p := range append(public, "/", zkutil.TopicsPath(), zkutil.BrokerIDPath(c.Broker(0).ID()), zkutil.ControllerPath()) {
		if got, err := owner.GetACL(p); err != nil || !reflect.DeepEqual(got, secureACL) {
			t.Errorf("ACL of %s after secure: %v, %v; want %v", p, got, err, secureACL)
		}
	}
	if got, err := owner.GetACL(sensitive); err != nil || !reflect.DeepEqual(got, secureACL[:1]) {
		t.Errorf("ACL of %s after secure: %v, %v; want %v", sensitive, got, err, secureACL[:1])
	}
	for _, p := range zkutil.SecureRootPaths() {
		if ok, _, err := owner.Exists(p); err != nil || !ok {
			t.Errorf("secure root %s missing after the migration (%v)", p, err)
		}
	}
	for _, p := range public {
		if _, _, err := anon.Get(p); err != nil {
			t.Errorf("an unauthenticated client cannot read %s: %v", p, err)
		}
		if err := rewrite(anon, p); !errors.Is(err, zkutil.ErrNoAuth) {
			t.Errorf("an unauthenticated client wrote %s after secure: %v", p, err)
		}
		if err := rewrite(owner, p); err != nil {
			t.Errorf("the JAAS identity cannot write %s: %v", p, err)
		}
	}
	if _, err := anon.Create(zkutil.TopicPath("intruder"), []byte("{}"), zkutil.Persistent); !errors.Is(err, zkutil.ErrNoAuth) {
		t.Errorf("an unauthenticated client created a topic znode: %v", err)
	}
	if _, _, err := anon.Get(sensitive); !errors.Is(err, zkutil.ErrNoAuth) {
		t.Errorf("an unauthenticated client read the SCRAM credential: %v", err)
	}
	// The broker, with the same identity, keeps working.
	c.CreateTopic(t, "after", 1, 1)
	c.WaitForLeader(t, "after", 0)

	if out, errOut, code := runTool(t, "--zookeeper.acl", "unsecure", "--zookeeper.connect", c.ZKConnect()); code != 0 {
		t.Fatalf("unsecure: exit %d, stdout %q, stderr %q", code, out, errOut)
	}
	open := []zkutil.ZnodeACL{{Scheme: "world", ID: "anyone", Perms: zkutil.PermAll}}
	for _, p := range append(public, sensitive, "/", zkutil.TopicPath("after")) {
		if got, err := anon.GetACL(p); err != nil || !reflect.DeepEqual(got, open) {
			t.Errorf("ACL of %s after unsecure: %v, %v", p, got, err)
		}
		if err := rewrite(anon, p); err != nil {
			t.Errorf("an unauthenticated client cannot write %s after unsecure: %v", p, err)
		}
	}
}

// TestZKMigrateRefusals: without an identity, with a JAAS file lacking
// the Client section or giving no digest credentials, and with a bad
// --zookeeper.acl, the tool exits 1 with Kafka's messages (Samsa's own for
// the SASL-only section) and changes nothing; --enable.path.check stops on
// missing roots after Kafka's warning, and without it the missing roots
// are created with secure ACLs.
func TestZKMigrateRefusals(t *testing.T) {
	connect := zktest.Start(t).Chroot(t)
	t.Setenv("KAFKA_OPTS", "")
	out, errOut, code := runTool(t, "--zookeeper.acl", "secure", "--zookeeper.connect", connect)
	if code != 1 || !strings.HasPrefix(errOut, "ERROR: No JAAS configuration file has been specified and no TLS client certificate has been specified.") ||
		!strings.HasSuffix(errOut, "java.lang.IllegalArgumentException: Incorrect configuration\n") {
		t.Errorf("no identity: exit %d, stdout %q, stderr %q", code, out, errOut)
	}
	noClient := writeJAAS(t, "KafkaServer {\n org.apache.kafka.common.security.plain.PlainLoginModule required user_a=\"b\";\n};\n")
	out, errOut, code = runTool(t, "--zookeeper.acl", "secure", "--zookeeper.connect", connect)
	if code != 1 || out != "ERROR: Security isn't enabled, most likely the file isn't set properly: "+noClient+"\n" {
		t.Errorf("no Client section: exit %d, stdout %q, stderr %q", code, out, errOut)
	}
	writeJAAS(t, "Client {\n com.sun.security.auth.module.Krb5LoginModule required useKeyTab=true principal=\"kafka/h@R\";\n};\n")
	if _, errOut, code = runTool(t, "--zookeeper.acl", "secure", "--zookeeper.connect", connect); code != 1 || !strings.Contains(errOut, "go-zookeeper has no SASL") {
		t.Errorf("Kerberos Client section: exit %d, stderr %q", code, errOut)
	}
	writeJAAS(t, brokerJAAS)
	if out, errOut, code = runTool(t, "--zookeeper.acl", "open", "--zookeeper.connect", connect); code != 1 || !strings.HasPrefix(errOut, usageMessage+"\n") {
		t.Errorf("--zookeeper.acl open: exit %d, stdout %q, stderr %q", code, out, errOut)
	}
	anon := connectZK(t, connect)
	if got, err := anon.GetACL("/"); err != nil || len(got) != 1 || got[0].Scheme != "world" || got[0].Perms != zkutil.PermAll {
		t.Fatalf("a refused run changed the chroot's ACL: %v, %v", got, err)
	}

	missing := strings.Join(zkutil.SecureRootPaths(), ",")
	wantWarning := "Warning: The following secure root paths do not exist in ZooKeeper: " + missing + "\n" +
		"That might be due to an incorrect chroot is specified when executing the command.\n"
	out, errOut, code = runTool(t, "--zookeeper.acl", "secure", "--zookeeper.connect", connect, "--enable.path.check",
		"--zookeeper.session.timeout", "10000", "--zookeeper.connection.timeout", "10000")
	if code != 1 || out != wantWarning+"Exit the command.\n" {
		t.Errorf("--enable.path.check: exit %d, stdout %q, stderr %q", code, out, errOut)
	}
	if ok, _, err := anon.Exists(zkutil.BrokersPath()); err != nil || ok {
		t.Errorf("--enable.path.check created %s (%v)", zkutil.BrokersPath(), err)
	}
	out, errOut, code = runTool(t, "--zookeeper.acl", "secure", "--zookeeper.connect", connect)
	if code != 0 || out != wantWarning {
		t.Errorf("secure on an empty chroot: exit %d, stdout %q, stderr %q", code, out, errOut)
	}
	for _, p := range zkutil.SecureRootPaths() {
		ok, _, err := anon.Exists(p)
		if p == zkutil.ControllerPath() {
			if err != nil || ok {
				t.Errorf("%s created (%v): it is left to the controller", p, err)
			}
			continue
		}
		if err != nil || !ok {
			t.Errorf("%s not created (%v)", p, err)
			continue
		}
		if _, err := anon.Create(p+"/probe", nil, zkutil.Persistent); !errors.Is(err, zkutil.ErrNoAuth) {
			t.Errorf("an unauthenticated client created a child of %s: %v", p, err)
		}
	}
}
