package broker

// UpdateMetadata: v0-7
//
// Behaviour:
//   - Inter-broker: the controller sends it to every live broker; it is the
//     only source of the metadata cache (broker/metadata).
//   - A request whose controller epoch is older than the highest this broker
//     has seen answers STALE_CONTROLLER_EPOCH and changes nothing; one whose
//     broker epoch is older than this broker's registration answers
//     STALE_BROKER_EPOCH (KIP-380), as Kafka 2.8.
//   - Partitions with leader -2 (topic being deleted) leave the cache, and
//     the group coordinator drops their committed offsets (Kafka's
//     handleDeletedPartitions).
//   - Endpoints without a listener name (v1-2) take the security protocol's
//     name, as Kafka does.
//
// Version notes:
//   - v0: one host/port per broker. v1: endpoints. v2: rack.
//   - v3: listener names. v4: offline replicas (KIP-112).
//   - v5: broker epoch and grouping by topic (KIP-380). v6: flexible.
//   - v7: topic ids (KIP-516), kept in the cache for Metadata v10+.

import (
	"github.com/sirupsen/logrus"
	"github.com/twmb/franz-go/pkg/kmsg"

	"samsa/broker/metadata"
	"samsa/kafka"
)

func (b *Broker) handleUpdateMetadata(r *request) (kmsg.Response, error) {
	req := r.body.(*kmsg.UpdateMetadataRequest)
	resp := req.ResponseKind().(*kmsg.UpdateMetadataResponse)
	if b.staleBrokerEpoch(req.BrokerEpoch) {
		resp.ErrorCode = b.errorCode(errStaleBrokerEpoch)
		return resp, nil
	}
	if err := b.replicas.ObserveControllerEpoch(req.ControllerEpoch); err != nil {
		b.log.WithFields(logrus.Fields{"controller_epoch": req.ControllerEpoch}).
			Info("rejected UpdateMetadata from a stale controller")
		resp.ErrorCode = b.errorCode(err)
		return resp, nil
	}
	u := metadata.Update{ControllerID: req.ControllerID, ControllerEpoch: req.ControllerEpoch}
	for _, lb := range req.LiveBrokers {
		mb := metadata.Broker{ID: lb.ID, Rack: lb.Rack}
		if req.Version == 0 {
			mb.Endpoints = []metadata.Endpoint{{Listener: "PLAINTEXT", Host: lb.Host, Port: lb.Port}}
		}
		for _, ep := range lb.Endpoints {
			name := ep.ListenerName
			if req.Version < 3 {
				name = securityProtocolName(ep.SecurityProtocol)
			}
			mb.Endpoints = append(mb.Endpoints, metadata.Endpoint{
				Listener: name, Host: ep.Host, Port: ep.Port, SecurityProtocol: ep.SecurityProtocol,
			})
		}
		u.LiveBrokers = append(u.LiveBrokers, mb)
	}
	add := func(topic string, ps kmsg.UpdateMetadataRequestTopicPartition) {
		u.Partitions = append(u.Partitions, metadata.PartitionState{
			Topic: topic, Partition: ps.Partition, ControllerEpoch: ps.ControllerEpoch,
			Leader: ps.Leader, LeaderEpoch: ps.LeaderEpoch, ISR: ps.ISR, ZkVersion: ps.ZKVersion,
			Replicas: ps.Replicas, OfflineReplicas: ps.OfflineReplicas,
		})
	}
	for _, ps := range req.PartitionStates {
		add(ps.Topic, ps)
	}
	for _, ts := range req.TopicStates {
		if ts.TopicID != ([16]byte{}) {
			if u.TopicIDs == nil {
				u.TopicIDs = map[string][16]byte{}
			}
			u.TopicIDs[ts.Topic] = ts.TopicID
		}
		for _, ps := range ts.PartitionStates {
			add(ts.Topic, ps)
		}
	}
	deleted := b.meta.Apply(u)
	b.metadataUpdated()
	if len(deleted) > 0 && b.groups != nil {
		// Kafka: groupCoordinator.handleDeletedPartitions.
		tps := make([]kafka.TopicPartition, 0, len(deleted))
		for _, ps := range deleted {
			tps = append(tps, kafka.TopicPartition{Topic: ps.Topic, Partition: ps.Partition})
		}
		b.groups.HandleDeletedPartitions(tps)
	}
	return resp, nil
}

// securityProtocolName maps Kafka's SecurityProtocol id to its name.
func securityProtocolName(id int16) string {
	switch id {
	case 1:
		return "SSL"
	case 2:
		return "SASL_PLAINTEXT"
	case 3:
		return "SASL_SSL"
	}
	return "PLAINTEXT"
}
