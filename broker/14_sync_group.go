package broker

// SyncGroup: v0-5
//
// Behaviour:
//   - Translated to broker/group's SyncGroup: the leader's assignments are
//     stored (written to __consumer_offsets) and every member gets its own;
//     followers park until the leader's SyncGroup arrives.
//   - v5: a protocol type or name that does not match the group's answers
//     INCONSISTENT_GROUP_PROTOCOL.
//   - KAFKA-12890 (Kafka 2.8.1): a member that has not sent SyncGroup within
//     the rebalance timeout after the join completed is removed and the
//     group rebalances; its later SyncGroup gets UNKNOWN_MEMBER_ID. The
//     leader's SyncGroup counts like any other.
//   - Authorization: Read on the group, else GROUP_AUTHORIZATION_FAILED with
//     an empty assignment (Kafka 2.8).
//
// Version notes:
//   - v1: throttle. v3: group instance id. v4: flexible.
//   - v5: protocol type and name (KIP-559).

import (
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"

	"samsa/broker/acl"
	"samsa/broker/group"
)

func (b *Broker) handleSyncGroup(r *request) (kmsg.Response, error) {
	req := r.body.(*kmsg.SyncGroupRequest)
	resp := req.ResponseKind().(*kmsg.SyncGroupResponse)
	if !b.authorizedGroup(r, acl.OpRead, req.Group) {
		resp.ErrorCode, resp.MemberAssignment = kerr.GroupAuthorizationFailed.Code, []byte{}
		return resp, nil
	}
	in := group.SyncRequest{Group: req.Group, Generation: req.Generation, MemberID: req.MemberID,
		Assignments: make(map[string][]byte, len(req.GroupAssignment))}
	if req.InstanceID != nil {
		in.GroupInstanceID = *req.InstanceID
	}
	if req.ProtocolType != nil {
		in.ProtocolType = *req.ProtocolType
	}
	if req.Protocol != nil {
		in.Protocol = *req.Protocol
	}
	for _, a := range req.GroupAssignment {
		in.Assignments[a.MemberID] = a.MemberAssignment
	}
	unpark := r.park()
	out := b.groups.SyncGroup(r.ctx, in)
	unpark()
	resp.ErrorCode = out.ErrorCode
	resp.MemberAssignment = out.Assignment
	if resp.MemberAssignment == nil {
		resp.MemberAssignment = []byte{}
	}
	if out.ProtocolType != "" {
		resp.ProtocolType = kmsg.StringPtr(out.ProtocolType)
	}
	if out.Protocol != "" {
		resp.Protocol = kmsg.StringPtr(out.Protocol)
	}
	return resp, nil
}
