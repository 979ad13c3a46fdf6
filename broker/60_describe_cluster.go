package broker

// DescribeCluster: v0-0
//
// Behaviour:
//   - Answers from the metadata cache like Metadata: live brokers with an
//     endpoint on the request's listener, their racks, the controller id and
//     the cluster id (KIP-700).
//   - Authorized operations are reported as "not requested": there is no
//     authorizer.
//   - Authorization: none, as Kafka 2.8; the authorized operations, when asked,
//     need Describe on the cluster (0 otherwise; every supported operation
//     without an authorizer).
//
// Version notes:
//   - v0: flexible from the start (Kafka 2.8).

import (
	"github.com/twmb/franz-go/pkg/kmsg"

	"samsa/broker/acl"
)

func (b *Broker) handleDescribeCluster(r *request) (kmsg.Response, error) {
	req := r.body.(*kmsg.DescribeClusterRequest)
	resp := req.ResponseKind().(*kmsg.DescribeClusterResponse)
	snap := b.meta.Snapshot()
	resp.ClusterID = b.ClusterID()
	resp.ControllerID = snap.ControllerID
	if !snap.Alive(snap.ControllerID) {
		resp.ControllerID = -1
	}
	resp.ClusterAuthorizedOperations = authorizedOperationsOmitted
	if req.IncludeClusterAuthorizedOperations {
		resp.ClusterAuthorizedOperations = 0
		if b.authorizedCluster(r, acl.OpDescribe) {
			resp.ClusterAuthorizedOperations = b.authorizedOperations(r, acl.ResourceCluster, acl.ClusterName)
		}
	}
	for _, id := range snap.BrokerIDs {
		br := snap.Brokers[id]
		ep, ok := br.Endpoint(r.listener)
		if !ok {
			continue
		}
		rb := kmsg.NewDescribeClusterResponseBroker()
		rb.NodeID, rb.Host, rb.Port, rb.Rack = id, ep.Host, ep.Port, br.Rack
		resp.Brokers = append(resp.Brokers, rb)
	}
	return resp, nil
}
