package zkutil

import (
	"cmp"
	"slices"
	"sync"
	"time"

	"github.com/go-zookeeper/zk"
	"github.com/sirupsen/logrus"
)

// dispatcher delivers ZooKeeper watch events to their callbacks in
// ZooKeeper's order, on one goroutine owned by the Client: it is the one
// ordered path from go-zookeeper to the consumers. go-zookeeper hands every watch event to Client.onEvent on its receive
// goroutine, in the order the server sent them (ZooKeeper's order); route
// appends a task per matching watch to pending under mu and returns, so the
// receive loop never waits for zkutil. The dispatcher goroutine (run) takes
// everything pending as one batch, re-arms the ZooKeeper watches the batch
// consumed (in parallel, one request per watched path and kind), and then
// calls the callbacks one at a time in the batch's order. This is Kafka's
// ZooKeeperClient, whose watcher runs the handlers on ZooKeeper's single
// event thread, with the re-arm that Kafka's handlers do by re-reading.
//
// Bounded: a watch has at most one pending task. An event for a watch whose
// callback is still queued merges into that task, which keeps its earlier
// place: the callback has not run yet, so when it runs it reads the newer
// state anyway, and every event before it in ZooKeeper's order was handed
// over before it. pending therefore holds at most one task per registered
// watch, plus one session task. A slow or stuck callback delays the ones
// after it, never loses them; run warns when one takes over slowCallback.
type dispatcher struct {
	signal chan struct{} // capacity 1; a send means "pending may be non-empty"
	log    logrus.FieldLogger
	mu     struct {
		sync.Mutex
		pending    []task                // guarded by mu; in ZooKeeper's order
		watches    map[watchKey][]*watch // guarded by mu; per key in registration order
		nextSeq    uint64                // guarded by mu; registration counter
		sessionIdx int                   // guarded by mu; index of the pending session task, -1 if none
		armLater   map[watchKey]bool     // guarded by mu; keys with an armLater goroutine
	}
}

// task is one entry of the dispatcher's queue.
type task struct {
	w       *watch // call w.fn unless the watch was cancelled; or nil
	rearm   bool   // w's ZooKeeper watch fired: arm it again before the batch's callbacks run
	fn      func() // when w is nil: call fn (the session hooks)
	session bool   // fn runs the hooks of a new session: every persistent watch fires after it
}

// slowCallback is the duration past which run logs a callback as slow: it
// holds back every event after it.
const slowCallback = time.Second

func newDispatcher(log logrus.FieldLogger) *dispatcher {
	d := &dispatcher{signal: make(chan struct{}, 1), log: log}
	d.mu.watches = make(map[watchKey][]*watch)
	d.mu.armLater = make(map[watchKey]bool)
	d.mu.sessionIdx = -1
	return d
}

func (d *dispatcher) wake() {
	select {
	case d.signal <- struct{}{}:
	default:
	}
}

// add registers w: from now on route queues its callback for w's events.
func (d *dispatcher) add(w *watch) {
	d.mu.Lock()
	d.mu.nextSeq++
	w.seq = d.mu.nextSeq
	w.pendingIdx = -1
	d.mu.watches[w.key] = append(d.mu.watches[w.key], w)
	d.mu.Unlock()
}

// remove unregisters w and stops its callback, also a queued one. It is
// idempotent.
func (d *dispatcher) remove(w *watch) {
	w.stopped.Store(true)
	d.mu.Lock()
	defer d.mu.Unlock()
	ws := d.mu.watches[w.key]
	if i := slices.Index(ws, w); i >= 0 {
		ws = slices.Delete(ws, i, i+1)
	}
	if len(ws) == 0 {
		delete(d.mu.watches, w.key)
	} else {
		d.mu.watches[w.key] = ws
	}
}

// queue adds a call of w's callback (merging into one already pending).
func (d *dispatcher) queue(w *watch, rearm bool) {
	d.mu.Lock()
	d.queueLocked(w, rearm)
	d.mu.Unlock()
	d.wake()
}

func (d *dispatcher) queueLocked(w *watch, rearm bool) {
	if i := w.pendingIdx; i >= 0 {
		d.mu.pending[i].rearm = d.mu.pending[i].rearm || rearm
		return
	}
	w.pendingIdx = len(d.mu.pending)
	d.mu.pending = append(d.mu.pending, task{w: w, rearm: rearm})
}

// queueKey queues a call of every watch of key (after armLater armed it).
func (d *dispatcher) queueKey(key watchKey) {
	d.mu.Lock()
	for _, w := range d.mu.watches[key] {
		d.queueLocked(w, false)
	}
	d.mu.Unlock()
	d.wake()
}

// queueSession adds the new-session task (hooks, then every persistent
// watch); a second expiry before it ran merges into it.
func (d *dispatcher) queueSession(hooks func()) {
	d.mu.Lock()
	if d.mu.sessionIdx < 0 {
		d.mu.sessionIdx = len(d.mu.pending)
		d.mu.pending = append(d.mu.pending, task{fn: hooks, session: true})
	}
	d.mu.Unlock()
	d.wake()
}

// route queues the callbacks of every watch that ev (a ZooKeeper watch event
// for ev.Path) fires. It runs on go-zookeeper's receive goroutine, sometimes
// under go-zookeeper's watcher lock: it only takes mu.
func (d *dispatcher) route(ev zk.Event) {
	queued := false
	d.mu.Lock()
	for _, kind := range []watchKind{watchData, watchChildren, watchOnce} {
		if !kind.firedBy(ev) {
			continue
		}
		key := watchKey{path: ev.Path, kind: kind}
		for _, w := range d.mu.watches[key] {
			d.queueLocked(w, kind != watchOnce)
			queued = true
		}
		if kind == watchOnce {
			delete(d.mu.watches, key) // one-shot: fired
		}
	}
	d.mu.Unlock()
	if queued {
		d.wake()
	}
}

// take removes and returns everything pending.
func (d *dispatcher) take() []task {
	d.mu.Lock()
	defer d.mu.Unlock()
	batch := d.mu.pending
	d.mu.pending = nil
	d.mu.sessionIdx = -1
	for _, t := range batch {
		if t.w != nil {
			t.w.pendingIdx = -1
		}
	}
	return batch
}

// persistent returns every registered persistent watch in registration order.
func (d *dispatcher) persistent() []*watch {
	d.mu.Lock()
	var ws []*watch
	for key, kw := range d.mu.watches {
		if key.kind != watchOnce {
			ws = append(ws, kw...)
		}
	}
	d.mu.Unlock()
	slices.SortFunc(ws, func(a, b *watch) int { return cmp.Compare(a.seq, b.seq) })
	return ws
}

// live reports whether key still has a registered watch.
func (d *dispatcher) live(key watchKey) bool {
	d.mu.Lock()
	defer d.mu.Unlock()
	return len(d.mu.watches[key]) > 0
}

// claimArmLater reports whether the caller may start key's armLater
// goroutine (none runs yet); doneArmLater releases the claim.
func (d *dispatcher) claimArmLater(key watchKey) bool {
	d.mu.Lock()
	defer d.mu.Unlock()
	if d.mu.armLater[key] {
		return false
	}
	d.mu.armLater[key] = true
	return true
}

func (d *dispatcher) doneArmLater(key watchKey) {
	d.mu.Lock()
	delete(d.mu.armLater, key)
	d.mu.Unlock()
}

// run executes batches until quit is closed. prepare turns a batch into the
// tasks to run and re-arms what they need before any of them runs.
func (d *dispatcher) run(quit <-chan struct{}, prepare func([]task) []task) {
	for {
		select {
		case <-quit:
			return
		case <-d.signal:
		}
		for _, t := range prepare(d.take()) {
			select {
			case <-quit:
				return
			default:
			}
			d.call(t)
		}
	}
}

// call runs one task's callback and warns when it was slow.
func (d *dispatcher) call(t task) {
	fn, path := t.fn, ""
	if t.w != nil {
		if t.w.stopped.Load() {
			return
		}
		fn, path = t.w.fn, t.w.path
	}
	start := time.Now()
	fn()
	if took := time.Since(start); took > slowCallback {
		d.log.WithField("path", path).WithField("took", took.String()).
			Warn("slow zookeeper watch callback or session hook: it holds back every later watch event")
	}
}
