package broker

// DeleteGroups: v0-2
//
// Behaviour:
//   - Each group is deleted by broker/group (tombstones for its metadata
//     and offsets): GROUP_ID_NOT_FOUND for unknown groups, NON_EMPTY_GROUP
//     while it has members, NOT_COORDINATOR on the wrong broker.
//
// Version notes:
//   - v1: throttle semantics only. v2: flexible.

import (
	"github.com/twmb/franz-go/pkg/kmsg"
)

func (b *Broker) handleDeleteGroups(r *request) (kmsg.Response, error) {
	req := r.body.(*kmsg.DeleteGroupsRequest)
	resp := req.ResponseKind().(*kmsg.DeleteGroupsResponse)
	codes := b.groups.DeleteGroups(r.ctx, req.Groups)
	for i, id := range req.Groups {
		rg := kmsg.NewDeleteGroupsResponseGroup()
		rg.Group = id
		if i < len(codes) {
			rg.ErrorCode = codes[i]
		}
		resp.Groups = append(resp.Groups, rg)
	}
	return resp, nil
}
