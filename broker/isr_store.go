package broker

import (
	"samsa/kafka"
	"samsa/zkutil"
)

// zkIsrStore implements replica.IsrStore over zkutil (Kafka's pre-AlterIsr
// ZooKeeper path: the leader writes the state znode conditionally on its
// zkVersion and announces the change under /isr_change_notification).
type zkIsrStore struct{ zk *zkutil.Client }

func (s zkIsrStore) UpdateIsr(tp kafka.TopicPartition, leader, leaderEpoch int32, isr []int32, controllerEpoch, expectedZkVersion int32) (int32, error) {
	return s.zk.UpdatePartitionStateFromLeader(tp,
		zkutil.PartitionState{Leader: leader, LeaderEpoch: leaderEpoch, ISR: isr, ControllerEpoch: controllerEpoch},
		expectedZkVersion)
}

func (s zkIsrStore) NotifyIsrChanges(tps []kafka.TopicPartition) error {
	return s.zk.WriteIsrChangeNotification(tps)
}
