package broker

// CreateAcls: v0-2
//
// Behaviour:
//   - No authorizer: every creation answers SECURITY_DISABLED, as Kafka 2.8
//     without authorizer.class.name (see 29_describe_acls.go).
//   - With the AclAuthorizer: Alter on the cluster, else every creation
//     CLUSTER_AUTHORIZATION_FAILED. Bindings Kafka refuses answer
//     INVALID_REQUEST with its message (a Cluster resource not named
//     kafka-cluster, an empty name, ANY/MATCH/UNKNOWN codes, a principal
//     without "Type:"); the others are written to ZooKeeper under
//     /kafka-acl or /kafka-acl-extended/prefixed with a conditional write
//     per resource, then announced by a change notification that every
//     broker applies within a second. Adding an existing ACL succeeds and
//     changes nothing.
//
// Version notes:
//   - v0: literal patterns only. v1: pattern types (KIP-290). v2: flexible.

import (
	"errors"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"

	"samsa/broker/acl"
)

func (b *Broker) handleCreateAcls(r *request) (kmsg.Response, error) {
	req := r.body.(*kmsg.CreateACLsRequest)
	resp := req.ResponseKind().(*kmsg.CreateACLsResponse)
	if code, msg, refused := b.aclRefusal(r, acl.OpAlter); refused {
		for range req.Creations {
			res := kmsg.NewCreateACLsResponseResult()
			res.ErrorCode, res.ErrorMessage = code, kmsg.StringPtr(msg)
			resp.Results = append(resp.Results, res)
		}
		return resp, nil
	}
	bindings := make([]acl.Binding, len(req.Creations))
	errs := make([]error, len(req.Creations))
	for i, c := range req.Creations {
		p, err := acl.ParsePrincipal(c.Principal)
		errs[i] = err
		bindings[i] = acl.Binding{
			Resource: acl.Resource{Type: acl.ResourceType(c.ResourceType), Name: c.ResourceName, Pattern: aclPattern(req.Version, c.ResourcePatternType)},
			Entry:    acl.Entry{Principal: p, Host: c.Host, Operation: acl.Operation(c.Operation), Permission: acl.Permission(c.PermissionType)},
		}
	}
	written := scatterValid(bindings, errs, b.authz.CreateACLs)
	for i, err := range errs {
		if err == nil {
			err = written[i]
		}
		res := kmsg.NewCreateACLsResponseResult()
		if err != nil {
			res.ErrorCode = kerr.UnknownServerError.Code
			if errors.Is(err, acl.ErrInvalidBinding) {
				res.ErrorCode = kerr.InvalidRequest.Code
			}
			res.ErrorMessage = kmsg.StringPtr(err.Error())
			b.log.WithError(err).Debug("CreateAcls refused a binding")
		}
		resp.Results = append(resp.Results, res)
	}
	return resp, nil
}
