package broker

import (
	"context"
	"errors"

	"github.com/twmb/franz-go/pkg/kerr"

	"samsa/assign"
	"samsa/broker/purgatory"
	"samsa/broker/record"
	"samsa/broker/replica"
	"samsa/broker/storage"
	"samsa/config"
	"samsa/controller"
	"samsa/zkutil"
)

// Errors of the broker package itself, mapped like the domain errors below.
var (
	// errNotController: an admin API that needs the active controller
	// reached another broker (NOT_CONTROLLER).
	errNotController = errors.New("broker: not the active controller")
	// errInvalidRequest: the request is well formed but its fields do not
	// make sense together (INVALID_REQUEST).
	errInvalidRequest = errors.New("broker: invalid request")
	// errLeaderNotAvailable: the partition exists but has no live leader
	// yet (LEADER_NOT_AVAILABLE).
	errLeaderNotAvailable = errors.New("broker: leader not available")
	// errStaleBrokerEpoch: a control request addressed to an older
	// registration of this broker (STALE_BROKER_EPOCH, KIP-380).
	errStaleBrokerEpoch = errors.New("broker: stale broker epoch")
	// errInvalidRequiredAcks: acks other than -1, 0, 1 (INVALID_REQUIRED_ACKS).
	errInvalidRequiredAcks = errors.New("broker: invalid required acks")
	// errUnsupportedForMessageFormat: for example zstd in a produce below v7
	// (UNSUPPORTED_COMPRESSION_TYPE is used instead where Kafka does).
	errUnsupportedCompression = errors.New("broker: unsupported compression type")
	// errTopicDeletionDisabled: DeleteTopics with delete.topic.enable=false.
	errTopicDeletionDisabled = errors.New("broker: topic deletion is disabled")
	// errInvalidTopic, errInvalidPartitions, errInvalidReplicationFactor,
	// errInvalidReplicaAssignment, errInvalidConfig, errTopicExists:
	// CreateTopics/CreatePartitions validation.
	errInvalidTopic             = errors.New("broker: invalid topic")
	errInvalidPartitions        = errors.New("broker: invalid partitions")
	errInvalidReplicationFactor = errors.New("broker: invalid replication factor")
	errInvalidReplicaAssignment = errors.New("broker: invalid replica assignment")
	errInvalidConfig            = errors.New("broker: invalid config")
	errTopicExists              = errors.New("broker: topic already exists")
	errUnknownTopic             = errors.New("broker: unknown topic or partition")
	errPolicyViolation          = errors.New("broker: policy violation")
)

// errorCode maps err to its Kafka error code. It is the one place where
// internal errors meet wire codes (STYLE S5.3). nil maps to 0. An error it
// does not know maps to UNKNOWN_SERVER_ERROR and is logged at WARN.
func (b *Broker) errorCode(err error) int16 {
	if err == nil {
		return 0
	}
	var ke *kerr.Error
	if errors.As(err, &ke) {
		return ke.Code
	}
	if errors.Is(err, replica.ErrUnknownPartition) {
		if b.knownButNotHosted(err) {
			return kerr.NotLeaderForPartition.Code
		}
		return kerr.UnknownTopicOrPartition.Code
	}
	for _, m := range errorCodes {
		for _, target := range m.errs {
			if errors.Is(err, target) {
				return m.code.Code
			}
		}
	}
	b.log.WithError(err).Warn("unmapped error answered as UNKNOWN_SERVER_ERROR")
	return kerr.UnknownServerError.Code
}

// errorCodes maps internal errors to Kafka errors, checked in order (an
// error that wraps two sentinels gets the first row's code). A *kerr.Error
// and replica.ErrUnknownPartition (whose code depends on this broker's
// metadata) are handled by errorCode before the table. Read-only.
var errorCodes = []struct {
	code *kerr.Error
	errs []error
}{
	{kerr.UnknownTopicOrPartition, []error{errUnknownTopic}},
	{kerr.NotLeaderForPartition, []error{replica.ErrNotLeader}},
	{kerr.NotEnoughReplicas, []error{replica.ErrNotEnoughReplicas}},
	{kerr.NotEnoughReplicasAfterAppend, []error{replica.ErrNotEnoughReplicasAfterAppend}},
	{kerr.StaleControllerEpoch, []error{replica.ErrStaleControllerEpoch, replica.ErrStaleLeaderEpoch}},
	{kerr.FencedLeaderEpoch, []error{replica.ErrFencedLeaderEpoch}},
	{kerr.UnknownLeaderEpoch, []error{replica.ErrUnknownLeaderEpoch}},
	{kerr.ReplicaNotAvailable, []error{replica.ErrReplicaNotAvailable}},
	{kerr.RequestTimedOut, []error{replica.ErrTimeout, purgatory.ErrTimeout, context.DeadlineExceeded}},
	// The handler's context ends only when the broker shuts down or the
	// connection closes; if an answer still goes out, it must be one
	// clients retry, not UNKNOWN_SERVER_ERROR.
	{kerr.RequestTimedOut, []error{context.Canceled}},
	{kerr.NotLeaderForPartition, []error{replica.ErrShuttingDown, storage.ErrClosed}},
	{kerr.MessageTooLarge, []error{record.ErrTooLarge}},
	{kerr.CorruptMessage, []error{record.ErrCorrupt}},
	{kerr.InvalidRecord, []error{record.ErrInvalidRecord}},
	{kerr.OffsetOutOfRange, []error{storage.ErrOffsetOutOfRange}},
	{kerr.InvalidTimestamp, []error{storage.ErrInvalidTimestamp}},
	{kerr.RecordListTooLarge, []error{storage.ErrRecordBatchTooLarge}},
	{kerr.OutOfOrderSequenceNumber, []error{storage.ErrOutOfOrderSequence}},
	{kerr.InvalidProducerEpoch, []error{storage.ErrInvalidProducerEpoch}},
	{kerr.UnknownProducerID, []error{storage.ErrUnknownProducerID}},
	{kerr.InvalidTxnState, []error{storage.ErrInvalidTxnState}},
	{kerr.TransactionCoordinatorFenced, []error{storage.ErrTransactionCoordinatorFenced}},
	{kerr.CoordinatorLoadInProgress, []error{errProducerIDsUnavailable}},
	{kerr.KafkaStorageError, []error{storage.ErrStorage, storage.ErrCorrupt}},
	{kerr.NotController, []error{errNotController}},
	{kerr.InvalidRequest, []error{errInvalidRequest}},
	{kerr.LeaderNotAvailable, []error{errLeaderNotAvailable}},
	{kerr.StaleBrokerEpoch, []error{errStaleBrokerEpoch}},
	{kerr.InvalidRequiredAcks, []error{errInvalidRequiredAcks}},
	{kerr.UnsupportedCompressionType, []error{errUnsupportedCompression}},
	{kerr.TopicDeletionDisabled, []error{errTopicDeletionDisabled}},
	{kerr.InvalidTopicException, []error{errInvalidTopic, zkutil.ErrInvalidTopic, zkutil.ErrTopicCollision}},
	{kerr.InvalidPartitions, []error{errInvalidPartitions, assign.ErrInvalidPartitions}},
	{kerr.InvalidReplicationFactor, []error{errInvalidReplicationFactor, assign.ErrInvalidReplicationFactor}},
	{kerr.InvalidReplicaAssignment, []error{errInvalidReplicaAssignment}},
	{kerr.InvalidConfig, []error{errInvalidConfig, config.ErrUnknownTopicConfig}},
	{kerr.TopicAlreadyExists, []error{errTopicExists, zkutil.ErrTopicExists}},
	{kerr.PolicyViolation, []error{errPolicyViolation}},
	{kerr.NotController, []error{zkutil.ErrControllerMoved, controller.ErrNotController}},
	{kerr.StaleBrokerEpoch, []error{controller.ErrStaleBrokerEpoch}},
	{kerr.BrokerNotAvailable, []error{controller.ErrBrokerNotAvailable}},
	{kerr.UnknownTopicOrPartition, []error{controller.ErrUnknownTopicOrPartition}},
	{kerr.InvalidTopicException, []error{controller.ErrTopicBeingDeleted}},
	{kerr.ElectionNotNeeded, []error{controller.ErrElectionNotNeeded}},
	{kerr.PreferredLeaderNotAvailable, []error{controller.ErrPreferredLeaderNotAvailable}},
	{kerr.EligibleLeadersNotAvailable, []error{controller.ErrEligibleLeadersNotAvailable}},
	{kerr.InvalidReplicaAssignment, []error{controller.ErrInvalidReplicaAssignment}},
	{kerr.NoReassignmentInProgress, []error{controller.ErrNoReassignmentInProgress}},
	// Kafka's AdminOperationException reaches clients this way.
	{kerr.UnknownServerError, []error{assign.ErrRackInfoIncomplete}},
}

// knownButNotHosted reports whether err names a partition this broker does not host but its
// metadata knows: Kafka's getPartitionOrError answers NOT_LEADER_OR_FOLLOWER then (a produce or
// fetch that reached a broker after a reassignment moved the replica away), so the client
// refreshes its metadata instead of treating the partition as missing.
func (b *Broker) knownButNotHosted(err error) bool {
	var upe *replica.UnknownPartitionError
	if !errors.As(err, &upe) {
		return false
	}
	_, ok := b.meta.Snapshot().Partition(upe.TP.Topic, upe.TP.Partition)
	return ok
}
