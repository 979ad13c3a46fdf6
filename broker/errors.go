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
	switch {
	case errors.As(err, &ke):
		return ke.Code
	case errors.Is(err, replica.ErrUnknownPartition):
		if b.knownButNotHosted(err) {
			return kerr.NotLeaderForPartition.Code
		}
		return kerr.UnknownTopicOrPartition.Code
	case errors.Is(err, errUnknownTopic):
		return kerr.UnknownTopicOrPartition.Code
	case errors.Is(err, replica.ErrNotLeader):
		return kerr.NotLeaderForPartition.Code
	case errors.Is(err, replica.ErrNotEnoughReplicas):
		return kerr.NotEnoughReplicas.Code
	case errors.Is(err, replica.ErrNotEnoughReplicasAfterAppend):
		return kerr.NotEnoughReplicasAfterAppend.Code
	case errors.Is(err, replica.ErrStaleControllerEpoch), errors.Is(err, replica.ErrStaleLeaderEpoch):
		return kerr.StaleControllerEpoch.Code
	case errors.Is(err, replica.ErrFencedLeaderEpoch):
		return kerr.FencedLeaderEpoch.Code
	case errors.Is(err, replica.ErrUnknownLeaderEpoch):
		return kerr.UnknownLeaderEpoch.Code
	case errors.Is(err, replica.ErrReplicaNotAvailable):
		return kerr.ReplicaNotAvailable.Code
	case errors.Is(err, replica.ErrTimeout), errors.Is(err, purgatory.ErrTimeout),
		errors.Is(err, context.DeadlineExceeded):
		return kerr.RequestTimedOut.Code
	case errors.Is(err, context.Canceled):
		// The handler's context ends only when the broker shuts down or the
		// connection closes; if an answer still goes out, it must be one
		// clients retry, not UNKNOWN_SERVER_ERROR.
		return kerr.RequestTimedOut.Code
	case errors.Is(err, replica.ErrShuttingDown), errors.Is(err, storage.ErrClosed):
		return kerr.NotLeaderForPartition.Code
	case errors.Is(err, record.ErrTooLarge):
		return kerr.MessageTooLarge.Code
	case errors.Is(err, record.ErrCorrupt):
		return kerr.CorruptMessage.Code
	case errors.Is(err, record.ErrInvalidRecord):
		return kerr.InvalidRecord.Code
	case errors.Is(err, storage.ErrOffsetOutOfRange):
		return kerr.OffsetOutOfRange.Code
	case errors.Is(err, storage.ErrInvalidTimestamp):
		return kerr.InvalidTimestamp.Code
	case errors.Is(err, storage.ErrRecordBatchTooLarge):
		return kerr.RecordListTooLarge.Code
	case errors.Is(err, storage.ErrOutOfOrderSequence):
		return kerr.OutOfOrderSequenceNumber.Code
	case errors.Is(err, storage.ErrInvalidProducerEpoch):
		return kerr.InvalidProducerEpoch.Code
	case errors.Is(err, storage.ErrUnknownProducerID):
		return kerr.UnknownProducerID.Code
	case errors.Is(err, storage.ErrInvalidTxnState):
		return kerr.InvalidTxnState.Code
	case errors.Is(err, storage.ErrTransactionCoordinatorFenced):
		return kerr.TransactionCoordinatorFenced.Code
	case errors.Is(err, errProducerIDsUnavailable):
		return kerr.CoordinatorLoadInProgress.Code
	case errors.Is(err, storage.ErrStorage), errors.Is(err, storage.ErrCorrupt):
		return kerr.KafkaStorageError.Code
	case errors.Is(err, errNotController):
		return kerr.NotController.Code
	case errors.Is(err, errInvalidRequest):
		return kerr.InvalidRequest.Code
	case errors.Is(err, errLeaderNotAvailable):
		return kerr.LeaderNotAvailable.Code
	case errors.Is(err, errStaleBrokerEpoch):
		return kerr.StaleBrokerEpoch.Code
	case errors.Is(err, errInvalidRequiredAcks):
		return kerr.InvalidRequiredAcks.Code
	case errors.Is(err, errUnsupportedCompression):
		return kerr.UnsupportedCompressionType.Code
	case errors.Is(err, errTopicDeletionDisabled):
		return kerr.TopicDeletionDisabled.Code
	case errors.Is(err, errInvalidTopic), errors.Is(err, zkutil.ErrInvalidTopic),
		errors.Is(err, zkutil.ErrTopicCollision):
		return kerr.InvalidTopicException.Code
	case errors.Is(err, errInvalidPartitions), errors.Is(err, assign.ErrInvalidPartitions):
		return kerr.InvalidPartitions.Code
	case errors.Is(err, errInvalidReplicationFactor), errors.Is(err, assign.ErrInvalidReplicationFactor):
		return kerr.InvalidReplicationFactor.Code
	case errors.Is(err, errInvalidReplicaAssignment):
		return kerr.InvalidReplicaAssignment.Code
	case errors.Is(err, errInvalidConfig), errors.Is(err, config.ErrUnknownTopicConfig):
		return kerr.InvalidConfig.Code
	case errors.Is(err, errTopicExists), errors.Is(err, zkutil.ErrTopicExists):
		return kerr.TopicAlreadyExists.Code
	case errors.Is(err, errPolicyViolation):
		return kerr.PolicyViolation.Code
	case errors.Is(err, zkutil.ErrControllerMoved), errors.Is(err, controller.ErrNotController):
		return kerr.NotController.Code
	case errors.Is(err, controller.ErrStaleBrokerEpoch):
		return kerr.StaleBrokerEpoch.Code
	case errors.Is(err, controller.ErrBrokerNotAvailable):
		return kerr.BrokerNotAvailable.Code
	case errors.Is(err, controller.ErrUnknownTopicOrPartition):
		return kerr.UnknownTopicOrPartition.Code
	case errors.Is(err, controller.ErrTopicBeingDeleted):
		return kerr.InvalidTopicException.Code
	case errors.Is(err, controller.ErrElectionNotNeeded):
		return kerr.ElectionNotNeeded.Code
	case errors.Is(err, controller.ErrPreferredLeaderNotAvailable):
		return kerr.PreferredLeaderNotAvailable.Code
	case errors.Is(err, controller.ErrEligibleLeadersNotAvailable):
		return kerr.EligibleLeadersNotAvailable.Code
	case errors.Is(err, controller.ErrInvalidReplicaAssignment):
		return kerr.InvalidReplicaAssignment.Code
	case errors.Is(err, controller.ErrNoReassignmentInProgress):
		return kerr.NoReassignmentInProgress.Code
	case errors.Is(err, assign.ErrRackInfoIncomplete):
		// Kafka's AdminOperationException reaches clients this way.
		return kerr.UnknownServerError.Code
	}
	b.log.WithError(err).Warn("unmapped error answered as UNKNOWN_SERVER_ERROR")
	return kerr.UnknownServerError.Code
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
