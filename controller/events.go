package controller

import (
	"fmt"
	"testing"

	"samsa/kafka"
)

// Every controller event type, and process, the one switch that dispatches them. The
// handlers stay with their concern in on_*.go (and election_zk.go); the queue is in
// event_queue.go. A new event type is added here: to the type blocks, to the name and
// activeOnly tables, and as a case of process, whose default refuses an unknown event (a
// panic under `go test`, an error log in production).

// event is one unit of work for the controller's event goroutine (Kafka's ControllerEvent).
// ZooKeeper watch callbacks, API requests and control-request answers create events and
// enqueue them; only the event goroutine runs process.
type event interface {
	// name is the event's name for logs and metrics (Kafka's ControllerState names).
	name() string
	// activeOnly reports whether the event is a controller duty, dropped unless this broker
	// is the active controller (Kafka's ControllerEvent handlers that start with
	// `if (!isActive) return`).
	activeOnly() bool
}

// Election and session events, handled whether or not this broker is the controller.
type (
	// startupEvent registers the /controller watch and runs the first election.
	startupEvent struct{}
	// controllerChangeEvent: /controller was created, changed or deleted. Resign if another
	// broker now holds it; elect if nobody does (Kafka's ControllerChange and Reelect).
	controllerChangeEvent struct{}
	// sessionRenewedEvent: a new ZooKeeper session replaced an expired one. The ephemeral
	// /controller of the old session is gone: resign and elect again (Kafka's
	// RegisterBrokerAndReelect after Expire).
	sessionRenewedEvent struct{}
)

// Request events: an API request handed to the event goroutine. Each handler answers
// ErrNotController itself when this broker is not the active controller.
type (
	// controlledShutdownEvent carries a ControlledShutdown request (on_controlled_shutdown.go).
	controlledShutdownEvent struct {
		brokerID    int32
		brokerEpoch int64
		reply       chan controlledShutdownResult // capacity 1
	}
	// electLeadersEvent carries an ElectLeaders request (on_preferred_election.go).
	electLeadersEvent struct {
		typ   ElectionType
		tps   []kafka.TopicPartition // nil: every partition
		reply chan electLeadersResult
	}
	// alterReassignmentsEvent carries an AlterPartitionReassignments request; a nil target
	// cancels (on_reassignment.go).
	alterReassignmentsEvent struct {
		targets map[kafka.TopicPartition][]int32
		reply   chan alterReassignmentsResult
	}
	// listReassignmentsEvent carries a ListPartitionReassignments request (on_reassignment.go).
	listReassignmentsEvent struct {
		tps   []kafka.TopicPartition // nil: all
		reply chan listReassignmentsResult
	}
	// alterIsrEvent carries an AlterIsr request (on_alter_isr.go).
	alterIsrEvent struct {
		brokerID    int32
		brokerEpoch int64
		changes     map[kafka.TopicPartition]IsrChange
		reply       chan alterIsrResult
	}
)

// Controller-duty events, ignored unless this broker is the active controller.
type (
	// brokerChangeEvent: the children of /brokers/ids changed (on_broker_change.go).
	brokerChangeEvent struct{}
	// brokerModificationsEvent: /brokers/ids/<id> changed (endpoints, rack or features).
	brokerModificationsEvent struct{ id int32 }
	// topicChangeEvent: the children of /brokers/topics changed (on_topic_change.go).
	topicChangeEvent struct{}
	// partitionModificationsEvent: /brokers/topics/<topic> changed (partitions added).
	partitionModificationsEvent struct{ topic string }
	// isrChangeNotificationEvent: the children of /isr_change_notification changed
	// (on_isr_change.go).
	isrChangeNotificationEvent struct{}
	// logDirEventNotificationEvent: the children of /log_dir_event_notification changed
	// (on_log_dir_failure.go).
	logDirEventNotificationEvent struct{}
	// leaderAndIsrResponseEvent: a broker answered a LeaderAndIsr without a top-level error
	// (Kafka's LeaderAndIsrResponseReceived). brokerEpoch is the epoch of the registration
	// the request went to and controllerEpoch the epoch it was sent under; answers to an
	// older registration or tenure are ignored.
	leaderAndIsrResponseEvent struct {
		broker          int32
		brokerEpoch     int64
		controllerEpoch int32
		outcome         leaderAndIsrOutcome
	}
	// topicDeletionEvent: the children of /admin/delete_topics changed (on_topic_deletion.go).
	topicDeletionEvent struct{}
	// replicaDeletionResponseEvent: a broker answered a StopReplica with delete=true
	// (Kafka's TopicDeletionStopReplicaResponseReceived); nil errors are deleted replicas.
	replicaDeletionResponseEvent struct {
		broker  int32
		results map[kafka.TopicPartition]error
	}
	// partitionReassignmentEvent: /admin/reassign_partitions changed (on_reassignment.go).
	partitionReassignmentEvent struct{}
	// reassignmentIsrChangeEvent: the state znode of a partition being reassigned changed.
	reassignmentIsrChangeEvent struct{ tp kafka.TopicPartition }
	// preferredReplicaElectionEvent: /admin/preferred_replica_election changed
	// (on_preferred_election.go).
	preferredReplicaElectionEvent struct{}
	// autoRebalanceEvent: the leader-imbalance timer of tenure fired.
	autoRebalanceEvent struct{ tenure uint64 }
)

// funcEvent runs fn on the event goroutine; used by Sync and tests to observe or change the
// controller's state without locks. done is closed afterwards.
type funcEvent struct {
	fn   func()
	done chan struct{}
}

func (startupEvent) name() string                  { return "Startup" }
func (controllerChangeEvent) name() string         { return "ControllerChange" }
func (sessionRenewedEvent) name() string           { return "RegisterBrokerAndReelect" }
func (controlledShutdownEvent) name() string       { return "ControlledShutdown" }
func (electLeadersEvent) name() string             { return "ReplicaLeaderElection" }
func (alterReassignmentsEvent) name() string       { return "ApiPartitionReassignment" }
func (listReassignmentsEvent) name() string        { return "ListPartitionReassignments" }
func (alterIsrEvent) name() string                 { return "AlterIsrReceived" }
func (brokerChangeEvent) name() string             { return "BrokerChange" }
func (brokerModificationsEvent) name() string      { return "BrokerModifications" }
func (topicChangeEvent) name() string              { return "TopicChange" }
func (partitionModificationsEvent) name() string   { return "PartitionModifications" }
func (isrChangeNotificationEvent) name() string    { return "IsrChangeNotification" }
func (logDirEventNotificationEvent) name() string  { return "LogDirEventNotification" }
func (leaderAndIsrResponseEvent) name() string     { return "LeaderAndIsrResponseReceived" }
func (topicDeletionEvent) name() string            { return "TopicDeletion" }
func (partitionReassignmentEvent) name() string    { return "ZkPartitionReassignment" }
func (reassignmentIsrChangeEvent) name() string    { return "PartitionReassignmentIsrChange" }
func (preferredReplicaElectionEvent) name() string { return "ReplicaLeaderElection" }
func (autoRebalanceEvent) name() string            { return "AutoPreferredReplicaLeaderElection" }
func (funcEvent) name() string                     { return "Sync" }
func (replicaDeletionResponseEvent) name() string {
	return "TopicDeletionStopReplicaResponseReceived"
}

func (startupEvent) activeOnly() bool                  { return false }
func (controllerChangeEvent) activeOnly() bool         { return false }
func (sessionRenewedEvent) activeOnly() bool           { return false }
func (controlledShutdownEvent) activeOnly() bool       { return false }
func (electLeadersEvent) activeOnly() bool             { return false }
func (alterReassignmentsEvent) activeOnly() bool       { return false }
func (listReassignmentsEvent) activeOnly() bool        { return false }
func (alterIsrEvent) activeOnly() bool                 { return false }
func (funcEvent) activeOnly() bool                     { return false }
func (brokerChangeEvent) activeOnly() bool             { return true }
func (brokerModificationsEvent) activeOnly() bool      { return true }
func (topicChangeEvent) activeOnly() bool              { return true }
func (partitionModificationsEvent) activeOnly() bool   { return true }
func (isrChangeNotificationEvent) activeOnly() bool    { return true }
func (logDirEventNotificationEvent) activeOnly() bool  { return true }
func (leaderAndIsrResponseEvent) activeOnly() bool     { return true }
func (topicDeletionEvent) activeOnly() bool            { return true }
func (replicaDeletionResponseEvent) activeOnly() bool  { return true }
func (partitionReassignmentEvent) activeOnly() bool    { return true }
func (reassignmentIsrChangeEvent) activeOnly() bool    { return true }
func (preferredReplicaElectionEvent) activeOnly() bool { return true }
func (autoRebalanceEvent) activeOnly() bool            { return true }

// process handles one event. Controller duties run only while active; ErrControllerMoved
// from any handler makes this broker resign. The switch names every event type; its default
// is a programming error (an event added without a case).
func (c *Controller) process(ev event) {
	if ev.activeOnly() && !c.active.Load() {
		return
	}
	var err error
	switch e := ev.(type) {
	case funcEvent:
		e.fn()
		close(e.done)
		return
	case startupEvent, controllerChangeEvent:
		err = c.processControllerChange()
	case sessionRenewedEvent:
		err = c.processSessionRenewed()
	case controlledShutdownEvent:
		err = c.processControlledShutdown(e)
	case electLeadersEvent:
		err = c.processElectLeaders(e)
	case alterReassignmentsEvent:
		err = c.processAlterReassignments(e)
	case listReassignmentsEvent:
		c.processListReassignments(e)
	case alterIsrEvent:
		err = c.processAlterIsr(e)
	case brokerChangeEvent:
		err = c.processBrokerChange()
	case brokerModificationsEvent:
		err = c.processBrokerModification(e.id)
	case topicChangeEvent:
		err = c.processTopicChange()
	case partitionModificationsEvent:
		err = c.processPartitionModifications(e.topic)
	case isrChangeNotificationEvent:
		err = c.processIsrChangeNotification()
	case logDirEventNotificationEvent:
		err = c.processLogDirEventNotification()
	case leaderAndIsrResponseEvent:
		err = c.processLeaderAndIsrResponse(e)
	case topicDeletionEvent:
		err = c.processTopicDeletion()
	case replicaDeletionResponseEvent:
		err = c.processReplicaDeletionResponse(e.broker, e.results)
	case partitionReassignmentEvent:
		_, err = c.processZkPartitionReassignment()
	case reassignmentIsrChangeEvent:
		err = c.maybeCompleteReassignment(e.tp)
	case preferredReplicaElectionEvent:
		err = c.processPreferredReplicaElection()
	case autoRebalanceEvent:
		err = c.processAutoRebalance(e.tenure)
	default:
		c.unknownEvent(ev)
		return
	}
	c.finishEvent(ev, err)
}

// unknownEvent reports an event type process has no case for: a panic in test binaries, so
// the omission fails the test that sends it; an error log otherwise, as dropping one event
// is better than taking the broker down.
func (c *Controller) unknownEvent(ev event) {
	msg := fmt.Sprintf("controller: no handler for event %T (%s)", ev, ev.name())
	if testing.Testing() {
		panic(msg)
	}
	c.log.WithField("event", ev.name()).Error(msg)
}
