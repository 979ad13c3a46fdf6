package broker

// DescribeAcls: v0-2
//
// Behaviour:
//   - No authorizer (authorizer.class.name empty): SECURITY_DISABLED ("No
//     Authorizer is configured on the broker"), exactly as Kafka 2.8.
//   - With the AclAuthorizer: Describe on the cluster, else
//     CLUSTER_AUTHORIZATION_FAILED; then every cached binding matching the
//     filter (Kafka's AclBindingFilter, including MATCH and ANY pattern
//     types), grouped by resource pattern. A filter with UNKNOWN elements
//     answers INVALID_REQUEST. The cache is this broker's, kept current by
//     the ZooKeeper change notifications (broker/acl).
//
// Version notes:
//   - v0: literal patterns only (the filter's pattern type is LITERAL).
//   - v1: pattern types (KIP-290). v2: flexible.

import (
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"

	"samsa/broker/acl"
)

// noAuthorizer is Kafka's message for SECURITY_DISABLED.
const noAuthorizer = "No Authorizer is configured on the broker"

func (b *Broker) handleDescribeAcls(r *request) (kmsg.Response, error) {
	req := r.body.(*kmsg.DescribeACLsRequest)
	resp := req.ResponseKind().(*kmsg.DescribeACLsResponse)
	if code, msg, refused := b.aclRefusal(r, acl.OpDescribe); refused {
		resp.ErrorCode, resp.ErrorMessage = code, kmsg.StringPtr(msg)
		return resp, nil
	}
	f := acl.Filter{Type: acl.ResourceType(req.ResourceType), Name: req.ResourceName, Pattern: aclPattern(req.Version, req.ResourcePatternType),
		Principal: req.Principal, Host: req.Host, Operation: acl.Operation(req.Operation), Permission: acl.Permission(req.PermissionType)}
	if err := f.Validate(); err != nil {
		resp.ErrorCode, resp.ErrorMessage = kerr.InvalidRequest.Code, kmsg.StringPtr(err.Error())
		return resp, nil
	}
	for _, bd := range b.authz.ACLs(f) {
		n := len(resp.Resources)
		if n == 0 || !sameACLResource(resp.Resources[n-1], bd.Resource) {
			rr := kmsg.NewDescribeACLsResponseResource()
			rr.ResourceType = kmsg.ACLResourceType(bd.Resource.Type)
			rr.ResourceName = bd.Resource.Name
			rr.ResourcePatternType = kmsg.ACLResourcePatternType(bd.Resource.Pattern)
			resp.Resources = append(resp.Resources, rr)
			n++
		}
		ra := kmsg.NewDescribeACLsResponseResourceACL()
		ra.Principal, ra.Host = bd.Entry.Principal.String(), bd.Entry.Host
		ra.Operation, ra.PermissionType = kmsg.ACLOperation(bd.Entry.Operation), kmsg.ACLPermissionType(bd.Entry.Permission)
		resp.Resources[n-1].ACLs = append(resp.Resources[n-1].ACLs, ra)
	}
	return resp, nil
}

func sameACLResource(rr kmsg.DescribeACLsResponseResource, r acl.Resource) bool {
	return acl.ResourceType(rr.ResourceType) == r.Type && rr.ResourceName == r.Name && acl.PatternType(rr.ResourcePatternType) == r.Pattern
}
