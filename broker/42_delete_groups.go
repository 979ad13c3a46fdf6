package broker

// DeleteGroups: v0-2
//
// Behaviour:
//   - Each group is deleted by broker/group (tombstones for its metadata
//     and offsets): GROUP_ID_NOT_FOUND for unknown groups, NON_EMPTY_GROUP
//     while it has members, NOT_COORDINATOR on the wrong broker.
//   - Authorization: Delete per group; refused groups answer
//     GROUP_AUTHORIZATION_FAILED and are not deleted, as Kafka 2.8.
//
// Version notes:
//   - v1: throttle semantics only. v2: flexible.

import (
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"

	"samsa/broker/acl"
)

func (b *Broker) handleDeleteGroups(r *request) (kmsg.Response, error) {
	req := r.body.(*kmsg.DeleteGroupsRequest)
	resp := req.ResponseKind().(*kmsg.DeleteGroupsResponse)
	ok := make([]bool, len(req.Groups))
	var allowed []string
	for i, id := range req.Groups {
		if ok[i] = b.authorizedGroup(r, acl.OpDelete, id); ok[i] {
			allowed = append(allowed, id)
		}
	}
	codes := b.groups.DeleteGroups(r.ctx, allowed)
	j := 0 // index into allowed and codes
	for i, id := range req.Groups {
		rg := kmsg.NewDeleteGroupsResponseGroup()
		rg.Group = id
		if !ok[i] {
			rg.ErrorCode = kerr.GroupAuthorizationFailed.Code
		} else {
			if j < len(codes) {
				rg.ErrorCode = codes[j]
			}
			j++
		}
		resp.Groups = append(resp.Groups, rg)
	}
	return resp, nil
}
