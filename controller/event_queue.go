package controller

import (
	"sync"
	"time"
)

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
