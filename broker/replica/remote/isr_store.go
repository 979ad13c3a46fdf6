package remote

import (
	"samsa/kafka"
	"samsa/zkutil"
)

// IsrStore implements replica.IsrStore over zkutil (Kafka's pre-AlterIsr
// ZooKeeper path: the leader writes the state znode conditionally on its
// zkVersion and announces the change under /isr_change_notification).
type IsrStore struct{ ZK *zkutil.Client }

func (s IsrStore) UpdateIsr(tp kafka.TopicPartition, leader, leaderEpoch int32, isr []int32, controllerEpoch, expectedZkVersion int32) (int32, error) {
	return s.ZK.UpdatePartitionStateFromLeader(tp,
		zkutil.PartitionState{Leader: leader, LeaderEpoch: leaderEpoch, ISR: isr, ControllerEpoch: controllerEpoch},
		expectedZkVersion)
}

func (s IsrStore) NotifyIsrChanges(tps []kafka.TopicPartition) error {
	return s.ZK.WriteIsrChangeNotification(tps)
}
