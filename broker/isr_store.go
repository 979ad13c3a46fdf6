package broker

import (
	"samsa/broker/replica"
	"samsa/zkutil"
)

// zkIsrStore implements replica.IsrStore over zkutil (Kafka's pre-AlterIsr
// ZooKeeper path: the leader writes the state znode conditionally on its
// zkVersion and announces the change under /isr_change_notification).
type zkIsrStore struct{ zk *zkutil.Client }

func (s zkIsrStore) UpdateIsr(tp replica.TopicPartition, leader, leaderEpoch int32, isr []int32, controllerEpoch, expectedZkVersion int32) (int32, error) {
	return s.zk.UpdatePartitionStateFromLeader(zkutil.TopicPartition{Topic: tp.Topic, Partition: tp.Partition},
		zkutil.PartitionState{Leader: leader, LeaderEpoch: leaderEpoch, ISR: isr, ControllerEpoch: controllerEpoch},
		expectedZkVersion)
}

func (s zkIsrStore) NotifyIsrChanges(tps []replica.TopicPartition) error {
	out := make([]zkutil.TopicPartition, len(tps))
	for i, tp := range tps {
		out[i] = zkutil.TopicPartition{Topic: tp.Topic, Partition: tp.Partition}
	}
	return s.zk.WriteIsrChangeNotification(out)
}
