package broker

// DescribeAcls: v0-2
//
// Behaviour:
//   - Samsa has no authorizer, so it answers SECURITY_DISABLED ("No
//     Authorizer is configured on the broker"), exactly as a Kafka 2.8
//     broker without authorizer.class.name does; admin clients then report
//     that security is disabled instead of a broken connection.
//
// Version notes:
//   - v1: pattern types (KIP-290). v2: flexible.

import (
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"
)

// noAuthorizer is Kafka's message for SECURITY_DISABLED.
const noAuthorizer = "No Authorizer is configured on the broker"

func (b *Broker) handleDescribeAcls(r *request) (kmsg.Response, error) {
	req := r.body.(*kmsg.DescribeACLsRequest)
	resp := req.ResponseKind().(*kmsg.DescribeACLsResponse)
	resp.ErrorCode = kerr.SecurityDisabled.Code
	resp.ErrorMessage = kmsg.StringPtr(noAuthorizer)
	return resp, nil
}
