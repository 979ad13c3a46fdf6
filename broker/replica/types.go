package replica

import "samsa/kafka"

// PartitionState is one partition of a LeaderAndIsr request: the
// controller's decision about who leads and who is in sync.
type PartitionState struct {
	kafka.TopicPartition
	ControllerEpoch  int32
	Leader           int32
	LeaderEpoch      int32
	ISR              []int32
	ZkVersion        int32
	Replicas         []int32
	AddingReplicas   []int32
	RemovingReplicas []int32
	IsNew            bool
}

// String prints every field (the embedded TopicPartition's String would
// print only the partition).
func (s PartitionState) String() string { return kafka.FieldsString(s) }

// LeaderEndpoint is a live leader named by a LeaderAndIsr request, for the
// follower fetchers.
type LeaderEndpoint struct {
	ID   int32
	Host string
	Port int32
}

// LeaderAndIsr is the content of a LeaderAndIsr request.
type LeaderAndIsr struct {
	ControllerID    int32
	ControllerEpoch int32
	Partitions      []PartitionState
	LiveLeaders     []LeaderEndpoint
}

// StopPartition is one partition of a StopReplica request.
type StopPartition struct {
	kafka.TopicPartition
	// LeaderEpoch is -2 for a topic being deleted, -1 when unknown (v0-2);
	// otherwise the stop applies only if it is newer than the local epoch.
	LeaderEpoch int32
	Delete      bool
}

// String prints every field (the embedded TopicPartition's String would
// print only the partition).
func (p StopPartition) String() string { return kafka.FieldsString(p) }

// StopReplica is the content of a StopReplica request.
type StopReplica struct {
	ControllerID    int32
	ControllerEpoch int32
	Partitions      []StopPartition
}

// Leader epochs with a meaning of their own in StopReplica v3.
const (
	EpochDuringDelete = -2
	NoEpoch           = -1
)
