package broker

// DescribeGroups: v0-5
//
// Behaviour:
//   - Each group is described by broker/group: state, protocol type and
//     name, members with client id and host; member metadata and
//     assignments only while the group is Stable. An unknown group is
//     "Dead" with no error, as Kafka.
//   - Authorized operations (v3+) are reported as "not requested".
//   - Authorization: Describe per group, else that group answers
//     GROUP_AUTHORIZATION_FAILED with empty fields; v3+ authorized operations
//     are reported when asked (every supported one without an authorizer,
//     as Kafka 2.8).
//
// Version notes:
//   - v1: throttle. v3: authorized operations. v4: group instance ids.
//   - v5: flexible.

import (
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"

	"samsa/broker/acl"
)

func (b *Broker) handleDescribeGroups(r *request) (kmsg.Response, error) {
	req := r.body.(*kmsg.DescribeGroupsRequest)
	resp := req.ResponseKind().(*kmsg.DescribeGroupsResponse)
	for _, id := range req.Groups {
		rg := kmsg.NewDescribeGroupsResponseGroup()
		rg.Group, rg.AuthorizedOperations = id, authorizedOperationsOmitted
		if !b.authorizedGroup(r, acl.OpDescribe, id) {
			rg.ErrorCode = kerr.GroupAuthorizationFailed.Code // DescribeGroupsResponse.groupError
			resp.Groups = append(resp.Groups, rg)
			continue
		}
		d := b.groups.DescribeGroup(r.ctx, id)
		rg.ErrorCode, rg.State, rg.ProtocolType, rg.Protocol = d.ErrorCode, d.State, d.ProtocolType, d.Protocol
		if req.Version >= 3 && req.IncludeAuthorizedOperations {
			rg.AuthorizedOperations = b.authorizedOperations(r, acl.ResourceGroup, id)
		}
		for _, m := range d.Members {
			rm := kmsg.NewDescribeGroupsResponseGroupMember()
			rm.MemberID, rm.ClientID, rm.ClientHost = m.MemberID, m.ClientID, m.ClientHost
			rm.ProtocolMetadata, rm.MemberAssignment = m.Metadata, m.Assignment
			if rm.ProtocolMetadata == nil {
				rm.ProtocolMetadata = []byte{}
			}
			if rm.MemberAssignment == nil {
				rm.MemberAssignment = []byte{}
			}
			if m.GroupInstanceID != "" {
				rm.InstanceID = kmsg.StringPtr(m.GroupInstanceID)
			}
			rg.Members = append(rg.Members, rm)
		}
		resp.Groups = append(resp.Groups, rg)
	}
	return resp, nil
}
