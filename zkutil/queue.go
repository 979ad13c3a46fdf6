package zkutil

import "sync"

// dispatcher runs watch callbacks and session hooks, in order, on one
// goroutine owned by the Client. Producers never block: the queue is an
// unbounded slice guarded by a mutex plus a one-slot signal channel (the
// nats ipQueue shape), so go-zookeeper's event goroutine is never stalled.
type dispatcher struct {
	signal chan struct{} // capacity 1; a send means "the slice may be non-empty"
	mu     struct {
		sync.Mutex
		pending []func() // guarded by mu
	}
}

func newDispatcher() *dispatcher {
	return &dispatcher{signal: make(chan struct{}, 1)}
}

// enqueue adds fn to the queue and returns at once.
func (d *dispatcher) enqueue(fn func()) {
	d.mu.Lock()
	d.mu.pending = append(d.mu.pending, fn)
	d.mu.Unlock()
	select {
	case d.signal <- struct{}{}:
	default:
	}
}

// run executes queued functions until quit is closed.
func (d *dispatcher) run(quit <-chan struct{}) {
	for {
		select {
		case <-quit:
			return
		case <-d.signal:
		}
		d.mu.Lock()
		batch := d.mu.pending
		d.mu.pending = nil
		d.mu.Unlock()
		for _, fn := range batch {
			select {
			case <-quit:
				return
			default:
			}
			fn()
		}
	}
}
