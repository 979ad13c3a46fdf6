package broker

// Heartbeat: v0-4
//
// Behaviour:
//   - Translated to broker/group's Heartbeat: keeps the member's session
//     alive; REBALANCE_IN_PROGRESS tells it to rejoin, UNKNOWN_MEMBER_ID and
//     ILLEGAL_GENERATION that it was removed or is behind.
//   - A heartbeat does not stand in for SyncGroup: a member removed for a
//     missing SyncGroup (KAFKA-12890) gets UNKNOWN_MEMBER_ID.
//   - Authorization: Read on the group, else GROUP_AUTHORIZATION_FAILED (Kafka
//     2.8).
//
// Version notes:
//   - v1: throttle. v3: group instance id. v4: flexible.

import (
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"

	"samsa/broker/acl"
	"samsa/broker/group"
)

func (b *Broker) handleHeartbeat(r *request) (kmsg.Response, error) {
	req := r.body.(*kmsg.HeartbeatRequest)
	resp := req.ResponseKind().(*kmsg.HeartbeatResponse)
	if !b.authorizedGroup(r, acl.OpRead, req.Group) {
		resp.ErrorCode = kerr.GroupAuthorizationFailed.Code
		return resp, nil
	}
	in := group.HeartbeatRequest{Group: req.Group, Generation: req.Generation, MemberID: req.MemberID}
	if req.InstanceID != nil {
		in.GroupInstanceID = *req.InstanceID
	}
	resp.ErrorCode = b.groups.Heartbeat(r.ctx, in)
	return resp, nil
}
