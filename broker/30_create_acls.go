package broker

// CreateAcls: v0-2
//
// Behaviour:
//   - No authorizer: every creation answers SECURITY_DISABLED, as Kafka 2.8
//     without authorizer.class.name (see 29_describe_acls.go).
//
// Version notes:
//   - v1: pattern types (KIP-290). v2: flexible.

import (
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"
)

func (b *Broker) handleCreateAcls(r *request) (kmsg.Response, error) {
	req := r.body.(*kmsg.CreateACLsRequest)
	resp := req.ResponseKind().(*kmsg.CreateACLsResponse)
	for range req.Creations {
		res := kmsg.NewCreateACLsResponseResult()
		res.ErrorCode = kerr.SecurityDisabled.Code
		res.ErrorMessage = kmsg.StringPtr(noAuthorizer)
		resp.Results = append(resp.Results, res)
	}
	return resp, nil
}
