package remote

import (
	"samsa/broker/replica"
	"samsa/zkutil"
)

// IsrStore implements replica.IsrStore over zkutil (Kafka's pre-AlterIsr
// ZooKeeper path: the leader writes the state znode conditionally on its
// zkVersion and announces the change under /isr_change_notification).
type IsrStore struct{ ZK *zkutil.Client }

func (s IsrStore) UpdateIsr(tp replica.TopicPartition, leader, leaderEpoch int32, isr []int32, controllerEpoch, expectedZkVersion int32) (int32, error) {
	return s.ZK.UpdatePartitionStateFromLeader(zkutil.TopicPartition{Topic: tp.Topic, Partition: tp.Partition},
		zkutil.PartitionState{Leader: leader, LeaderEpoch: leaderEpoch, ISR: isr, ControllerEpoch: controllerEpoch},
		expectedZkVersion)
}

func (s IsrStore) NotifyIsrChanges(tps []replica.TopicPartition) error {
	out := make([]zkutil.TopicPartition, len(tps))
	for i, tp := range tps {
		out[i] = zkutil.TopicPartition{Topic: tp.Topic, Partition: tp.Partition}
	}
	return s.ZK.WriteIsrChangeNotification(out)
}
