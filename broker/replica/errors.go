package replica

import (
	"errors"
	"fmt"

	"samsa/broker/storage"
	"samsa/kafka"
)

// UnknownPartitionError is ErrUnknownPartition for one partition (errors.Is matches it), so
// the broker can tell a partition that exists nowhere from one that exists but is not hosted
// here: Kafka's ReplicaManager.getPartitionOrError answers NOT_LEADER_OR_FOLLOWER for the
// second when its metadata cache knows the partition, so clients refresh their metadata.
type UnknownPartitionError struct {
	TP kafka.TopicPartition
}

func (e *UnknownPartitionError) Error() string {
	return ErrUnknownPartition.Error() + ": " + e.TP.String()
}

// Unwrap makes errors.Is(err, ErrUnknownPartition) hold.
func (e *UnknownPartitionError) Unwrap() error { return ErrUnknownPartition }

func unknownPartition(tp kafka.TopicPartition) error { return &UnknownPartitionError{TP: tp} }

// Sentinel errors of the replica manager. broker/errors.go maps each to its
// Kafka error code; callers test them with errors.Is.
var (
	// ErrUnknownPartition: this broker hosts no replica of the partition
	// (UNKNOWN_TOPIC_OR_PARTITION).
	ErrUnknownPartition = errors.New("replica: unknown topic or partition")
	// ErrNotLeader: the broker hosts the partition but is not its leader
	// (NOT_LEADER_FOR_PARTITION).
	ErrNotLeader = errors.New("replica: not leader for partition")
	// ErrNotEnoughReplicas: acks=all and the ISR is smaller than
	// min.insync.replicas, checked before the append (NOT_ENOUGH_REPLICAS).
	ErrNotEnoughReplicas = errors.New("replica: not enough in-sync replicas")
	// ErrNotEnoughReplicasAfterAppend: the ISR shrank below
	// min.insync.replicas while an acks=all produce waited
	// (NOT_ENOUGH_REPLICAS_AFTER_APPEND).
	ErrNotEnoughReplicasAfterAppend = errors.New("replica: not enough in-sync replicas after append")
	// ErrStaleControllerEpoch: a control request from an older controller
	// (STALE_CONTROLLER_EPOCH).
	ErrStaleControllerEpoch = errors.New("replica: stale controller epoch")
	// ErrStaleLeaderEpoch: a LeaderAndIsr partition state whose leader epoch
	// is not newer than the local one; Kafka 2.8 answers
	// STALE_CONTROLLER_EPOCH for it.
	ErrStaleLeaderEpoch = errors.New("replica: stale leader epoch")
	// ErrFencedLeaderEpoch: a request carried an older leader epoch than the
	// partition's (FENCED_LEADER_EPOCH).
	ErrFencedLeaderEpoch = errors.New("replica: fenced leader epoch")
	// ErrUnknownLeaderEpoch: a request carried a newer leader epoch than the
	// partition's (UNKNOWN_LEADER_EPOCH).
	ErrUnknownLeaderEpoch = errors.New("replica: unknown leader epoch")
	// ErrReplicaNotAvailable: a follower fetch from a broker that is not in
	// the partition's replica set (REPLICA_NOT_AVAILABLE).
	ErrReplicaNotAvailable = errors.New("replica: replica not available")
	// ErrTimeout: an acks=all produce did not reach the ISR before its
	// timeout (REQUEST_TIMED_OUT).
	ErrTimeout = errors.New("replica: request timed out")
	// ErrOffline: the partition's log is in a failed log dir, so this
	// broker no longer serves it until it restarts (Kafka's
	// HostedPartition.Offline, KAFKA_STORAGE_ERROR). It matches
	// storage.ErrStorage too.
	ErrOffline = fmt.Errorf("replica: replica offline (its log dir failed): %w", storage.ErrStorage)
	// ErrShuttingDown: the manager is shutting down.
	ErrShuttingDown = errors.New("replica: shutting down")
)
