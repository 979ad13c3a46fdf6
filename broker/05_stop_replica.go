package broker

// StopReplica: v0-3
//
// Behaviour:
//   - Inter-broker: the controller stops this broker's replica of a
//     partition (it stops leading or following it); with delete=true the
//     partition's log is removed from disk as well.
//   - An older controller epoch answers a top-level STALE_CONTROLLER_EPOCH;
//     an older broker epoch STALE_BROKER_EPOCH (KIP-380).
//   - v3: a partition's leader epoch must be -2 (topic deletion), -1
//     (unknown) or newer than the local one, otherwise FENCED_LEADER_EPOCH.
//   - Stopping a partition this broker does not host succeeds (Kafka does
//     the same: the controller retries deletions and must see success).
//   - A partition that is offline here (its log dir failed) answers
//     KAFKA_STORAGE_ERROR and is neither stopped nor deleted (Kafka's
//     stopReplicas); a topic deletion waiting for it completes once the
//     broker has restarted.
//
// Version notes:
//   - v1: broker epoch and grouping by topic. v2: flexible.
//   - v3: per-partition leader epoch and delete flag (KIP-570).

import (
	"github.com/twmb/franz-go/pkg/kmsg"

	"samsa/broker/replica"
	"samsa/kafka"
)

func (b *Broker) handleStopReplica(r *request) (kmsg.Response, error) {
	req := r.body.(*kmsg.StopReplicaRequest)
	resp := req.ResponseKind().(*kmsg.StopReplicaResponse)
	if b.staleBrokerEpoch(req.BrokerEpoch) {
		resp.ErrorCode = b.errorCode(errStaleBrokerEpoch)
		return resp, nil
	}
	in := replica.StopReplica{ControllerID: req.ControllerID, ControllerEpoch: req.ControllerEpoch}
	for _, t := range req.Topics {
		switch {
		case req.Version == 0:
			in.Partitions = append(in.Partitions, replica.StopPartition{
				TopicPartition: kafka.TopicPartition{Topic: t.Topic, Partition: t.Partition},
				LeaderEpoch:    replica.NoEpoch, Delete: req.DeletePartitions,
			})
		case req.Version <= 2:
			for _, p := range t.Partitions {
				in.Partitions = append(in.Partitions, replica.StopPartition{
					TopicPartition: kafka.TopicPartition{Topic: t.Topic, Partition: p},
					LeaderEpoch:    replica.NoEpoch, Delete: req.DeletePartitions,
				})
			}
		default:
			for _, ps := range t.PartitionStates {
				in.Partitions = append(in.Partitions, replica.StopPartition{
					TopicPartition: kafka.TopicPartition{Topic: t.Topic, Partition: ps.Partition},
					LeaderEpoch:    ps.LeaderEpoch, Delete: ps.Delete,
				})
			}
		}
	}
	results, err := b.replicas.StopReplicas(in)
	if err != nil {
		resp.ErrorCode = b.errorCode(err)
		return resp, nil
	}
	b.txnStopReplicas(in.Partitions, results)
	if b.groups != nil {
		for _, sp := range in.Partitions {
			if sp.Topic == consumerOffsetsTopic && results[sp.TopicPartition] == nil {
				b.groups.Resign(sp.Partition, -1)
			}
		}
	}
	for _, sp := range in.Partitions {
		rp := kmsg.NewStopReplicaResponsePartition()
		rp.Topic, rp.Partition = sp.Topic, sp.Partition
		rp.ErrorCode = b.errorCode(results[sp.TopicPartition])
		resp.Partitions = append(resp.Partitions, rp)
	}
	return resp, nil
}
