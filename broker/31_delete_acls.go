package broker

// DeleteAcls: v0-2
//
// Behaviour:
//   - No authorizer: every filter answers SECURITY_DISABLED, as Kafka 2.8
//     without authorizer.class.name (see 29_describe_acls.go).
//   - With the AclAuthorizer: Alter on the cluster, else every filter
//     CLUSTER_AUTHORIZATION_FAILED. Each filter (Kafka's AclBindingFilter)
//     removes the matching bindings of the cached resources, and of the one
//     resource a precise filter names even if this broker has not cached it
//     yet; each resource znode is rewritten conditionally (deleted when its
//     last ACL goes) and a change notification follows. The answer lists,
//     per filter, the bindings it removed, each with the error of its
//     write. A filter with UNKNOWN elements answers INVALID_REQUEST.
//
// Version notes:
//   - v0: literal patterns only. v1: pattern types (KIP-290). v2: flexible.

import (
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"

	"samsa/broker/acl"
)

func (b *Broker) handleDeleteAcls(r *request) (kmsg.Response, error) {
	req := r.body.(*kmsg.DeleteACLsRequest)
	resp := req.ResponseKind().(*kmsg.DeleteACLsResponse)
	if code, msg, refused := b.aclRefusal(r, acl.OpAlter); refused {
		for range req.Filters {
			res := kmsg.NewDeleteACLsResponseResult()
			res.ErrorCode, res.ErrorMessage = code, kmsg.StringPtr(msg)
			resp.Results = append(resp.Results, res)
		}
		return resp, nil
	}
	filters := make([]acl.Filter, len(req.Filters))
	invalid := make([]error, len(req.Filters))
	for i, f := range req.Filters {
		filters[i] = acl.Filter{Type: acl.ResourceType(f.ResourceType), Name: f.ResourceName, Pattern: aclPattern(req.Version, f.ResourcePatternType),
			Principal: f.Principal, Host: f.Host, Operation: acl.Operation(f.Operation), Permission: acl.Permission(f.PermissionType)}
		invalid[i] = filters[i].Validate()
	}
	deleted := scatterValid(filters, invalid, b.authz.DeleteACLs)
	for i := range req.Filters {
		res := kmsg.NewDeleteACLsResponseResult()
		if invalid[i] != nil {
			res.ErrorCode, res.ErrorMessage = kerr.InvalidRequest.Code, kmsg.StringPtr(invalid[i].Error())
			resp.Results = append(resp.Results, res)
			continue
		}
		for _, d := range deleted[i] {
			m := kmsg.NewDeleteACLsResponseResultMatchingACL()
			if d.Err != nil {
				m.ErrorCode, m.ErrorMessage = kerr.UnknownServerError.Code, kmsg.StringPtr(d.Err.Error())
			}
			m.ResourceType = kmsg.ACLResourceType(d.Binding.Resource.Type)
			m.ResourceName = d.Binding.Resource.Name
			m.ResourcePatternType = kmsg.ACLResourcePatternType(d.Binding.Resource.Pattern)
			m.Principal, m.Host = d.Binding.Entry.Principal.String(), d.Binding.Entry.Host
			m.Operation, m.PermissionType = kmsg.ACLOperation(d.Binding.Entry.Operation), kmsg.ACLPermissionType(d.Binding.Entry.Permission)
			res.MatchingACLs = append(res.MatchingACLs, m)
		}
		resp.Results = append(resp.Results, res)
	}
	return resp, nil
}
