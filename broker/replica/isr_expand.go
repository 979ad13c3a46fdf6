package replica

import (
	"context"
	"sync"

	"samsa/kafka"
)

// ISR expansion off the fetch path.
//
// A follower that catches up rejoins the ISR with a conditional write of
// the partition's state znode (pre-AlterIsr Kafka, what Samsa's ZooKeeper
// mode does). Written inline while answering the follower's fetch, as
// before, a restarted broker following 6,700 partitions waited for 6,700
// ZooKeeper round trips in a row inside its leaders' fetch handlers (36 s
// on the shared machine). The fetch path now only queues the partition;
// isrExpandWorkers goroutines write the expansions concurrently (the
// ZooKeeper client pipelines them) and wake the purgatories when the high
// watermark moves. Each expansion still re-checks, under the partition's
// write lock, that the follower qualifies (Kafka's maybeExpandIsr), so a
// queued expansion that went stale does nothing. Kafka 2.8 with AlterIsr
// (KIP-497) is asynchronous too.

// isrExpandWorkers bounds the concurrent ISR expansion writes.
const isrExpandWorkers = 32

type expandKey struct {
	tp kafka.TopicPartition
	id int32
}

// isrExpander is the queue of expansions to try; a (partition, follower)
// is queued at most once at a time.
type isrExpander struct {
	mu struct {
		sync.Mutex
		pending map[expandKey]struct{}
		queue   []expandKey
	}
	wake chan struct{} // buffer 1
}

func (e *isrExpander) init() {
	e.mu.pending = make(map[expandKey]struct{})
	e.wake = make(chan struct{}, 1)
}

func (e *isrExpander) signal() {
	select {
	case e.wake <- struct{}{}:
	default:
	}
}

// push queues k unless it is queued or being tried.
func (e *isrExpander) push(k expandKey) {
	e.mu.Lock()
	if _, ok := e.mu.pending[k]; ok {
		e.mu.Unlock()
		return
	}
	e.mu.pending[k] = struct{}{}
	e.mu.queue = append(e.mu.queue, k)
	e.mu.Unlock()
	e.signal()
}

// pop takes the next key; it stays pending until done.
func (e *isrExpander) pop() (expandKey, bool) {
	e.mu.Lock()
	defer e.mu.Unlock()
	if len(e.mu.queue) == 0 {
		return expandKey{}, false
	}
	k := e.mu.queue[0]
	e.mu.queue[0] = expandKey{}
	e.mu.queue = e.mu.queue[1:]
	if len(e.mu.queue) > 0 {
		e.signal() // more work: wake another worker
	}
	return k, true
}

func (e *isrExpander) done(k expandKey) {
	e.mu.Lock()
	delete(e.mu.pending, k)
	e.mu.Unlock()
}

// startIsrExpanders starts the expansion workers; they stop with ctx.
func (m *Manager) startIsrExpanders(ctx context.Context) {
	m.expander.init()
	for range isrExpandWorkers {
		m.wg.Add(1)
		go func() {
			defer m.wg.Done()
			m.expandLoop(ctx)
		}()
	}
}

// requestExpand queues an ISR expansion of follower id on tp.
func (m *Manager) requestExpand(tp kafka.TopicPartition, id int32) {
	if m.cfg.Isr == nil {
		return
	}
	m.expander.push(expandKey{tp, id})
}

func (m *Manager) expandLoop(ctx context.Context) {
	for {
		k, ok := m.expander.pop()
		if !ok {
			select {
			case <-m.expander.wake:
				continue
			case <-ctx.Done():
				return
			}
		}
		if p := m.Partition(k.tp); p != nil && p.maybeExpandIsr(k.id) {
			m.notify(k.tp)
		}
		m.expander.done(k)
		if ctx.Err() != nil {
			return
		}
	}
}
