package zkutil_test

import (
	"context"
	"crypto/sha1"
	"encoding/base64"
	"errors"
	"reflect"
	"testing"
	"time"

	"samsa/zkutil"
	"samsa/zkutil/zktest"
)

func connectAs(t *testing.T, connect string, secure bool, creds ...zkutil.Credential) *zkutil.Client {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	c, err := zkutil.Connect(ctx, zkutil.Config{Connect: connect, SessionTimeout: 6 * time.Second, SecureACLs: secure, Auth: creds})
	if err != nil {
		t.Fatalf("connect: %v", err)
	}
	t.Cleanup(c.Close)
	return c
}

func digest(user, password string) zkutil.Credential {
	return zkutil.Credential{Scheme: "digest", Auth: []byte(user + ":" + password)}
}

// digestID is ZooKeeper's DigestAuthenticationProvider id for user:password.
func digestID(user, password string) string {
	h := sha1.Sum([]byte(user + ":" + password))
	return user + ":" + base64.StdEncoding.EncodeToString(h[:])
}

// TestZKSecureACLs: with zookeeper.set.acl a digest-authenticated broker
// session creates znodes that only its identity may change; everyone may
// read them except the sensitive ones (SCRAM credentials under
// /config/users, dynamic broker configs), and /consumers stays open, as
// Kafka's ZkData.defaultAcls.
func TestZKSecureACLs(t *testing.T) {
	srv := zktest.Start(t)
	cs := srv.Chroot(t)
	if _, err := zkutil.Connect(context.Background(), zkutil.Config{Connect: cs, SecureACLs: true}); !errors.Is(err, zkutil.ErrSecureACLsWithoutAuth) {
		t.Fatalf("secure ACLs without authentication: %v", err)
	}
	broker := connectAs(t, cs, true, digest("broker", "secret"))
	mustf(t, broker.CreatePersistentPaths(), "persistent paths")
	_, err := broker.CreateRecursive("/config/users/alice", []byte(`{"version":1,"config":{}}`), zkutil.Persistent)
	mustf(t, err, "user config")
	_, err = broker.CreateRecursive("/brokers/topics/t", []byte(`{}`), zkutil.Persistent)
	mustf(t, err, "topic")
	t.Cleanup(func() {
		// Only the broker's identity may delete what it created.
		_ = broker.DeleteRecursive("/")
	})

	owner := zkutil.ZnodeACL{Scheme: "digest", ID: digestID("broker", "secret"), Perms: zkutil.PermAll}
	worldRead := zkutil.ZnodeACL{Scheme: "world", ID: "anyone", Perms: zkutil.PermRead}
	for path, want := range map[string][]zkutil.ZnodeACL{
		"/brokers/topics/t":   {owner, worldRead},
		"/brokers/ids":        {owner, worldRead},
		"/config/users/alice": {owner},
		"/config/users":       {owner},
		"/config/brokers":     {owner},
		"/config/topics":      {owner, worldRead},
		"/consumers":          {{Scheme: "world", ID: "anyone", Perms: zkutil.PermAll}},
	} {
		got, err := broker.GetACL(path)
		mustf(t, err, "getacl %s", path)
		if !reflect.DeepEqual(got, want) {
			t.Errorf("ACL of %s = %+v, want %+v", path, got, want)
		}
	}

	anon := connectAs(t, cs, false)
	if _, _, err := anon.Get("/brokers/topics/t"); err != nil {
		t.Fatalf("world read of a topic: %v", err)
	}
	if _, err := anon.Set("/brokers/topics/t", []byte(`{"partitions":{}}`), zkutil.AnyVersion); !errors.Is(err, zkutil.ErrNoAuth) {
		t.Fatalf("unauthenticated write of a topic: %v, want ErrNoAuth", err)
	}
	if _, _, err := anon.Get("/config/users/alice"); !errors.Is(err, zkutil.ErrNoAuth) {
		t.Fatalf("unauthenticated read of SCRAM credentials: %v, want ErrNoAuth", err)
	}
	other := connectAs(t, cs, true, digest("mallory", "guess"))
	if _, err := other.Create("/brokers/topics/evil", nil, zkutil.Persistent); !errors.Is(err, zkutil.ErrNoAuth) {
		t.Fatalf("another identity creating a topic: %v, want ErrNoAuth", err)
	}
	if _, err := anon.Create("/consumers/g", nil, zkutil.Persistent); err != nil {
		t.Fatalf("/consumers stays open for old consumers: %v", err)
	}
	// The same identity on a new session keeps the rights.
	again := connectAs(t, cs, true, digest("broker", "secret"))
	if _, err := again.Set("/brokers/topics/t", []byte(`{}`), zkutil.AnyVersion); err != nil {
		t.Fatalf("the broker identity rewriting its znode: %v", err)
	}
}
