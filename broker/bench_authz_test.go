package broker_test

import (
	"fmt"
	"testing"

	"samsa/broker/acl"
)

// BenchmarkAPIProduceAcks1Authorized is BenchmarkAPIProduceAcks1 with the
// AclAuthorizer holding 1,000 ACLs (900 literal topic resources, 90
// prefixed ones, 10 groups); the producer's Write comes from a prefixed
// ACL, the slowest lookup. Compare with BenchmarkAPIProduceAcks1 for the
// authorizer's share of a produce request (issue 16: at most 5 % on p99;
// both report p50-µs and p99-µs, and bin/samsa-benchmark.sh runs them side
// by side).
func BenchmarkAPIProduceAcks1Authorized(b *testing.B) {
	benchProduceOn(b, authzCluster(b, 1, thousandACLs(b)), 1)
}

// thousandACLs are the 1,000 ACLs of the authorizer benchmarks (900
// literal topic resources, 90 prefixed ones, 10 groups), with Write on
// "bench" from a prefixed ACL, plus the cluster grant that lets the broker
// talk to itself.
func thousandACLs(b *testing.B) []acl.Binding {
	var bindings []acl.Binding
	for i := 0; i < 900; i++ {
		bindings = append(bindings, acl.Binding{Resource: litRes(acl.ResourceTopic, fmt.Sprintf("topic-%04d", i)),
			Entry: anonEntry("10.0.0.1", acl.OpWrite, acl.Allow)})
	}
	for i := 0; i < 89; i++ {
		bindings = append(bindings, acl.Binding{Resource: acl.Resource{Type: acl.ResourceTopic, Name: fmt.Sprintf("team%02d-", i), Pattern: acl.PatternPrefixed},
			Entry: anonEntry("10.0.0.1", acl.OpWrite, acl.Allow)})
	}
	for i := 0; i < 10; i++ {
		bindings = append(bindings, acl.Binding{Resource: litRes(acl.ResourceGroup, fmt.Sprintf("g%d", i)), Entry: anonEntry("*", acl.OpRead, acl.Allow)})
	}
	bindings = append(bindings, acl.Binding{Resource: acl.Resource{Type: acl.ResourceTopic, Name: "ben", Pattern: acl.PatternPrefixed},
		Entry: anonEntry(authzTrustedIP, acl.OpAll, acl.Allow)})
	bindings = append(bindings, trustedHostACLs(false)...)
	if len(bindings) != 1001 { // 1,000 plus the cluster grant that lets the broker talk to itself
		b.Fatalf("%d bindings", len(bindings))
	}
	return bindings
}
