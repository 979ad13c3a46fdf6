package broker

// ListGroups: v0-4
//
// Behaviour:
//   - Lists the groups this broker coordinates (clients ask every broker),
//     filtered by state (v4+, KIP-518).
//   - Authorization: Describe on the cluster lists every group; without it
//     only the groups the principal may Describe are listed, with no error
//     (Kafka 2.8).
//
// Version notes:
//   - v1: throttle. v3: flexible. v4: states filter and state in the answer.

import (
	"github.com/twmb/franz-go/pkg/kmsg"

	"samsa/broker/acl"
)

func (b *Broker) handleListGroups(r *request) (kmsg.Response, error) {
	req := r.body.(*kmsg.ListGroupsRequest)
	resp := req.ResponseKind().(*kmsg.ListGroupsResponse)
	code, groups := b.groups.ListGroups(req.StatesFilter)
	resp.ErrorCode = code
	// Kafka 2.8: Describe on the cluster lists every group, otherwise only
	// the groups the principal may Describe (no error either way).
	all := b.authorizedCluster(r, acl.OpDescribe)
	for _, g := range groups {
		if !all && !b.authorizedGroup(r, acl.OpDescribe, g.Group) {
			continue
		}
		rg := kmsg.NewListGroupsResponseGroup()
		rg.Group, rg.ProtocolType, rg.GroupState = g.Group, g.ProtocolType, g.State
		resp.Groups = append(resp.Groups, rg)
	}
	return resp, nil
}
