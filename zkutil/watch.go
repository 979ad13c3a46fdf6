package zkutil

import (
	"errors"
	"slices"
	"sync/atomic"
	"time"

	"github.com/go-zookeeper/zk"
)

// Persistent watches on top of ZooKeeper's one-shot watches (Kafka
// ZooKeeperClient's ZNodeChangeHandler / ZNodeChildChangeHandler, re-registered
// after each event), delivered in ZooKeeper's order by the dispatcher
// (queue.go).
//
// A watch is a registration (path, kind, callback) in the dispatcher plus the
// one-shot ZooKeeper watch zkutil keeps armed for that path and kind. When the
// ZooKeeper watch fires, the dispatcher arms it again and then calls the
// callback: because the re-arm comes first, a callback that re-reads the
// znode never misses a later change. Watches of one path and kind share one
// ZooKeeper watch (ZooKeeper keeps one per session and path anyway).
//
// A callback may run without a change (after a session expiry every
// persistent watch fires once; a watch registered while an older event for
// its path is on its way sees that event too); it never misses one.
//
// The watch is armed before WatchX returns, and fn is not called for the
// state at that moment: register the watch, then read the znode. (If the
// first arm fails because ZooKeeper is unreachable for longer than the
// connection timeout, the dispatcher keeps trying and calls fn once it
// succeeds. If it fails otherwise, such as NoAuth on a children watch, fn
// is called at once, so its owner's read meets the error, and again once a
// background retry succeeds.)

type watchKind int

const (
	watchData     watchKind = iota // exists watch: created, data changed, deleted
	watchChildren                  // children watch (an exists watch while absent): created, children changed, deleted
	watchOnce                      // GetW's data watch: data changed, deleted, or lost with the session
)

// firedBy reports whether ev fires a ZooKeeper watch of kind k on ev.Path
// (ZooKeeper's WatchManager rules, as go-zookeeper's notifyWatches applies
// them).
func (k watchKind) firedBy(ev zk.Event) bool {
	switch ev.Type {
	case zk.EventNodeCreated:
		return k != watchOnce
	case zk.EventNodeDeleted:
		return true
	case zk.EventNodeDataChanged:
		return k != watchChildren
	case zk.EventNodeChildrenChanged:
		return k == watchChildren
	case zk.EventNotWatching:
		// go-zookeeper drops its watches when the session expires; the
		// persistent ones are re-armed by the new-session task instead.
		return k == watchOnce && errors.Is(ev.Err, zk.ErrSessionExpired)
	}
	return false
}

// watchKey names one ZooKeeper watch.
type watchKey struct {
	path string // absolute (chroot included), as ZooKeeper's events name it
	kind watchKind
}

type watch struct {
	key        watchKey
	path       string // chroot-relative, for logs
	fn         func()
	seq        uint64      // registration order; set by dispatcher.add
	pendingIdx int         // guarded by dispatcher.mu: index of its pending task, -1 if none
	stopped    atomic.Bool // cancelled: fn is not called any more
}

// errArmRace: a children watch's znode kept appearing and disappearing
// while it was being armed; the dispatcher tries again.
var errArmRace = errors.New("zkutil: znode created and deleted while arming a children watch")

// WatchData calls fn after every data change, creation or deletion of path,
// until cancel is called or the Client closes. path need not exist. fn runs
// on the dispatcher goroutine and must only enqueue work (see Client).
func (c *Client) WatchData(path string, fn func()) (cancel func()) {
	return c.startWatch(watchData, path, fn)
}

// WatchExists calls fn when path is created or deleted (and on data changes,
// as ZooKeeper's exists watch does). It is WatchData under another name, for
// readability at call sites such as /controller and
// /admin/preferred_replica_election.
func (c *Client) WatchExists(path string, fn func()) (cancel func()) {
	return c.startWatch(watchData, path, fn)
}

// WatchChildren calls fn after every change of path's children, and when path
// is created or deleted, until cancel is called or the Client closes.
func (c *Client) WatchChildren(path string, fn func()) (cancel func()) {
	return c.startWatch(watchChildren, path, fn)
}

// track starts fn on a goroutine counted in c.wg, unless the Client is closed.
func (c *Client) track(fn func()) bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.mu.closed {
		return false
	}
	c.wg.Add(1)
	go func() {
		defer c.wg.Done()
		fn()
	}()
	return true
}

func (c *Client) startWatch(kind watchKind, path string, fn func()) func() {
	w := &watch{key: watchKey{path: c.abs(path), kind: kind}, path: path, fn: fn}
	cancel := func() { c.dispatch.remove(w) }
	if err := c.checkPath(path); err != nil {
		c.log.WithError(err).WithField("path", path).Error("cannot watch invalid path")
		return cancel
	}
	// Registered before it is armed: an event right after the arm's answer
	// is routed to it.
	c.dispatch.add(w)
	err := c.retry(func() error { return c.arm(w.key) })
	if err != nil && !errors.Is(err, zk.ErrClosing) {
		c.log.WithError(err).WithField("path", path).Warn("cannot arm watch yet; the dispatcher keeps trying")
		c.dispatch.queue(w, true)
	}
	return cancel
}

// arm sets the one-shot ZooKeeper watch for key. go-zookeeper's own
// per-watch channel is not used: events reach zkutil through onEvent, in
// order.
func (c *Client) arm(key watchKey) error {
	c.sniff.watchesUsed.Store(true)
	if key.kind != watchChildren {
		_, _, _, err := c.conn.ExistsW(key.path)
		return err
	}
	for i := 0; i < 3; i++ {
		_, _, _, err := c.conn.ChildrenW(key.path)
		if !errors.Is(err, zk.ErrNoNode) {
			return err
		}
		// No node: wait for its creation with an exists watch.
		exists, _, _, err := c.conn.ExistsW(key.path)
		if err != nil || !exists {
			return err
		}
	}
	return errArmRace
}

// prepare is the dispatcher's step before it runs a batch: a session task
// is followed by a call of every persistent watch (changes may have been
// missed with the old session), and every ZooKeeper watch the batch
// consumed is armed again, one request per key, in parallel, before any
// callback runs.
func (c *Client) prepare(batch []task) []task {
	if slices.ContainsFunc(batch, func(t task) bool { return t.session }) {
		all := c.dispatch.persistent()
		out := make([]task, 0, len(batch)+len(all))
		for _, t := range batch {
			out = append(out, t)
			if t.session {
				for _, w := range all {
					out = append(out, task{w: w, rearm: true})
				}
			}
		}
		batch = out
	}
	var keys []watchKey
	seen := make(map[watchKey]bool, len(batch))
	for _, t := range batch {
		if t.rearm && !seen[t.w.key] {
			seen[t.w.key] = true
			keys = append(keys, t.w.key)
		}
	}
	parallel(len(keys), func(i int) { c.rearm(keys[i]) })
	return batch
}

// rearm arms key until it succeeds, key has no watch left or the Client
// closes. Connection errors are retried here and hold the batch back:
// nothing after it may run before its watch is armed, and no event arrives
// while ZooKeeper is unreachable anyway. Any other error (NoAuth on a
// children watch) is logged and retried by armLater, so that one bad path
// does not stop the dispatcher; its callback runs now and its read will see
// the error.
func (c *Client) rearm(key watchKey) {
	backoff := 20 * time.Millisecond
	for c.dispatch.live(key) {
		err := c.arm(key)
		if err == nil || errors.Is(err, zk.ErrClosing) {
			return
		}
		log := c.log.WithError(err).WithField("path", c.rel(key.path))
		if !retryable(err) && !errors.Is(err, zk.ErrSessionExpired) && !errors.Is(err, errArmRace) {
			log.Error("cannot re-arm watch; retrying in the background")
			c.armLater(key)
			return
		}
		log.Debug("re-arming watch failed; retrying")
		if !c.pause(&backoff) {
			return
		}
	}
}

// armLater retries arming key once a second on its own goroutine and, once
// it succeeds, queues the callbacks of key's watches.
func (c *Client) armLater(key watchKey) {
	if !c.dispatch.claimArmLater(key) {
		return
	}
	started := c.track(func() {
		defer c.dispatch.doneArmLater(key)
		backoff := time.Second
		for c.pause(&backoff) && c.dispatch.live(key) {
			err := c.arm(key)
			if errors.Is(err, zk.ErrClosing) {
				return
			}
			if err == nil {
				c.dispatch.queueKey(key)
				return
			}
		}
	})
	if !started {
		c.dispatch.doneArmLater(key)
	}
}

// pause waits *backoff, then doubles it up to a second; false means the
// Client closed.
func (c *Client) pause(backoff *time.Duration) bool {
	t := time.NewTimer(*backoff)
	defer t.Stop()
	*backoff = min(2**backoff, time.Second)
	select {
	case <-c.quit:
		return false
	case <-t.C:
		return true
	}
}
