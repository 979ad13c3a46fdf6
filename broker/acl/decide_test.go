package acl

import (
	"fmt"
	"testing"

	"samsa/broker/principal"
)

func lit(t ResourceType, n string) Resource {
	return Resource{Type: t, Name: n, Pattern: PatternLiteral}
}
func pre(t ResourceType, n string) Resource {
	return Resource{Type: t, Name: n, Pattern: PatternPrefixed}
}
func allow(p string, op Operation) Entry {
	pr, _ := ParsePrincipal(p)
	return Entry{Principal: pr, Host: Wildcard, Operation: op, Permission: Allow}
}
func deny(p string, op Operation) Entry {
	e := allow(p, op)
	e.Permission = Deny
	return e
}

func snapOf(acls map[Resource][]Entry) *snapshot {
	s := emptySnapshot()
	for r, es := range acls {
		s.acls[r] = es
	}
	s.index()
	return s
}

func TestACLDecide(t *testing.T) {
	alice, bob := principal.User("alice"), principal.User("bob")
	hostEntry := allow("User:alice", OpRead)
	hostEntry.Host = "10.0.0.1"
	cases := []struct {
		name        string
		acls        map[Resource][]Entry
		p           principal.Principal
		host        string
		op          Operation
		topic       string
		allowIfNone bool
		want        bool
	}{
		{"no acls, default deny", nil, alice, "1.1.1.1", OpRead, "t", false, false},
		{"no acls, allow.everyone", nil, alice, "1.1.1.1", OpRead, "t", true, true},
		{"acls exist elsewhere only: still none for t", map[Resource][]Entry{lit(ResourceTopic, "u"): {allow("User:bob", OpRead)}}, alice, "h", OpRead, "t", true, true},
		{"literal allow", map[Resource][]Entry{lit(ResourceTopic, "t"): {allow("User:alice", OpRead)}}, alice, "h", OpRead, "t", false, true},
		{"allow.everyone ignored once an acl applies", map[Resource][]Entry{lit(ResourceTopic, "t"): {allow("User:bob", OpRead)}}, alice, "h", OpRead, "t", true, false},
		{"other principal", map[Resource][]Entry{lit(ResourceTopic, "t"): {allow("User:alice", OpRead)}}, bob, "h", OpRead, "t", false, false},
		{"wildcard principal", map[Resource][]Entry{lit(ResourceTopic, "t"): {allow("User:*", OpRead)}}, bob, "h", OpRead, "t", false, true},
		{"wildcard resource", map[Resource][]Entry{lit(ResourceTopic, "*"): {allow("User:alice", OpWrite)}}, alice, "h", OpWrite, "any", false, true},
		{"prefixed allow", map[Resource][]Entry{pre(ResourceTopic, "app-"): {allow("User:alice", OpWrite)}}, alice, "h", OpWrite, "app-orders", false, true},
		{"prefixed no match", map[Resource][]Entry{pre(ResourceTopic, "app-"): {allow("User:alice", OpWrite)}}, alice, "h", OpWrite, "ap", false, false},
		{"deny beats allow", map[Resource][]Entry{lit(ResourceTopic, "t"): {allow("User:alice", OpRead), deny("User:alice", OpRead)}}, alice, "h", OpRead, "t", false, false},
		{"prefixed deny beats literal allow", map[Resource][]Entry{lit(ResourceTopic, "app-x"): {allow("User:alice", OpRead)}, pre(ResourceTopic, "app"): {deny("User:*", OpAll)}}, alice, "h", OpRead, "app-x", false, false},
		{"deny All beats allow Read", map[Resource][]Entry{lit(ResourceTopic, "t"): {allow("User:alice", OpRead)}, lit(ResourceTopic, "*"): {deny("User:alice", OpAll)}}, alice, "h", OpRead, "t", false, false},
		{"allow All grants Write", map[Resource][]Entry{lit(ResourceTopic, "t"): {allow("User:alice", OpAll)}}, alice, "h", OpWrite, "t", false, true},
		{"Describe implied by Read", map[Resource][]Entry{lit(ResourceTopic, "t"): {allow("User:alice", OpRead)}}, alice, "h", OpDescribe, "t", false, true},
		{"Describe implied by Write", map[Resource][]Entry{lit(ResourceTopic, "t"): {allow("User:alice", OpWrite)}}, alice, "h", OpDescribe, "t", false, true},
		{"Describe implied by Delete", map[Resource][]Entry{lit(ResourceTopic, "t"): {allow("User:alice", OpDelete)}}, alice, "h", OpDescribe, "t", false, true},
		{"Describe implied by Alter", map[Resource][]Entry{lit(ResourceTopic, "t"): {allow("User:alice", OpAlter)}}, alice, "h", OpDescribe, "t", false, true},
		{"Describe not implied by Create", map[Resource][]Entry{lit(ResourceTopic, "t"): {allow("User:alice", OpCreate)}}, alice, "h", OpDescribe, "t", false, false},
		{"Read not implied by Describe", map[Resource][]Entry{lit(ResourceTopic, "t"): {allow("User:alice", OpDescribe)}}, alice, "h", OpRead, "t", false, false},
		{"DescribeConfigs implied by AlterConfigs", map[Resource][]Entry{lit(ResourceTopic, "t"): {allow("User:alice", OpAlterConfigs)}}, alice, "h", OpDescribeConfigs, "t", false, true},
		{"deny Read does not deny Describe", map[Resource][]Entry{lit(ResourceTopic, "t"): {deny("User:alice", OpRead), allow("User:alice", OpDescribe)}}, alice, "h", OpDescribe, "t", false, true},
		{"deny Describe with allow Read", map[Resource][]Entry{lit(ResourceTopic, "t"): {deny("User:alice", OpDescribe), allow("User:alice", OpRead)}}, alice, "h", OpDescribe, "t", false, false},
		{"host matches", map[Resource][]Entry{lit(ResourceTopic, "t"): {hostEntry}}, alice, "10.0.0.1", OpRead, "t", false, true},
		{"host differs", map[Resource][]Entry{lit(ResourceTopic, "t"): {hostEntry}}, alice, "10.0.0.2", OpRead, "t", false, false},
		{"group acl does not apply to topic", map[Resource][]Entry{lit(ResourceGroup, "t"): {allow("User:alice", OpRead)}}, alice, "h", OpRead, "t", false, false},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			s := snapOf(c.acls)
			got := decide(s.matching(nil, ResourceTopic, c.topic), c.p, c.host, c.op, c.allowIfNone)
			if got != c.want {
				t.Fatalf("decide = %v, want %v", got, c.want)
			}
		})
	}
}

func TestACLSuperUserAndByType(t *testing.T) {
	a := New(nil, Config{SuperUsers: []principal.Principal{principal.User("admin")}})
	a.snap.Store(snapOf(map[Resource][]Entry{lit(ResourceTopic, "t"): {deny("User:*", OpAll)}}))
	if !a.Authorize(principal.User("admin"), "h", OpWrite, ResourceTopic, "t") {
		t.Fatal("super user denied")
	}
	if a.Authorize(principal.User("x"), "h", OpWrite, ResourceTopic, "t") {
		t.Fatal("deny ignored")
	}
	byType := []struct {
		name string
		acls map[Resource][]Entry
		want bool
	}{
		{"none", nil, false},
		{"literal allow", map[Resource][]Entry{lit(ResourceTopic, "a"): {allow("User:alice", OpWrite)}}, true},
		{"literal allow denied literally", map[Resource][]Entry{lit(ResourceTopic, "a"): {allow("User:alice", OpWrite), deny("User:alice", OpWrite)}}, false},
		{"wildcard deny", map[Resource][]Entry{lit(ResourceTopic, "a"): {allow("User:alice", OpWrite)}, lit(ResourceTopic, "*"): {deny("User:alice", OpWrite)}}, false},
		{"prefix deny dominates", map[Resource][]Entry{pre(ResourceTopic, "ab"): {allow("User:alice", OpWrite)}, pre(ResourceTopic, "a"): {deny("User:alice", OpWrite)}}, false},
		{"read does not count", map[Resource][]Entry{lit(ResourceTopic, "a"): {allow("User:alice", OpRead)}}, false},
	}
	for _, c := range byType {
		if got := decideByType(snapOf(c.acls).acls, ResourceTopic, principal.User("alice"), "h", OpWrite, false); got != c.want {
			t.Errorf("%s: decideByType = %v, want %v", c.name, got, c.want)
		}
	}
}

func TestACLNamesAndFilters(t *testing.T) {
	if pascal(OpIdempotentWrite.String()) != "IdempotentWrite" || pascal(ResourceTransactionalID.String()) != "TransactionalId" {
		t.Fatal("pascal names wrong")
	}
	for _, s := range []string{"IdempotentWrite", "IDEMPOTENT_WRITE", "idempotentwrite"} {
		if ParseOperation(s) != OpIdempotentWrite {
			t.Fatalf("ParseOperation(%q)", s)
		}
	}
	if ParseOperation("Fly") != OpUnknown || ParseResourceType("Topic") != ResourceTopic {
		t.Fatal("parse wrong")
	}
	r := lit(ResourceTopic, "t")
	if got := r.String(); got != "ResourcePattern(resourceType=TOPIC, name=t, patternType=LITERAL)" {
		t.Fatal(got)
	}
	if got := allow("User:alice", OpRead).String(); got != "(principal=User:alice, host=*, operation=READ, permissionType=ALLOW)" {
		t.Fatal(got)
	}
	name := "app-orders"
	match := Filter{Type: ResourceTopic, Name: &name, Pattern: PatternMatch, Operation: OpAny, Permission: PermissionAny}
	for _, c := range []struct {
		r    Resource
		want bool
	}{{lit(ResourceTopic, "app-orders"), true}, {lit(ResourceTopic, "*"), true}, {pre(ResourceTopic, "app-"), true}, {pre(ResourceTopic, "b"), false}, {lit(ResourceGroup, "app-orders"), false}} {
		if got := match.MatchesResource(c.r); got != c.want {
			t.Errorf("MATCH filter on %v = %v", c.r, got)
		}
	}
	bad := Binding{Resource: lit(ResourceCluster, "x"), Entry: allow("User:a", OpAlter)}
	if bad.Validate() == nil {
		t.Fatal("cluster name other than kafka-cluster accepted")
	}
}

// BenchmarkACLAuthorize measures one Authorize against 1,000 ACLs: 900
// literal topic ACLs, 90 prefixed ones and 10 group ACLs, for a principal
// whose grant is a prefixed ACL (the longest path: every lookup misses
// until the prefix).
func BenchmarkACLAuthorize(b *testing.B) {
	acls := map[Resource][]Entry{}
	for i := 0; i < 900; i++ {
		acls[lit(ResourceTopic, fmt.Sprintf("topic-%04d", i))] = []Entry{allow(fmt.Sprintf("User:u%d", i), OpWrite)}
	}
	for i := 0; i < 90; i++ {
		acls[pre(ResourceTopic, fmt.Sprintf("team%02d-", i))] = []Entry{allow(fmt.Sprintf("User:team%d", i), OpWrite)}
	}
	for i := 0; i < 10; i++ {
		acls[lit(ResourceGroup, fmt.Sprintf("g%d", i))] = []Entry{allow("User:*", OpRead)}
	}
	a := New(nil, Config{})
	a.snap.Store(snapOf(acls))
	p := principal.User("team42")
	if !a.Authorize(p, "127.0.0.1", OpWrite, ResourceTopic, "team42-orders") {
		b.Fatal("not authorized")
	}
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		if !a.Authorize(p, "127.0.0.1", OpWrite, ResourceTopic, "team42-orders") {
			b.Fatal("not authorized")
		}
	}
}
