package brokertest

import (
	"testing"

	"samsa/broker/acl"
	"samsa/zkutil"
)

// WriteACLs stores bindings in ZooKeeper as kafka-acls.sh
// --authorizer-properties does.
func WriteACLs(t testing.TB, zk *zkutil.Client, bindings ...acl.Binding) {
	t.Helper()
	errs, _ := acl.NewStore(zk).Create(bindings)
	for i, err := range errs {
		if err != nil {
			t.Fatalf("writing ACL %v: %v", bindings[i], err)
		}
	}
}
