package broker

// JoinGroup: v0-7
//
// Behaviour:
//   - Translated to broker/group's JoinGroup (Kafka's GroupCoordinator):
//     rebalances, the initial rebalance delay, session and rebalance
//     timeouts, static membership (KIP-345, v5+), MEMBER_ID_REQUIRED for
//     v4+ new members (KIP-394). The request parks on the connection until
//     the rebalance completes.
//   - Only the coordinator of the group answers (NOT_COORDINATOR,
//     COORDINATOR_LOAD_IN_PROGRESS elsewhere).
//   - Authorization: Read on the group, else GROUP_AUTHORIZATION_FAILED with
//     generation -1 and the request's member id (Kafka 2.8).
//
// Version notes:
//   - v1: rebalance timeout. v2: throttle. v4: MEMBER_ID_REQUIRED.
//   - v5: group instance id. v6: flexible. v7: protocol type in the answer.

import (
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"

	"samsa/broker/acl"
	"samsa/broker/group"
)

func (b *Broker) handleJoinGroup(r *request) (kmsg.Response, error) {
	req := r.body.(*kmsg.JoinGroupRequest)
	resp := req.ResponseKind().(*kmsg.JoinGroupResponse)
	if !b.authorizedGroup(r, acl.OpRead, req.Group) {
		// Kafka's JoinGroupResult(memberId, GROUP_AUTHORIZATION_FAILED).
		resp.ErrorCode, resp.Generation, resp.MemberID = kerr.GroupAuthorizationFailed.Code, -1, req.MemberID
		return resp, nil
	}
	in := group.JoinRequest{
		Group: req.Group, MemberID: req.MemberID, RequireKnownMember: req.Version >= 4,
		ClientID: r.hdr.ClientIDString(), ClientHost: r.clientHost,
		SessionTimeoutMs: req.SessionTimeoutMillis, RebalanceTimeoutMs: req.RebalanceTimeoutMillis,
		ProtocolType: req.ProtocolType,
	}
	if req.Version == 0 {
		in.RebalanceTimeoutMs = req.SessionTimeoutMillis
	}
	if req.InstanceID != nil {
		in.GroupInstanceID = *req.InstanceID
	}
	for _, p := range req.Protocols {
		in.Protocols = append(in.Protocols, group.Protocol{Name: p.Name, Metadata: p.Metadata})
	}
	unpark := r.park()
	out := b.groups.JoinGroup(r.ctx, in)
	unpark()
	resp.ErrorCode, resp.Generation, resp.LeaderID, resp.MemberID = out.ErrorCode, out.Generation, out.LeaderID, out.MemberID
	if out.ProtocolType != "" {
		resp.ProtocolType = kmsg.StringPtr(out.ProtocolType)
	}
	if req.Version >= 7 {
		resp.Protocol = kmsg.StringPtr(out.Protocol)
		if out.ErrorCode != 0 && out.Protocol == "" {
			resp.Protocol = nil
		}
	} else {
		resp.Protocol = kmsg.StringPtr(out.Protocol)
	}
	for _, m := range out.Members {
		rm := kmsg.NewJoinGroupResponseMember()
		rm.MemberID, rm.ProtocolMetadata = m.MemberID, m.Metadata
		if m.GroupInstanceID != "" {
			rm.InstanceID = kmsg.StringPtr(m.GroupInstanceID)
		}
		resp.Members = append(resp.Members, rm)
	}
	return resp, nil
}
