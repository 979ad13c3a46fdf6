package acl

import "testing"

// FuzzACLParse feeds CreateAcls-style input (principal, host, names, codes
// from the wire) through parsing, validation and a decision: nothing
// panics, a binding that validates round-trips through the ZooKeeper entry
// form, and deny always beats allow for the same entry.
func FuzzACLParse(f *testing.F) {
	f.Add("User:alice", "*", "orders", int8(2), int8(3), int8(3), int8(3))
	f.Add("User:*", "10.0.0.1", "app-", int8(2), int8(4), int8(4), int8(2))
	f.Add(":", "", "", int8(-1), int8(0), int8(99), int8(1))
	f.Fuzz(func(t *testing.T, p, host, name string, rt, pt, op, perm int8) {
		pr, err := ParsePrincipal(p)
		if err != nil {
			return
		}
		b := Binding{Resource: Resource{Type: ResourceType(rt), Name: name, Pattern: PatternType(pt)},
			Entry: Entry{Principal: pr, Host: host, Operation: Operation(op), Permission: Permission(perm)}}
		_ = b.Resource.String() + b.Entry.String()
		if b.Validate() != nil {
			return
		}
		back := entriesFromZK(entriesToZK([]Entry{b.Entry}))
		if len(back) != 1 || back[0] != b.Entry {
			t.Fatalf("entry round trip: %+v -> %+v", b.Entry, back)
		}
		if r, ok := fromZK(toZK(b.Resource)); !ok || r != b.Resource {
			t.Fatalf("resource round trip: %+v -> %+v", b.Resource, r)
		}
		allow, deny := b.Entry, b.Entry
		allow.Permission, deny.Permission = Allow, Deny
		s := snapOf(map[Resource][]Entry{{Type: b.Resource.Type, Name: name, Pattern: PatternLiteral}: {allow, deny}})
		if decide(s.matching(nil, b.Resource.Type, name), pr, host, b.Entry.Operation, true) {
			t.Fatal("allow beat deny")
		}
	})
}
