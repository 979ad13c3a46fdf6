package zkutil_test

import (
	"errors"
	"reflect"
	"testing"

	"samsa/zkutil"
	"samsa/zkutil/zktest"
)

func TestZKACLStoreLayout(t *testing.T) {
	srv := zktest.Start(t)
	c := connect(t, srv.Chroot(t))
	lit := zkutil.ACLResource{Type: "Topic", Name: "orders", PatternType: zkutil.ACLPatternLiteral}
	pre := zkutil.ACLResource{Type: "TransactionalId", Name: "app-", PatternType: zkutil.ACLPatternPrefixed}
	if zkutil.ACLResourcePath(lit) != "/kafka-acl/Topic/orders" || zkutil.ACLResourcePath(pre) != "/kafka-acl-extended/prefixed/TransactionalId/app-" {
		t.Fatalf("paths %s %s", zkutil.ACLResourcePath(lit), zkutil.ACLResourcePath(pre))
	}
	alice := []zkutil.ACLEntry{{Principal: "User:alice", PermissionType: "Allow", Operation: "Read", Host: "*"}}
	zkv, err := c.SetACLs(lit, alice, zkutil.ACLNoZkVersion)
	mustf(t, err, "create acls")
	// A second creator loses: the conditional create is how concurrent
	// writers notice each other.
	if _, err := c.SetACLs(lit, alice, zkutil.ACLNoZkVersion); !errors.Is(err, zkutil.ErrNodeExists) {
		t.Fatalf("second create: %v", err)
	}
	data, _, err := c.Get("/kafka-acl/Topic/orders")
	mustf(t, err, "get")
	if string(data) != `{"version":1,"acls":[{"principal":"User:alice","permissionType":"Allow","operation":"Read","host":"*"}]}` {
		t.Fatalf("znode data %s", data)
	}
	two := append(alice, zkutil.ACLEntry{Principal: "User:bob", PermissionType: "Deny", Operation: "Write", Host: "10.0.0.1"})
	if _, err := c.SetACLs(lit, two, zkv+1); !errors.Is(err, zkutil.ErrBadVersion) {
		t.Fatalf("stale set: %v", err)
	}
	_, err = c.SetACLs(lit, two, zkv)
	mustf(t, err, "set")
	got, zkv2, err := c.GetACLs(lit)
	mustf(t, err, "get acls")
	if !reflect.DeepEqual(got, two) || zkv2 != zkv+1 {
		t.Fatalf("got %+v at %d", got, zkv2)
	}
	_, err = c.SetACLs(pre, alice, zkutil.ACLNoZkVersion)
	mustf(t, err, "create prefixed")
	rs, err := c.ListACLResources()
	mustf(t, err, "list")
	if !reflect.DeepEqual(rs, []zkutil.ACLResource{lit, pre}) {
		t.Fatalf("resources %+v", rs)
	}
	mustf(t, c.WriteACLChange(lit), "literal change")
	mustf(t, c.WriteACLChange(pre), "extended change")
	nodes, err := c.GetACLChanges(zkutil.ACLPatternLiteral)
	mustf(t, err, "changes")
	if len(nodes) != 1 {
		t.Fatalf("literal changes %v", nodes)
	}
	raw, _, err := c.Get("/kafka-acl-changes/" + nodes[0])
	mustf(t, err, "raw change")
	if string(raw) != "TOPIC:orders" {
		t.Fatalf("literal change payload %q (Kafka 2.5+ writes the Java enum name)", raw)
	}
	r, _, err := c.ReadACLChange(zkutil.ACLPatternLiteral, nodes[0])
	if err != nil || r != lit {
		t.Fatalf("read change %+v %v", r, err)
	}
	enodes, _ := c.GetACLChanges(zkutil.ACLPatternPrefixed)
	raw, _, err = c.Get("/kafka-acl-extended-changes/" + enodes[0])
	mustf(t, err, "raw extended change")
	if string(raw) != `{"version":1,"resourceType":"TRANSACTIONAL_ID","name":"app-","patternType":"PREFIXED"}` {
		t.Fatalf("extended change payload %s", raw)
	}
	r, _, err = c.ReadACLChange(zkutil.ACLPatternPrefixed, enodes[0])
	if err != nil || r != pre {
		t.Fatalf("read extended change %+v %v", r, err)
	}
	// An empty set deletes the znode, at its version.
	_, err = c.SetACLs(lit, nil, zkv2)
	mustf(t, err, "delete")
	if ok, _, _ := c.Exists("/kafka-acl/Topic/orders"); ok {
		t.Fatal("resource znode left after its last ACL went")
	}
}

func TestZKACLCodecs(t *testing.T) {
	// Kafka 2.0-2.4 wrote "Topic:foo"; names may contain colons.
	typ, name, err := zkutil.DecodeLiteralACLChange([]byte("Topic:a:b"))
	if err != nil || zkutil.PascalResourceType(typ) != "Topic" || name != "a:b" {
		t.Fatalf("%q %q %v", typ, name, err)
	}
	for _, bad := range []string{"", "nocolon", ":x"} {
		if _, _, err := zkutil.DecodeLiteralACLChange([]byte(bad)); !errors.Is(err, zkutil.ErrMalformed) {
			t.Errorf("%q: %v", bad, err)
		}
	}
	if _, err := zkutil.DecodeACLs([]byte(`{"version":2,"acls":[]}`)); !errors.Is(err, zkutil.ErrMalformed) {
		t.Fatalf("version 2 accepted: %v", err)
	}
	if acls, err := zkutil.DecodeACLs(nil); err != nil || acls != nil {
		t.Fatalf("empty data: %v %v", acls, err)
	}
	if zkutil.JavaResourceType("TransactionalId") != "TRANSACTIONAL_ID" || zkutil.PascalResourceType("DELEGATION_TOKEN") != "DelegationToken" {
		t.Fatal("type spelling")
	}
}
