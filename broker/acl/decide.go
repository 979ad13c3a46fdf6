package acl

import (
	"strings"

	"samsa/broker/principal"
)

// wildcardPrincipal is "User:*" (AclEntry.WildcardPrincipal).
var wildcardPrincipal = principal.Principal{Type: principal.UserType, Name: Wildcard}

// matchEntry is AclAuthorizer.matchingAclExists for one entry: the
// permission is perm, the operation op or All, the principal p or User:*,
// the host host or "*".
func matchEntry(e *Entry, perm Permission, p principal.Principal, host string, op Operation) bool {
	return e.Permission == perm &&
		(e.Operation == op || e.Operation == OpAll) &&
		(e.Principal == p || e.Principal == wildcardPrincipal) &&
		(e.Host == host || e.Host == Wildcard)
}

func anyMatch(sets [][]Entry, perm Permission, p principal.Principal, host string, op Operation) bool {
	for _, s := range sets {
		for i := range s {
			if matchEntry(&s[i], perm, p, host, op) {
				return true
			}
		}
	}
	return false
}

// decide is Kafka 2.8's AclAuthorizer.authorizeAction after the super-user
// check. sets are the ACLs of every pattern that applies to the resource
// (literal "*", the literal name, every prefixed pattern the name starts
// with). The rules, in order:
//  1. no ACL at all → allowIfNone (allow.everyone.if.no.acl.found);
//  2. a matching Deny for op (or All) → deny: deny always wins;
//  3. a matching Allow for op or an operation implying it → allow
//     (Describe ⇐ Read/Write/Delete/Alter, DescribeConfigs ⇐ AlterConfigs);
//  4. otherwise deny.
//
// It is pure: the same inputs always give the same answer.
func decide(sets [][]Entry, p principal.Principal, host string, op Operation, allowIfNone bool) bool {
	empty := true
	for _, s := range sets {
		if len(s) > 0 {
			empty = false
			break
		}
	}
	if empty {
		return allowIfNone
	}
	if anyMatch(sets, Deny, p, host, op) {
		return false
	}
	if ops := impliedBy(op); ops != nil {
		for _, o := range ops {
			if anyMatch(sets, Allow, p, host, o) {
				return true
			}
		}
		return false
	}
	return anyMatch(sets, Allow, p, host, op)
}

// decideByType is Kafka 2.8's AclAuthorizer.authorizeByResourceType (KIP-679)
// after the super-user check: may p do op on at least one resource of the
// type? Allowed when some Allow (literal or prefixed) for op or All matches
// and is not cancelled by a Deny: a literal "*" Deny cancels everything, a
// literal Deny cancels the same literal name, a prefixed Deny cancels every
// allowed name or prefix that starts with it. Implied operations do not
// count here, as in Kafka. resources holds the type's patterns with their
// entries.
func decideByType(resources map[Resource][]Entry, t ResourceType, p principal.Principal, host string, op Operation, allowIfNone bool) bool {
	var denyLit, denyPre, allowLit, allowPre []string
	for r, entries := range resources {
		if r.Type != t {
			continue
		}
		for i := range entries {
			e := &entries[i]
			switch {
			case matchEntry(e, Deny, p, host, op) && r.Pattern == PatternLiteral:
				denyLit = append(denyLit, r.Name)
			case matchEntry(e, Deny, p, host, op) && r.Pattern == PatternPrefixed:
				denyPre = append(denyPre, r.Name)
			case matchEntry(e, Allow, p, host, op) && r.Pattern == PatternLiteral:
				allowLit = append(allowLit, r.Name)
			case matchEntry(e, Allow, p, host, op) && r.Pattern == PatternPrefixed:
				allowPre = append(allowPre, r.Name)
			}
		}
	}
	for _, n := range denyLit {
		if n == Wildcard {
			return false
		}
	}
	if allowIfNone {
		return true
	}
	dominated := func(name string) bool {
		for _, d := range denyPre {
			if strings.HasPrefix(name, d) {
				return true
			}
		}
		return false
	}
	for _, n := range allowPre {
		if !dominated(n) {
			return true
		}
	}
	for _, n := range allowLit {
		if n == Wildcard {
			return true
		}
		denied := false
		for _, d := range denyLit {
			denied = denied || d == n
		}
		if !denied && !dominated(n) {
			return true
		}
	}
	return false
}
