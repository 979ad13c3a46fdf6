package broker

// ListGroups: v0-4
//
// Behaviour:
//   - Lists the groups this broker coordinates (clients ask every broker),
//     filtered by state (v4+, KIP-518).
//
// Version notes:
//   - v1: throttle. v3: flexible. v4: states filter and state in the answer.

import (
	"github.com/twmb/franz-go/pkg/kmsg"
)

func (b *Broker) handleListGroups(r *request) (kmsg.Response, error) {
	req := r.body.(*kmsg.ListGroupsRequest)
	resp := req.ResponseKind().(*kmsg.ListGroupsResponse)
	code, groups := b.groups.ListGroups(req.StatesFilter)
	resp.ErrorCode = code
	for _, g := range groups {
		rg := kmsg.NewListGroupsResponseGroup()
		rg.Group, rg.ProtocolType, rg.GroupState = g.Group, g.ProtocolType, g.State
		resp.Groups = append(resp.Groups, rg)
	}
	return resp, nil
}
