package broker

import (
	"fmt"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"

	"samsa/broker/acl"
)

// Every request the API table marks interBroker (LeaderAndIsr, StopReplica,
// UpdateMetadata, ControlledShutdown, and WriteTxnMarkers / AlterIsr when
// they are listed) needs ClusterAction on the cluster, checked once in
// handler.Serve before the handler runs, as each Kafka 2.8 handler's first
// line does (authHelper.authorizeClusterOperation(request, CLUSTER_ACTION)).
// A refusal answers CLUSTER_AUTHORIZATION_FAILED and changes nothing.

// interBrokerDenied returns the refusal of an inter-broker request whose
// principal lacks ClusterAction, or nil when it may proceed.
func (b *Broker) interBrokerDenied(r *request) (kmsg.Response, error) {
	if b.authz == nil || b.authorizedCluster(r, acl.OpClusterAction) {
		return nil, nil
	}
	code := kerr.ClusterAuthorizationFailed.Code
	switch req := r.body.(type) {
	case *kmsg.LeaderAndISRRequest:
		resp := req.ResponseKind().(*kmsg.LeaderAndISRResponse)
		resp.ErrorCode = code
		return resp, nil
	case *kmsg.StopReplicaRequest:
		resp := req.ResponseKind().(*kmsg.StopReplicaResponse)
		resp.ErrorCode = code
		return resp, nil
	case *kmsg.UpdateMetadataRequest:
		resp := req.ResponseKind().(*kmsg.UpdateMetadataResponse)
		resp.ErrorCode = code
		return resp, nil
	case *kmsg.ControlledShutdownRequest:
		resp := req.ResponseKind().(*kmsg.ControlledShutdownResponse)
		resp.ErrorCode = code
		return resp, nil
	case *kmsg.AlterPartitionRequest:
		resp := req.ResponseKind().(*kmsg.AlterPartitionResponse)
		resp.ErrorCode = code
		return resp, nil
	case *kmsg.WriteTxnMarkersRequest:
		resp := req.ResponseKind().(*kmsg.WriteTxnMarkersResponse)
		for _, m := range req.Markers {
			rm := kmsg.NewWriteTxnMarkersResponseMarker()
			rm.ProducerID = m.ProducerID
			for _, t := range m.Topics {
				rt := kmsg.NewWriteTxnMarkersResponseMarkerTopic()
				rt.Topic = t.Topic
				for _, p := range t.Partitions {
					rp := kmsg.NewWriteTxnMarkersResponseMarkerTopicPartition()
					rp.Partition, rp.ErrorCode = p, code
					rt.Partitions = append(rt.Partitions, rp)
				}
				rm.Topics = append(rm.Topics, rt)
			}
			resp.Markers = append(resp.Markers, rm)
		}
		return resp, nil
	}
	// An inter-broker API without a refusal shape here: closing is safer
	// than serving it unauthorised.
	return nil, fmt.Errorf("broker: %s from %s lacks ClusterAction", r.hdr.APIName(), r.principal)
}
