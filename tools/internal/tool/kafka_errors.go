package tool

// Kafka's error codes as Kafka 2.8's Java tools print them: the exception
// class (org.apache.kafka.common.errors.<Name>) and its default message,
// from clients/.../protocol/Errors.java at tag 2.8.2.

import (
	"errors"
	"fmt"

	"github.com/IBM/sarama"
)

// KafkaErrorText is one Kafka error: its exception class name (without the
// package) and default message.
type KafkaErrorText struct{ Class, Message string }

// Kafka28Errors maps an error code to Kafka 2.8's exception class and
// message (Errors.java).
var Kafka28Errors = map[int16]KafkaErrorText{
	-1:  {"UnknownServerException", "The server experienced an unexpected error when processing the request."},
	1:   {"OffsetOutOfRangeException", "The requested offset is not within the range of offsets maintained by the server."},
	2:   {"CorruptRecordException", "This message has failed its CRC checksum, exceeds the valid size, has a null key for a compacted topic, or is otherwise corrupt."},
	3:   {"UnknownTopicOrPartitionException", "This server does not host this topic-partition."},
	4:   {"InvalidFetchSizeException", "The requested fetch size is invalid."},
	5:   {"LeaderNotAvailableException", "There is no leader for this topic-partition as we are in the middle of a leadership election."},
	6:   {"NotLeaderOrFollowerException", "For requests intended only for the leader, this error indicates that the broker is not the current leader. For requests intended for any replica, this error indicates that the broker is not a replica of the topic partition."},
	7:   {"TimeoutException", "The request timed out."},
	8:   {"BrokerNotAvailableException", "The broker is not available."},
	9:   {"ReplicaNotAvailableException", "The replica is not available for the requested topic-partition. Produce/Fetch requests and other requests intended only for the leader or follower return NOT_LEADER_OR_FOLLOWER if the broker is not a replica of the topic-partition."},
	10:  {"RecordTooLargeException", "The request included a message larger than the max message size the server will accept."},
	11:  {"ControllerMovedException", "The controller moved to another broker."},
	12:  {"OffsetMetadataTooLarge", "The metadata field of the offset request was too large."},
	13:  {"NetworkException", "The server disconnected before a response was received."},
	14:  {"CoordinatorLoadInProgressException", "The coordinator is loading and hence can't process requests."},
	15:  {"CoordinatorNotAvailableException", "The coordinator is not available."},
	16:  {"NotCoordinatorException", "This is not the correct coordinator."},
	17:  {"InvalidTopicException", "The request attempted to perform an operation on an invalid topic."},
	18:  {"RecordBatchTooLargeException", "The request included message batch larger than the configured segment size on the server."},
	19:  {"NotEnoughReplicasException", "Messages are rejected since there are fewer in-sync replicas than required."},
	20:  {"NotEnoughReplicasAfterAppendException", "Messages are written to the log, but to fewer in-sync replicas than required."},
	21:  {"InvalidRequiredAcksException", "Produce request specified an invalid value for required acks."},
	22:  {"IllegalGenerationException", "Specified group generation id is not valid."},
	23:  {"InconsistentGroupProtocolException", "The group member's supported protocols are incompatible with those of existing members or first group member tried to join with empty protocol type or empty protocol list."},
	24:  {"InvalidGroupIdException", "The configured groupId is invalid."},
	25:  {"UnknownMemberIdException", "The coordinator is not aware of this member."},
	26:  {"InvalidSessionTimeoutException", "The session timeout is not within the range allowed by the broker (as configured by group.min.session.timeout.ms and group.max.session.timeout.ms)."},
	27:  {"RebalanceInProgressException", "The group is rebalancing, so a rejoin is needed."},
	28:  {"InvalidCommitOffsetSizeException", "The committing offset data size is not valid."},
	29:  {"TopicAuthorizationException", "Topic authorization failed."},
	30:  {"GroupAuthorizationException", "Group authorization failed."},
	31:  {"ClusterAuthorizationException", "Cluster authorization failed."},
	32:  {"InvalidTimestampException", "The timestamp of the message is out of acceptable range."},
	33:  {"UnsupportedSaslMechanismException", "The broker does not support the requested SASL mechanism."},
	34:  {"IllegalSaslStateException", "Request is not valid given the current SASL state."},
	35:  {"UnsupportedVersionException", "The version of API is not supported."},
	36:  {"TopicExistsException", "Topic with this name already exists."},
	37:  {"InvalidPartitionsException", "Number of partitions is below 1."},
	38:  {"InvalidReplicationFactorException", "Replication factor is below 1 or larger than the number of available brokers."},
	39:  {"InvalidReplicaAssignmentException", "Replica assignment is invalid."},
	40:  {"InvalidConfigurationException", "Configuration is invalid."},
	41:  {"NotControllerException", "This is not the correct controller for this cluster."},
	42:  {"InvalidRequestException", "This most likely occurs because of a request being malformed by the client library or the message was sent to an incompatible broker. See the broker logs for more details."},
	43:  {"UnsupportedForMessageFormatException", "The message format version on the broker does not support the request."},
	44:  {"PolicyViolationException", "Request parameters do not satisfy the configured policy."},
	45:  {"OutOfOrderSequenceException", "The broker received an out of order sequence number."},
	46:  {"DuplicateSequenceException", "The broker received a duplicate sequence number."},
	47:  {"InvalidProducerEpochException", "Producer attempted to produce with an old epoch."},
	48:  {"InvalidTxnStateException", "The producer attempted a transactional operation in an invalid state."},
	49:  {"InvalidPidMappingException", "The producer attempted to use a producer id which is not currently assigned to its transactional id."},
	50:  {"InvalidTxnTimeoutException", "The transaction timeout is larger than the maximum value allowed by the broker (as configured by transaction.max.timeout.ms)."},
	51:  {"ConcurrentTransactionsException", "The producer attempted to update a transaction while another concurrent operation on the same transaction was ongoing."},
	52:  {"TransactionCoordinatorFencedException", "Indicates that the transaction coordinator sending a WriteTxnMarker is no longer the current coordinator for a given producer."},
	53:  {"TransactionalIdAuthorizationException", "Transactional Id authorization failed."},
	54:  {"SecurityDisabledException", "Security features are disabled."},
	55:  {"OperationNotAttemptedException", "The broker did not attempt to execute this operation. This may happen for batched RPCs where some operations in the batch failed, causing the broker to respond without trying the rest."},
	56:  {"KafkaStorageException", "Disk error when trying to access log file on the disk."},
	57:  {"LogDirNotFoundException", "The user-specified log directory is not found in the broker config."},
	58:  {"SaslAuthenticationException", "SASL Authentication failed."},
	59:  {"UnknownProducerIdException", "This exception is raised by the broker if it could not locate the producer metadata associated with the producerId in question. This could happen if, for instance, the producer's records were deleted because their retention time had elapsed. Once the last records of the producerId are removed, the producer's metadata is removed from the broker, and future appends by the producer will return this exception."},
	60:  {"ReassignmentInProgressException", "A partition reassignment is in progress."},
	61:  {"DelegationTokenDisabledException", "Delegation Token feature is not enabled."},
	62:  {"DelegationTokenNotFoundException", "Delegation Token is not found on server."},
	63:  {"DelegationTokenOwnerMismatchException", "Specified Principal is not valid Owner/Renewer."},
	64:  {"UnsupportedByAuthenticationException", "Delegation Token requests are not allowed on PLAINTEXT/1-way SSL channels and on delegation token authenticated channels."},
	65:  {"DelegationTokenAuthorizationException", "Delegation Token authorization failed."},
	66:  {"DelegationTokenExpiredException", "Delegation Token is expired."},
	67:  {"InvalidPrincipalTypeException", "Supplied principalType is not supported."},
	68:  {"GroupNotEmptyException", "The group is not empty."},
	69:  {"GroupIdNotFoundException", "The group id does not exist."},
	70:  {"FetchSessionIdNotFoundException", "The fetch session ID was not found."},
	71:  {"InvalidFetchSessionEpochException", "The fetch session epoch is invalid."},
	72:  {"ListenerNotFoundException", "There is no listener on the leader broker that matches the listener on which metadata request was processed."},
	73:  {"TopicDeletionDisabledException", "Topic deletion is disabled."},
	74:  {"FencedLeaderEpochException", "The leader epoch in the request is older than the epoch on the broker."},
	75:  {"UnknownLeaderEpochException", "The leader epoch in the request is newer than the epoch on the broker."},
	76:  {"UnsupportedCompressionTypeException", "The requesting client does not support the compression type of given partition."},
	77:  {"StaleBrokerEpochException", "Broker epoch has changed."},
	78:  {"OffsetNotAvailableException", "The leader high watermark has not caught up from a recent leader election so the offsets cannot be guaranteed to be monotonically increasing."},
	79:  {"MemberIdRequiredException", "The group member needs to have a valid member id before actually entering a consumer group."},
	80:  {"PreferredLeaderNotAvailableException", "The preferred leader was not available."},
	81:  {"GroupMaxSizeReachedException", "The consumer group has reached its max size."},
	82:  {"FencedInstanceIdException", "The broker rejected this static consumer since another consumer with the same group.instance.id has registered with a different member.id."},
	83:  {"EligibleLeadersNotAvailableException", "Eligible topic partition leaders are not available."},
	84:  {"ElectionNotNeededException", "Leader election not needed for topic partition."},
	85:  {"NoReassignmentInProgressException", "No partition reassignment is in progress."},
	86:  {"GroupSubscribedToTopicException", "Deleting offsets of a topic is forbidden while the consumer group is actively subscribed to it."},
	87:  {"InvalidRecordException", "This record has failed the validation on broker and hence will be rejected."},
	88:  {"UnstableOffsetCommitException", "There are unstable offsets that need to be cleared."},
	89:  {"ThrottlingQuotaExceededException", "The throttling quota has been exceeded."},
	90:  {"ProducerFencedException", "There is a newer producer with the same transactionalId which fences the current one."},
	91:  {"ResourceNotFoundException", "A request illegally referred to a resource that does not exist."},
	92:  {"DuplicateResourceException", "A request illegally referred to the same resource twice."},
	93:  {"UnacceptableCredentialException", "Requested credential would not meet criteria for acceptability."},
	94:  {"InconsistentVoterSetException", "Indicates that the either the sender or recipient of a voter-only request is not one of the expected voters"},
	95:  {"InvalidUpdateVersionException", "The given update version was invalid."},
	96:  {"FeatureUpdateFailedException", "Unable to update finalized features due to an unexpected server error."},
	97:  {"PrincipalDeserializationException", "Request principal deserialization failed during forwarding. This indicates an internal error on the broker cluster security setup."},
	98:  {"SnapshotNotFoundException", "Requested snapshot was not found"},
	100: {"UnknownTopicIdException", "This server does not host this topic ID."},
	101: {"DuplicateBrokerRegistrationException", "This broker ID is already in use."},
	102: {"BrokerIdNotRegisteredException", "The given broker ID was not registered."},
	103: {"InconsistentTopicIdException", "The log's topic ID did not match the topic ID in the request"},
	104: {"InconsistentClusterIdException", "The clusterId in the request does not match that found on the server"},
	105: {"TransactionalIdNotFoundException", "The transactionalId could not be found"}, // Kafka 3.0, for DescribeTransactions
}

// JavaExceptionClass returns the fully qualified Java exception class Kafka
// uses for code.
func JavaExceptionClass(code int16) string {
	e, ok := Kafka28Errors[code]
	if !ok {
		e = Kafka28Errors[-1]
	}
	if e.Class == "InvalidRecordException" {
		return "org.apache.kafka.common." + e.Class
	}
	return "org.apache.kafka.common.errors." + e.Class
}

// JavaExceptionText is "<class>: <message>", the getMessage of the
// ExecutionException a Java admin future fails with.
func JavaExceptionText(code int16) string {
	e, ok := Kafka28Errors[code]
	if !ok {
		e = Kafka28Errors[-1]
	}
	return fmt.Sprintf("%s: %s", JavaExceptionClass(code), e.Message)
}

// JavaErrorText words err as Kafka's Java tools would: a Kafka error code
// as its exception, anything else (network, timeouts) as it is.
func JavaErrorText(err error) string {
	var ke sarama.KError
	if errors.As(err, &ke) {
		return JavaExceptionText(int16(ke))
	}
	return err.Error()
}
