package broker

// LeaveGroup: v0-4
//
// Behaviour:
//   - Translated to broker/group's LeaveGroup: the members leave and the
//     group rebalances. v3+ batch several members (KIP-345); each gets its
//     own error, UNKNOWN_MEMBER_ID for a non-member.
//   - Authorization: Read on the group, else GROUP_AUTHORIZATION_FAILED with
//     no member answers (Kafka 2.8).
//
// Version notes:
//   - v1: throttle. v3: batched members with instance ids. v4: flexible.

import (
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"

	"samsa/broker/acl"
	"samsa/broker/group"
)

func (b *Broker) handleLeaveGroup(r *request) (kmsg.Response, error) {
	req := r.body.(*kmsg.LeaveGroupRequest)
	resp := req.ResponseKind().(*kmsg.LeaveGroupResponse)
	if !b.authorizedGroup(r, acl.OpRead, req.Group) {
		resp.ErrorCode = kerr.GroupAuthorizationFailed.Code // no member answers, as Kafka's getErrorResponse
		return resp, nil
	}
	var members []group.LeaveMember
	if req.Version < 3 {
		members = []group.LeaveMember{{MemberID: req.MemberID}}
	}
	for _, m := range req.Members {
		lm := group.LeaveMember{MemberID: m.MemberID}
		if m.InstanceID != nil {
			lm.GroupInstanceID = *m.InstanceID
		}
		members = append(members, lm)
	}
	code, codes := b.groups.LeaveGroup(r.ctx, req.Group, members)
	resp.ErrorCode = code
	if req.Version < 3 {
		if code == 0 && len(codes) == 1 {
			resp.ErrorCode = codes[0]
		}
		return resp, nil
	}
	for i, m := range req.Members {
		rm := kmsg.NewLeaveGroupResponseMember()
		rm.MemberID, rm.InstanceID = m.MemberID, m.InstanceID
		if i < len(codes) {
			rm.ErrorCode = codes[i]
		}
		resp.Members = append(resp.Members, rm)
	}
	return resp, nil
}
