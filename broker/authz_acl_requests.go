package broker

// The steps the ACL APIs (29_describe_acls.go, 30_create_acls.go,
// 31_delete_acls.go) share, as Kafka 2.8's AclApis runs them for each: the
// refusal before anything is read, the pattern type of a v0 request, and
// for the two write APIs the split of a request's items into those the
// authorizer sees and those refused up front.

import (
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"

	"samsa/broker/acl"
)

// aclRefusal returns the answer an ACL API gives before reading its
// request, with refused false when it may go on: SECURITY_DISABLED without
// an authorizer (Kafka 2.8 without authorizer.class.name), else
// CLUSTER_AUTHORIZATION_FAILED without op on the cluster (Describe for
// DescribeAcls, Alter for CreateAcls and DeleteAcls).
func (b *Broker) aclRefusal(r *request, op acl.Operation) (code int16, msg string, refused bool) {
	if b.authz == nil {
		return kerr.SecurityDisabled.Code, noAuthorizer, true
	}
	if !b.authorizedCluster(r, op) {
		return kerr.ClusterAuthorizationFailed.Code, msgClusterAuthFailed, true
	}
	return 0, "", false
}

// aclPattern is the pattern type of a request item: v0 requests carry none
// (KIP-290 added it in v1) and mean literal.
func aclPattern(version int16, p kmsg.ACLResourcePatternType) acl.PatternType {
	if version == 0 {
		return acl.PatternLiteral
	}
	return acl.PatternType(p)
}

// scatterValid calls apply with the items whose err is nil, in request
// order, and returns apply's results at those items' positions; the
// positions of refused items keep R's zero value. apply must return one
// result per item it is given.
func scatterValid[T, R any](items []T, errs []error, apply func([]T) []R) []R {
	valid := make([]T, 0, len(items))
	at := make([]int, 0, len(items))
	for i, it := range items {
		if errs[i] == nil {
			valid = append(valid, it)
			at = append(at, i)
		}
	}
	out := make([]R, len(items))
	for j, res := range apply(valid) {
		out[at[j]] = res
	}
	return out
}
