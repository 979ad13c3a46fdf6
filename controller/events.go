package controller

import (
	"sync"
	"time"

	"samsa/kafka"
)

// event is one unit of work for the controller's event goroutine (Kafka's ControllerEvent).
// ZooKeeper watch callbacks create events and enqueue them; only the event goroutine runs
// process.
type event interface {
	// name is the event's name for logs and metrics (Kafka's ControllerState names).
	name() string
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

// Controller-duty events, ignored unless this broker is the active controller.
type (
	// brokerChangeEvent: the children of /brokers/ids changed.
	brokerChangeEvent struct{}
	// brokerModificationsEvent: /brokers/ids/<id> changed (endpoints, rack or features).
	brokerModificationsEvent struct{ id int32 }
	// topicChangeEvent: the children of /brokers/topics changed.
	topicChangeEvent struct{}
	// partitionModificationsEvent: /brokers/topics/<topic> changed (partitions added).
	partitionModificationsEvent struct{ topic string }
	// isrChangeNotificationEvent: the children of /isr_change_notification changed.
	isrChangeNotificationEvent struct{}
	// topicDeletionEvent: the children of /admin/delete_topics changed.
	topicDeletionEvent struct{}
	// replicaDeletionResponseEvent: a broker answered a StopReplica with delete=true
	// (Kafka's TopicDeletionStopReplicaResponseReceived); nil errors are deleted replicas.
	replicaDeletionResponseEvent struct {
		broker  int32
		results map[kafka.TopicPartition]error
	}
)

// funcEvent runs fn on the event goroutine; used by Sync and tests to observe or change the
// controller's state without locks. done is closed afterwards.
type funcEvent struct {
	fn   func()
	done chan struct{}
}

func (startupEvent) name() string                { return "Startup" }
func (controllerChangeEvent) name() string       { return "ControllerChange" }
func (sessionRenewedEvent) name() string         { return "RegisterBrokerAndReelect" }
func (brokerChangeEvent) name() string           { return "BrokerChange" }
func (brokerModificationsEvent) name() string    { return "BrokerModifications" }
func (topicChangeEvent) name() string            { return "TopicChange" }
func (partitionModificationsEvent) name() string { return "PartitionModifications" }
func (isrChangeNotificationEvent) name() string  { return "IsrChangeNotification" }
func (topicDeletionEvent) name() string          { return "TopicDeletion" }
func (funcEvent) name() string                   { return "Sync" }
func (replicaDeletionResponseEvent) name() string {
	return "TopicDeletionStopReplicaResponseReceived"
}

// queuedEvent is an event with the time it was enqueued (for EventQueueTimeMs).
type queuedEvent struct {
	ev event
	at time.Time
}

// eventQueue is the controller's unbounded event queue: a mutex-protected slice plus a
// signal channel, so that put never blocks the ZooKeeper goroutine (STYLE S6.6).
type eventQueue struct {
	signal chan struct{} // capacity 1; a value means "the slice may be non-empty"
	mu     struct {
		sync.Mutex
		items []queuedEvent // guarded by mu
	}
}

func newEventQueue() *eventQueue {
	return &eventQueue{signal: make(chan struct{}, 1)}
}

// put appends ev and signals the consumer. It never blocks.
func (q *eventQueue) put(ev event, now time.Time) {
	q.mu.Lock()
	q.mu.items = append(q.mu.items, queuedEvent{ev: ev, at: now})
	q.mu.Unlock()
	select {
	case q.signal <- struct{}{}:
	default:
	}
}

// takeAll removes and returns every queued event, oldest first.
func (q *eventQueue) takeAll() []queuedEvent {
	q.mu.Lock()
	defer q.mu.Unlock()
	items := q.mu.items
	q.mu.items = nil
	return items
}

// clear drops every queued event (Kafka clears the queue on session expiry and shutdown).
func (q *eventQueue) clear() {
	q.mu.Lock()
	q.mu.items = nil
	q.mu.Unlock()
}

// size returns the number of queued events.
func (q *eventQueue) size() int {
	q.mu.Lock()
	defer q.mu.Unlock()
	return len(q.mu.items)
}
