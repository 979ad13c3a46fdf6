package acl_test

import (
	"fmt"
	"math/rand/v2"
	"slices"
	"testing"
	"time"

	"samsa/broker/acl"
	"samsa/broker/principal"
	"samsa/zkutil/zktest"
)

// TestACLCacheEqualsZooKeeperAfterAnySequence is CVE-2024-27309's property
// (ACLs mis-enforced after one of three or more ACLs of a resource was
// removed): after any seeded sequence of single-ACL adds and removes, made
// through two authorizers (two brokers) and a bare store (a third writer
// whose changes reach both only through the change notifications), each
// authorizer's cache equals what ZooKeeper holds, and each decision equals
// the one computed from ZooKeeper's ACLs alone (deny wins; then an allow
// for the operation; no ACL: refused).
func TestACLCacheEqualsZooKeeperAfterAnySequence(t *testing.T) {
	srv := zktest.Start(t)
	cs := srv.Chroot(t)
	var auths [2]*acl.Authorizer
	for i := range auths {
		auths[i] = acl.New(connect(t, cs), acl.Config{})
		if err := auths[i].Start(t.Context()); err != nil {
			t.Fatal(err)
		}
		t.Cleanup(auths[i].Close)
	}
	store := acl.NewStore(connect(t, cs))
	names := []string{"t1", "t2", "t3"}
	users := []string{"alice", "bob", "carol"}
	ops := []acl.Operation{acl.OpRead, acl.OpWrite}
	perms := []acl.Permission{acl.Allow, acl.Deny}
	rng := rand.New(rand.NewPCG(27309, 1))
	randomBinding := func() acl.Binding {
		return acl.Binding{Resource: acl.Resource{Type: acl.ResourceTopic, Name: names[rng.IntN(len(names))], Pattern: acl.PatternLiteral},
			Entry: acl.Entry{Principal: principal.User(users[rng.IntN(len(users))]), Host: "*",
				Operation: ops[rng.IntN(len(ops))], Permission: perms[rng.IntN(len(perms))]}}
	}
	const steps, checkEvery = 120, 15
	for step := 1; step <= steps; step++ {
		b := randomBinding()
		// Two adds for one remove, so resources hold three and more ACLs
		// when one of them goes.
		add := rng.IntN(3) != 0
		switch w := rng.IntN(3); {
		case add && w < 2:
			if errs := auths[w].CreateACLs([]acl.Binding{b}); errs[0] != nil {
				t.Fatalf("step %d: authorizer %d create %v: %v", step, w, b, errs[0])
			}
		case add:
			if errs, _ := store.Create([]acl.Binding{b}); errs[0] != nil {
				t.Fatalf("step %d: store create %v: %v", step, b, errs[0])
			}
		case w < 2:
			for _, d := range auths[w].DeleteACLs([]acl.Filter{exactFilter(b)})[0] {
				if d.Err != nil {
					t.Fatalf("step %d: authorizer %d delete %v: %v", step, w, b, d.Err)
				}
			}
		default:
			del, _ := store.Delete([]acl.Filter{exactFilter(b)}, []acl.Resource{b.Resource})
			for _, d := range del[0] {
				if d.Err != nil {
					t.Fatalf("step %d: store delete %v: %v", step, b, d.Err)
				}
			}
		}
		if step%checkEvery == 0 {
			checkCachesMatchZooKeeper(t, step, auths[:], store, names, users, ops)
		}
	}
}

// exactFilter matches b and nothing else.
func exactFilter(b acl.Binding) acl.Filter {
	name, p, host := b.Resource.Name, b.Entry.Principal.String(), b.Entry.Host
	return acl.Filter{Type: b.Resource.Type, Name: &name, Pattern: b.Resource.Pattern, Principal: &p, Host: &host,
		Operation: b.Entry.Operation, Permission: b.Entry.Permission}
}

var allACLs = acl.Filter{Type: acl.ResourceAny, Pattern: acl.PatternAny, Operation: acl.OpAny, Permission: acl.PermissionAny}

// checkCachesMatchZooKeeper waits (10 s at most: the notifications are
// asynchronous) until every authorizer lists what ZooKeeper holds, then
// checks every decision against ZooKeeper's ACLs.
func checkCachesMatchZooKeeper(t *testing.T, step int, auths []*acl.Authorizer, store *acl.Store,
	names, users []string, ops []acl.Operation) {
	t.Helper()
	zk, err := store.List(allACLs)
	if err != nil {
		t.Fatal(err)
	}
	want := bindingStrings(zk)
	deadline := time.Now().Add(10 * time.Second)
	for i, a := range auths {
		for !slices.Equal(bindingStrings(a.ACLs(allACLs)), want) {
			if time.Now().After(deadline) {
				t.Fatalf("step %d: authorizer %d caches\n%v\nZooKeeper holds\n%v", step, i, bindingStrings(a.ACLs(allACLs)), want)
			}
			time.Sleep(10 * time.Millisecond)
		}
	}
	for _, name := range names {
		var entries []acl.Entry
		for _, b := range zk {
			if b.Resource.Name == name {
				entries = append(entries, b.Entry)
			}
		}
		for _, u := range users {
			for _, op := range ops {
				exp := expectedDecision(entries, principal.User(u), op)
				for i, a := range auths {
					if got := a.Authorize(principal.User(u), "10.0.0.1", op, acl.ResourceTopic, name); got != exp {
						t.Fatalf("step %d: authorizer %d: %s %s on %s = %v, ZooKeeper's ACLs %v say %v",
							step, i, u, op, name, got, entries, exp)
					}
				}
			}
		}
	}
}

// expectedDecision is the rule written out over one resource's literal
// ACLs (principals and operations as the test uses them: no wildcards).
func expectedDecision(entries []acl.Entry, p principal.Principal, op acl.Operation) bool {
	allowed := false
	for _, e := range entries {
		if e.Principal != p || e.Operation != op {
			continue
		}
		if e.Permission == acl.Deny {
			return false
		}
		allowed = true
	}
	return allowed
}

func bindingStrings(bs []acl.Binding) []string {
	out := make([]string, len(bs))
	for i, b := range bs {
		out[i] = fmt.Sprintf("%s %s", b.Resource, b.Entry)
	}
	slices.Sort(out)
	return out
}
