package storage

import (
	"container/heap"
	"sync"
	"time"
)

// delayQueue runs functions after a delay on one goroutine owned by the
// Manager (segment files renamed ".deleted" are removed this way after
// file.delete.delay.ms). It uses real timers: the delay is about letting
// in-flight reads finish, which happen in real time.
type delayQueue struct {
	wake chan struct{} // capacity 1; nudges run when an earlier deadline arrives

	mu struct {
		sync.Mutex
		items  delayHeap
		closed bool
	}
}

type delayItem struct {
	at time.Time
	fn func()
}

type delayHeap []delayItem

func (h delayHeap) Len() int           { return len(h) }
func (h delayHeap) Less(i, j int) bool { return h[i].at.Before(h[j].at) }
func (h delayHeap) Swap(i, j int)      { h[i], h[j] = h[j], h[i] }
func (h *delayHeap) Push(x any)        { *h = append(*h, x.(delayItem)) }
func (h *delayHeap) Pop() any {
	old := *h
	it := old[len(old)-1]
	*h = old[:len(old)-1]
	return it
}

func newDelayQueue() *delayQueue { return &delayQueue{wake: make(chan struct{}, 1)} }

// schedule queues fn to run after d. After close, fn runs at once.
func (q *delayQueue) schedule(d time.Duration, fn func()) {
	q.mu.Lock()
	if q.mu.closed {
		q.mu.Unlock()
		fn()
		return
	}
	heap.Push(&q.mu.items, delayItem{at: time.Now().Add(d), fn: fn})
	q.mu.Unlock()
	select {
	case q.wake <- struct{}{}:
	default:
	}
}

// run executes due functions until quit closes, then runs every remaining
// function (the Manager is shutting down; nobody reads any more).
func (q *delayQueue) run(quit <-chan struct{}) {
	timer := time.NewTimer(time.Hour)
	defer timer.Stop()
	for {
		q.mu.Lock()
		var due []func()
		now := time.Now()
		for q.mu.items.Len() > 0 && !q.mu.items[0].at.After(now) {
			due = append(due, heap.Pop(&q.mu.items).(delayItem).fn)
		}
		wait := time.Hour
		if q.mu.items.Len() > 0 {
			wait = q.mu.items[0].at.Sub(now)
		}
		q.mu.Unlock()
		for _, fn := range due {
			fn()
		}
		timer.Reset(wait)
		select {
		case <-quit:
			q.drain()
			return
		case <-q.wake:
		case <-timer.C:
		}
	}
}

// drain marks the queue closed and runs every pending function.
func (q *delayQueue) drain() {
	q.mu.Lock()
	q.mu.closed = true
	items := q.mu.items
	q.mu.items = nil
	q.mu.Unlock()
	for _, it := range items {
		it.fn()
	}
}
