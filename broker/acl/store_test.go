package acl_test

import (
	"context"
	"fmt"
	"sync"
	"testing"
	"time"

	"samsa/broker/acl"
	"samsa/broker/principal"
	"samsa/zkutil"
	"samsa/zkutil/zktest"
)

func TestMain(m *testing.M) { zktest.Main(m) }

func connect(t *testing.T, cs string) *zkutil.Client {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	c, err := zkutil.Connect(ctx, zkutil.Config{Connect: cs, SessionTimeout: 6 * time.Second})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(c.Close)
	return c
}

func user(n string) acl.Entry {
	return acl.Entry{Principal: principal.User(n), Host: "*", Operation: acl.OpRead, Permission: acl.Allow}
}

// TestACLStoreConcurrentWriters: writers on separate sessions adding to the
// same resource at once all land, through the zkVersion-conditional write
// and its retry, and a running Authorizer sees every one through the change
// notifications.
func TestACLStoreConcurrentWriters(t *testing.T) {
	srv := zktest.Start(t)
	cs := srv.Chroot(t)
	a := acl.New(connect(t, cs), acl.Config{})
	if err := a.Start(context.Background()); err != nil {
		t.Fatal(err)
	}
	defer a.Close()
	r := acl.Resource{Type: acl.ResourceTopic, Name: "t", Pattern: acl.PatternLiteral}
	const writers = 6
	var wg sync.WaitGroup
	errs := make([]error, writers)
	for i := 0; i < writers; i++ {
		st := acl.NewStore(connect(t, cs))
		wg.Add(1)
		go func(i int) {
			defer wg.Done()
			e, _ := st.Create([]acl.Binding{{Resource: r, Entry: user(fmt.Sprintf("u%d", i))}})
			errs[i] = e[0]
		}(i)
	}
	wg.Wait()
	for i, err := range errs {
		if err != nil {
			t.Fatalf("writer %d: %v", i, err)
		}
	}
	got, _, err := acl.NewStore(connect(t, cs)).Get(r)
	if err != nil || len(got) != writers {
		t.Fatalf("stored %d entries (%v), want %d: a concurrent write was lost", len(got), err, writers)
	}
	deadline := time.Now().Add(5 * time.Second)
	for {
		ok := true
		for i := 0; i < writers; i++ {
			ok = ok && a.Authorize(principal.User(fmt.Sprintf("u%d", i)), "10.0.0.1", acl.OpRead, acl.ResourceTopic, "t")
		}
		if ok {
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("the authorizer did not apply every notification")
		}
		time.Sleep(10 * time.Millisecond)
	}
	if a.Authorize(principal.User("other"), "10.0.0.1", acl.OpRead, acl.ResourceTopic, "t") {
		t.Fatal("a principal without an ACL was allowed")
	}
}

// TestACLAuthorizerCreateListDelete: the Authorizer's own writes are in its
// cache at once; a MATCH filter lists every pattern that applies to a name;
// deleting the last ACL of a resource removes its znode.
func TestACLAuthorizerCreateListDelete(t *testing.T) {
	srv := zktest.Start(t)
	cs := srv.Chroot(t)
	zk := connect(t, cs)
	a := acl.New(zk, acl.Config{})
	if err := a.Start(context.Background()); err != nil {
		t.Fatal(err)
	}
	defer a.Close()
	lit := acl.Resource{Type: acl.ResourceTopic, Name: "app-x", Pattern: acl.PatternLiteral}
	pre := acl.Resource{Type: acl.ResourceTopic, Name: "app-", Pattern: acl.PatternPrefixed}
	wild := acl.Resource{Type: acl.ResourceTopic, Name: "*", Pattern: acl.PatternLiteral}
	other := acl.Resource{Type: acl.ResourceTopic, Name: "b", Pattern: acl.PatternLiteral}
	deny := user("bob")
	deny.Permission = acl.Deny
	for i, err := range a.CreateACLs([]acl.Binding{{lit, user("alice")}, {pre, user("alice")}, {wild, deny}, {other, user("alice")},
		{acl.Resource{Type: acl.ResourceCluster, Name: "x", Pattern: acl.PatternLiteral}, user("alice")}}) {
		if (i == 4) != (err != nil) {
			t.Fatalf("binding %d: %v", i, err)
		}
	}
	if !a.Authorize(principal.User("alice"), "h", acl.OpDescribe, acl.ResourceTopic, "app-y") {
		t.Fatal("prefixed Read does not imply Describe")
	}
	name := "app-x"
	match := acl.Filter{Type: acl.ResourceTopic, Name: &name, Pattern: acl.PatternMatch, Operation: acl.OpAny, Permission: acl.PermissionAny}
	if got := a.ACLs(match); len(got) != 3 {
		t.Fatalf("MATCH app-x lists %v, want the literal, the prefix and the wildcard", got)
	}
	alice := "User:alice"
	del := acl.Filter{Type: acl.ResourceTopic, Pattern: acl.PatternAny, Principal: &alice, Operation: acl.OpAny, Permission: acl.PermissionAny}
	res := a.DeleteACLs([]acl.Filter{del})
	if len(res[0]) != 3 {
		t.Fatalf("deleted %v, want alice's three topic ACLs", res[0])
	}
	if a.Authorize(principal.User("alice"), "h", acl.OpRead, acl.ResourceTopic, "app-x") {
		t.Fatal("alice still reads after her ACLs were deleted")
	}
	if ok, _, _ := zk.Exists(zkutil.ACLResourcePath(zkutil.ACLResource{Type: "Topic", Name: "app-x", PatternType: zkutil.ACLPatternLiteral})); ok {
		t.Fatal("the emptied resource znode was left")
	}
	if left := a.ACLs(acl.Filter{Type: acl.ResourceAny, Pattern: acl.PatternAny, Operation: acl.OpAny, Permission: acl.PermissionAny}); len(left) != 1 || left[0].Entry != deny {
		t.Fatalf("left %v, want only bob's deny", left)
	}
}
