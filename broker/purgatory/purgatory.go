package purgatory

// Purgatory: waiters parked per kafka.TopicPartition until a check passes or a deadline ends.

import (
	"context"
	"errors"
	"sync"
	"sync/atomic"
	"time"

	"samsa/kafka"
)

// ErrTimeout is returned by Wait when the deadline passes before the check
// succeeds.
var ErrTimeout = errors.New("purgatory: timed out")

// Purgatory holds the parked waiters of one kind of delayed operation
// (for example produce or fetch), keyed by topic-partition.
type Purgatory struct {
	name string // immutable after New

	mu struct {
		sync.Mutex
		watchers map[kafka.TopicPartition]map[*waiter]struct{}
	}
	parked atomic.Int64 // number of goroutines inside Wait
	// expired counts waits that ended by deadline (Kafka's ExpiresPerSec).
	expired atomic.Int64
	// observer, if set, hears every Notify and NotifyAll (SetObserver).
	observer atomic.Pointer[Observer]
}

// Observer hears of the changes a purgatory is told about, whether or not
// a waiter is parked: the fetch session cache (broker/fetchsession) uses
// it to know which partitions changed between two fetches of a session.
// Both functions must not block.
type Observer struct {
	Changed    func(kafka.TopicPartition)
	ChangedAll func()
}

// SetObserver makes o hear every later Notify and NotifyAll.
func (p *Purgatory) SetObserver(o Observer) { p.observer.Store(&o) }

type waiter struct {
	wake  chan struct{} // buffer 1; a pending wake-up
	timer *time.Timer   // the deadline timer; nil until first needed, stopped between uses
}

// waiters recycles waiters with their channel and timer: a purgatory sees a Wait per acks=all
// produce and per parked fetch, thousands a second. A waiter goes back only after unwatch, so
// no Notify can still reach it; putWaiter drains a wake-up left in its channel.
var waiters = sync.Pool{New: func() any { return &waiter{wake: make(chan struct{}, 1)} }}

func putWaiter(w *waiter) {
	if w.timer != nil {
		w.timer.Stop() // Go 1.23+ timers: no stale tick survives Stop
	}
	select {
	case <-w.wake:
	default:
	}
	waiters.Put(w)
}

// New returns an empty purgatory. name is used in metric names and logs
// ("Produce", "Fetch").
func New(name string) *Purgatory {
	p := &Purgatory{name: name}
	p.mu.watchers = make(map[kafka.TopicPartition]map[*waiter]struct{})
	return p
}

// Name returns the name given to New.
func (p *Purgatory) Name() string { return p.name }

// Size returns the number of parked waiters (Kafka's PurgatorySize).
func (p *Purgatory) Size() int64 { return p.parked.Load() }

// Expired returns how many waits have ended by their deadline.
func (p *Purgatory) Expired() int64 { return p.expired.Load() }

// Wait blocks until check returns true, deadline passes or ctx ends. check
// runs once immediately and again after every Notify for one of keys; it must
// not block and is never called concurrently for the same Wait. It returns
// nil when check succeeded, ErrTimeout at the deadline, or ctx's error.
// A zero deadline means no deadline (only ctx ends the wait).
//
// The waiter is registered before the first check, so a Notify that races
// with the first check is never lost.
func (p *Purgatory) Wait(ctx context.Context, deadline time.Time, keys []kafka.TopicPartition, check func() bool) error {
	w := waiters.Get().(*waiter)
	p.watch(w, keys)
	defer func() {
		p.unwatch(w, keys)
		putWaiter(w)
	}()
	if check() {
		return nil
	}
	return p.parkUntil(ctx, w, deadline, w.wake, check)
}

// WaitChan is Wait for a waiter that is woken through its own channel
// rather than by keys (a fetch session's parked fetch: the session is told
// of its partitions' changes through the Observer, so the fetch registers
// no key): check runs once immediately and again on every receive from
// wake; results as Wait's.
func (p *Purgatory) WaitChan(ctx context.Context, deadline time.Time, wake <-chan struct{}, check func() bool) error {
	if check() {
		return nil
	}
	// Only the pooled waiter's timer is used: it watches no key, so no
	// Notify reaches its channel.
	w := waiters.Get().(*waiter)
	defer putWaiter(w)
	return p.parkUntil(ctx, w, deadline, wake, check)
}

// parkUntil arms w's timer for deadline (none for a zero deadline) and
// parks (park); a deadline already passed ends the wait at once with
// ErrTimeout, counted as expired. The first check has already failed.
func (p *Purgatory) parkUntil(ctx context.Context, w *waiter, deadline time.Time, wake <-chan struct{}, check func() bool) error {
	var timeout <-chan time.Time
	if !deadline.IsZero() {
		d := time.Until(deadline)
		if d <= 0 {
			p.expired.Add(1)
			return ErrTimeout
		}
		if w.timer == nil {
			w.timer = time.NewTimer(d)
		} else {
			w.timer.Reset(d)
		}
		timeout = w.timer.C
	}
	return p.park(ctx, timeout, wake, check)
}

// park counts a parked waiter until check passes on a wake-up, timeout
// fires (one last check) or ctx ends.
func (p *Purgatory) park(ctx context.Context, timeout <-chan time.Time, wake <-chan struct{}, check func() bool) error {
	p.parked.Add(1)
	defer p.parked.Add(-1)
	for {
		select {
		case <-wake:
			if check() {
				return nil
			}
		case <-timeout:
			// One last look: the event may have happened without a
			// Notify reaching us yet.
			if check() {
				return nil
			}
			p.expired.Add(1)
			return ErrTimeout
		case <-ctx.Done():
			return ctx.Err()
		}
	}
}

// Notify wakes every waiter watching k and tells the observer. It never
// blocks.
func (p *Purgatory) Notify(k kafka.TopicPartition) {
	if o := p.observer.Load(); o != nil {
		o.Changed(k)
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	for w := range p.mu.watchers[k] {
		select {
		case w.wake <- struct{}{}:
		default: // a wake-up is already pending
		}
	}
}

// NotifyAll wakes every waiter (used on shutdown and leadership changes that
// touch many partitions).
func (p *Purgatory) NotifyAll() {
	if o := p.observer.Load(); o != nil {
		o.ChangedAll()
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	for _, ws := range p.mu.watchers {
		for w := range ws {
			select {
			case w.wake <- struct{}{}:
			default:
			}
		}
	}
}

// Watched returns the number of waiters registered on k (for tests and metrics).
func (p *Purgatory) Watched(k kafka.TopicPartition) int {
	p.mu.Lock()
	defer p.mu.Unlock()
	return len(p.mu.watchers[k])
}

func (p *Purgatory) watch(w *waiter, keys []kafka.TopicPartition) {
	p.mu.Lock()
	defer p.mu.Unlock()
	for _, k := range keys {
		ws := p.mu.watchers[k]
		if ws == nil {
			ws = make(map[*waiter]struct{})
			p.mu.watchers[k] = ws
		}
		ws[w] = struct{}{}
	}
}

func (p *Purgatory) unwatch(w *waiter, keys []kafka.TopicPartition) {
	p.mu.Lock()
	defer p.mu.Unlock()
	for _, k := range keys {
		ws := p.mu.watchers[k]
		delete(ws, w)
		if len(ws) == 0 {
			delete(p.mu.watchers, k)
		}
	}
}
