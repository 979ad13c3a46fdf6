package broker

// LeaderAndIsr: v0-5
//
// Behaviour:
//   - Inter-broker: the controller tells the replicas of a partition who
//     leads, the ISR and the leader epoch. broker/replica applies it: become
//     leader (open or create the log, record the leader epoch, serve
//     produce and fetch) or follower (create the log, remember the leader).
//   - An older controller epoch than this broker has seen answers a
//     top-level STALE_CONTROLLER_EPOCH and applies nothing; an older broker
//     epoch answers STALE_BROKER_EPOCH (KIP-380).
//   - Per partition, as Kafka 2.8: a leader epoch that is not newer than the
//     local one answers STALE_CONTROLLER_EPOCH and is ignored; a partition
//     whose replica list does not include this broker answers
//     UNKNOWN_TOPIC_OR_PARTITION; a log that cannot be opened or created
//     answers KAFKA_STORAGE_ERROR and takes the partition offline here.
//   - A partition that is offline on this broker (its log dir failed,
//     KIP-112) answers KAFKA_STORAGE_ERROR and is left as it is; the
//     controller then treats this replica as offline. A new log is never
//     created in a failed dir.
//   - Follower fetchers start for the partitions this broker follows (see
//     docs/broker.md for what replication does and does not do yet).
//   - The logs one request creates are made durable together: one log-dir
//     fsync per log dir before the answer, not one per partition
//     (storage.Manager.BeginCreateWave).
//
// Version notes:
//   - v1: IsNew. v2: broker epoch and grouping by topic (KIP-380).
//   - v3: adding/removing replicas (KIP-455). v4: flexible.
//   - v5: topic ids and Type (KIP-516); topic ids are ignored and answered
//     as zero.

import (
	"github.com/twmb/franz-go/pkg/kmsg"

	"samsa/broker/replica"
	"samsa/kafka"
)

func (b *Broker) handleLeaderAndISR(r *request) (kmsg.Response, error) {
	req := r.body.(*kmsg.LeaderAndISRRequest)
	resp := req.ResponseKind().(*kmsg.LeaderAndISRResponse)
	if b.staleBrokerEpoch(req.BrokerEpoch) {
		resp.ErrorCode = b.errorCode(errStaleBrokerEpoch)
		return resp, nil
	}
	in := replica.LeaderAndIsr{ControllerID: req.ControllerID, ControllerEpoch: req.ControllerEpoch}
	var order []kafka.TopicPartition
	topicIDs := map[string][16]byte{}
	add := func(topic string, ps kmsg.LeaderAndISRRequestTopicPartition) {
		tp := kafka.TopicPartition{Topic: topic, Partition: ps.Partition}
		order = append(order, tp)
		in.Partitions = append(in.Partitions, replica.PartitionState{
			TopicPartition: tp, ControllerEpoch: ps.ControllerEpoch, Leader: ps.Leader,
			LeaderEpoch: ps.LeaderEpoch, ISR: ps.ISR, ZkVersion: ps.ZKVersion, Replicas: ps.Replicas,
			AddingReplicas: ps.AddingReplicas, RemovingReplicas: ps.RemovingReplicas, IsNew: ps.IsNew,
		})
	}
	for _, ps := range req.PartitionStates {
		add(ps.Topic, ps)
	}
	for _, ts := range req.TopicStates {
		topicIDs[ts.Topic] = ts.TopicID
		for _, ps := range ts.PartitionStates {
			add(ts.Topic, ps)
		}
	}
	for _, l := range req.LiveLeaders {
		in.LiveLeaders = append(in.LiveLeaders, replica.LeaderEndpoint{ID: l.BrokerID, Host: l.Host, Port: l.Port})
	}
	// The logs this request creates share one fsync per log dir, made
	// before the answer (storage/manager_create_wave.go says why that
	// keeps Kafka's guarantees); a log dir whose fsync fails goes offline
	// and its new logs answer KAFKA_STORAGE_ERROR.
	endWave := b.logs.BeginCreateWave()
	results, err := b.replicas.BecomeLeaderOrFollower(r.ctx, in)
	for tp, werr := range endWave() {
		if err == nil && results[tp] == nil {
			results[tp] = werr
		}
	}
	if err != nil {
		resp.ErrorCode = b.errorCode(err)
		return resp, nil
	}
	b.groupLeadershipChanged(in.Partitions, results)
	b.txnLeadershipChanged(in.Partitions, results)
	byTopic := map[string]int{}
	for _, tp := range order {
		rp := kmsg.NewLeaderAndISRResponseTopicPartition()
		rp.Topic, rp.Partition = tp.Topic, tp.Partition
		rp.ErrorCode = b.errorCode(results[tp])
		if req.Version < 5 {
			resp.Partitions = append(resp.Partitions, rp)
			continue
		}
		i, ok := byTopic[tp.Topic]
		if !ok {
			rt := kmsg.NewLeaderAndISRResponseTopic()
			rt.TopicID = topicIDs[tp.Topic]
			resp.Topics = append(resp.Topics, rt)
			i = len(resp.Topics) - 1
			byTopic[tp.Topic] = i
		}
		resp.Topics[i].Partitions = append(resp.Topics[i].Partitions, rp)
	}
	return resp, nil
}
