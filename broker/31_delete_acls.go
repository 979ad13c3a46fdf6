package broker

// DeleteAcls: v0-2
//
// Behaviour:
//   - No authorizer: every filter answers SECURITY_DISABLED, as Kafka 2.8
//     without authorizer.class.name (see 29_describe_acls.go).
//
// Version notes:
//   - v1: pattern types (KIP-290). v2: flexible.

import (
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"
)

func (b *Broker) handleDeleteAcls(r *request) (kmsg.Response, error) {
	req := r.body.(*kmsg.DeleteACLsRequest)
	resp := req.ResponseKind().(*kmsg.DeleteACLsResponse)
	for range req.Filters {
		res := kmsg.NewDeleteACLsResponseResult()
		res.ErrorCode = kerr.SecurityDisabled.Code
		res.ErrorMessage = kmsg.StringPtr(noAuthorizer)
		resp.Results = append(resp.Results, res)
	}
	return resp, nil
}
