package controller

import "errors"
import "samsa/kafka"

// Errors a Store reports, so the controller's logic does not depend on zkutil. The zkutil
// adapter wraps both sentinels, so errors.Is matches zkutil's errors as well.
var (
	// ErrControllerMoved: an epoch-fenced write failed its /controller_epoch check; another
	// controller was elected. The controller resigns and never retries the write.
	ErrControllerMoved = errors.New("controller: controller moved")
	// ErrZkVersionConflict: a conditional write saw another zkVersion (BADVERSION); the
	// controller re-reads the znode and decides again.
	ErrZkVersionConflict = errors.New("controller: zkVersion conflict")
	// ErrStateExists: a partition state znode to create already exists.
	ErrStateExists = errors.New("controller: partition state already exists")
)

// Store is the ZooKeeper state the controller reads, writes and watches (STYLE S1.4: the
// interface lives with its user). zkStore implements it over *zkutil.Client; every path and
// codec stays in zkutil. Methods may block on ZooKeeper and are called from the event
// goroutine only, except the Watch* and OnNewSession registrations, whose callbacks run on a
// zkutil goroutine and must only enqueue.
//
// Writes that take epochZkVersion are multi-ops fenced by a check on /controller_epoch and
// fail with an error wrapping ErrControllerMoved when another controller was elected.
type Store interface {
	// ElectController runs Kafka's 2.1+ election multi-op for brokerID: on success it
	// returns the new controller epoch and the zkVersion of /controller_epoch. Losing
	// returns an error; the caller then re-reads /controller.
	ElectController(brokerID int32) (epoch, epochZkVersion int32, err error)
	// ControllerID returns the broker id in /controller, or -1 when there is none.
	ControllerID() (int32, error)
	// ControllerEpoch returns the value of /controller_epoch and its zkVersion.
	ControllerEpoch() (epoch, epochZkVersion int32, err error)
	// DeleteController deletes /controller, fenced by epochZkVersion (Kafka's
	// triggerControllerMove after a failed failover).
	DeleteController(epochZkVersion int32) error

	// Brokers returns every registered broker with its epoch and endpoints.
	Brokers() (map[int32]LiveBroker, error)
	// Topics returns the children of /brokers/topics.
	Topics() ([]string, error)
	// TopicAssignments returns the assignment of each existing topic in topics; missing
	// topics are absent from the result.
	TopicAssignments(topics []string) (map[string]TopicAssignment, error)
	// PartitionStates reads the state znodes of tps; missing ones are absent.
	PartitionStates(tps []kafka.TopicPartition) (map[kafka.TopicPartition]LeaderAndIsr, error)
	// CreatePartitionStates creates the state znodes (and their parents), fenced. The
	// result holds the new zkVersion (0) or a per-partition error (ErrStateExists).
	CreatePartitionStates(epochZkVersion int32, states map[kafka.TopicPartition]LeaderAndIsr) (map[kafka.TopicPartition]StoreResult, error)
	// UpdatePartitionStates writes state znodes conditionally on each state's ZkVersion,
	// fenced. The result holds the new zkVersion or a per-partition error
	// (ErrZkVersionConflict: re-read and retry).
	UpdatePartitionStates(epochZkVersion int32, states map[kafka.TopicPartition]LeaderAndIsr) (map[kafka.TopicPartition]StoreResult, error)
	// UncleanLeaderElectionEnable returns the topic override of
	// unclean.leader.election.enable, set=false when the topic has none.
	UncleanLeaderElectionEnable(topic string) (enabled, set bool, err error)

	// IsrChangeNotifications lists the children of /isr_change_notification.
	IsrChangeNotifications() ([]string, error)
	// ReadIsrChangeNotification returns the partitions named by one notification.
	ReadIsrChangeNotification(name string) ([]kafka.TopicPartition, error)
	// DeleteIsrChangeNotifications deletes the named notifications (all when names is
	// nil), fenced.
	DeleteIsrChangeNotifications(epochZkVersion int32, names []string) error
	// LogDirEventNotifications lists the children of /log_dir_event_notification.
	LogDirEventNotifications() ([]string, error)
	// ReadLogDirEventNotification returns the broker id and event type (1: log dir
	// failure) of one notification.
	ReadLogDirEventNotification(name string) (broker int32, event int, err error)
	// DeleteLogDirEventNotifications deletes the named notifications (all when names is
	// nil), fenced.
	DeleteLogDirEventNotifications(epochZkVersion int32, names []string) error
	// TopicsMarkedForDeletion lists the children of /admin/delete_topics.
	TopicsMarkedForDeletion() ([]string, error)
	// DeleteTopicDeletionMarks deletes /admin/delete_topics/<t> for each topic, fenced;
	// missing markers are fine.
	DeleteTopicDeletionMarks(epochZkVersion int32, topics []string) error
	// DeleteTopic removes a deleted topic's znodes, fenced: /brokers/topics/<t> with its
	// partition states, /config/topics/<t>, then the deletion marker.
	DeleteTopic(epochZkVersion int32, topic string) error
	// SetTopicID writes topic id into /brokers/topics/<t> (JSON v3) if it has none yet,
	// fenced, and returns the id the znode holds afterwards (Kafka 2.8's processTopicIds).
	SetTopicID(epochZkVersion int32, topic string, id [16]byte) ([16]byte, error)
	// SetTopicAssignment rewrites /brokers/topics/<t>'s partitions and reassignment sets
	// (the topic id is kept), fenced: restorePartitionReplicaAssignment when partitions are
	// added to a topic being deleted, and every reassignment step.
	SetTopicAssignment(epochZkVersion int32, topic string, a TopicAssignment) error
	// PartitionReassignment reads /admin/reassign_partitions (target replicas per
	// partition); empty when there is none.
	PartitionReassignment() (map[kafka.TopicPartition][]int32, error)
	// SetPartitionReassignment rewrites /admin/reassign_partitions, fenced; an empty map
	// deletes it.
	SetPartitionReassignment(epochZkVersion int32, r map[kafka.TopicPartition][]int32) error

	// PreferredReplicaElection returns the partitions in /admin/preferred_replica_election,
	// nil when the znode does not exist.
	PreferredReplicaElection() ([]kafka.TopicPartition, error)
	// DeletePreferredReplicaElection deletes that znode, fenced; a missing one is fine.
	DeletePreferredReplicaElection(epochZkVersion int32) error

	// WatchController calls fn when /controller is created, changed or deleted.
	WatchController(fn func()) (cancel func())
	// WatchBrokers calls fn when the children of /brokers/ids change.
	WatchBrokers(fn func()) (cancel func())
	// WatchBroker calls fn when /brokers/ids/<id> changes (BrokerModifications).
	WatchBroker(id int32, fn func()) (cancel func())
	// WatchTopics calls fn when the children of /brokers/topics change.
	WatchTopics(fn func()) (cancel func())
	// WatchTopic calls fn when /brokers/topics/<topic> changes (PartitionModifications).
	WatchTopic(topic string, fn func()) (cancel func())
	// WatchIsrChangeNotifications calls fn when the children of /isr_change_notification change.
	WatchIsrChangeNotifications(fn func()) (cancel func())
	// WatchLogDirEventNotifications calls fn when the children of
	// /log_dir_event_notification change.
	WatchLogDirEventNotifications(fn func()) (cancel func())
	// WatchTopicDeletions calls fn when the children of /admin/delete_topics change.
	WatchTopicDeletions(fn func()) (cancel func())
	// WatchPartitionReassignment calls fn when /admin/reassign_partitions is created,
	// changed or deleted.
	WatchPartitionReassignment(fn func()) (cancel func())
	// WatchPartitionState calls fn when tp's state znode changes (the ISR of a partition
	// being reassigned).
	WatchPartitionState(tp kafka.TopicPartition, fn func()) (cancel func())
	// WatchPreferredReplicaElection calls fn when /admin/preferred_replica_election is
	// created, changed or deleted.
	WatchPreferredReplicaElection(fn func()) (cancel func())
	// OnNewSession registers fn to run after a new ZooKeeper session is established
	// (after session expiry); it returns a function that unregisters it.
	OnNewSession(fn func()) (cancel func())
}

// StoreResult is the per-partition outcome of a partition state write.
type StoreResult struct {
	ZkVersion int32 // new zkVersion when Err is nil
	Err       error
}

// TopicAssignment is a topic's replica assignment from /brokers/topics/<t>.
type TopicAssignment struct {
	TopicID    [16]byte          // KIP-516 topic id; zero when the znode has none
	Partitions map[int32][]int32 // partition → replicas in preference order
	// Adding and Removing hold a reassignment in progress (KIP-455), per partition.
	Adding, Removing map[int32][]int32
}

// isControllerMoved reports whether err means another controller was elected.
func isControllerMoved(err error) bool { return errors.Is(err, ErrControllerMoved) }

// isZkVersionConflict reports whether err is a conditional-write conflict.
func isZkVersionConflict(err error) bool { return errors.Is(err, ErrZkVersionConflict) }
