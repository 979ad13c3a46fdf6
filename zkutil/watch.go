package zkutil

import (
	"errors"
	"sync"
	"time"

	"github.com/go-zookeeper/zk"
)

// Persistent watches on top of ZooKeeper's one-shot watches (Kafka
// ZooKeeperClient's ZNodeChangeHandler / ZNodeChildChangeHandler, re-registered
// after each event).
//
// Each persistent watch has a small goroutine that waits for the one-shot
// watch to fire, arms it again, and then queues the callback on the
// dispatcher. Because the watch is re-armed before the callback runs, a
// callback that re-reads the znode never misses a later change. A watch lost
// with an expired session is re-armed on the new session and its callback
// runs once, since changes may have been missed in between.
//
// The watch is armed before WatchX returns, and fn is not called for the
// state at that moment: register the watch, then read the znode. (If the
// first arm fails because ZooKeeper is unreachable for longer than the
// connection timeout, the goroutine keeps trying and calls fn once it
// succeeds.)

type watchKind int

const (
	watchData watchKind = iota
	watchChildren
)

type watch struct {
	kind watchKind
	path string // chroot-relative
	fn   func()
	stop chan struct{}
	once sync.Once
}

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
	w := &watch{kind: kind, path: path, fn: fn, stop: make(chan struct{})}
	cancel := func() {
		w.once.Do(func() {
			close(w.stop)
		})
	}
	if err := c.checkPath(path); err != nil {
		c.log.WithError(err).WithField("path", path).Error("cannot watch invalid path")
		return cancel
	}
	var ch <-chan zk.Event
	err := c.retry(func() (err error) {
		ch, err = c.arm(w)
		return err
	})
	c.track(func() { c.runWatch(w, ch, err == nil) })
	return cancel
}

// arm sets the one-shot ZooKeeper watch for w.
func (c *Client) arm(w *watch) (<-chan zk.Event, error) {
	c.sniff.watchesUsed.Store(true)
	p := c.abs(w.path)
	if w.kind == watchData {
		_, _, ch, err := c.conn.ExistsW(p)
		return ch, err
	}
	for i := 0; ; i++ {
		_, _, ch, err := c.conn.ChildrenW(p)
		if !errors.Is(err, zk.ErrNoNode) {
			return ch, err
		}
		// No node: wait for its creation with an exists watch.
		exists, _, ech, err := c.conn.ExistsW(p)
		if err != nil || !exists || i >= 2 {
			return ech, err
		}
	}
}

func (c *Client) runWatch(w *watch, ch <-chan zk.Event, armed bool) {
	if !armed {
		if ch = c.rearm(w); ch == nil {
			return
		}
		c.fire(w)
	}
	for {
		select {
		case <-w.stop:
			return
		case <-c.quit:
			return
		case ev := <-ch:
			if errors.Is(ev.Err, zk.ErrClosing) {
				return
			}
			if ch = c.rearm(w); ch == nil {
				return
			}
			c.fire(w)
		}
	}
}

// rearm arms w until it succeeds; nil means the watch or the Client stopped.
func (c *Client) rearm(w *watch) <-chan zk.Event {
	backoff := 20 * time.Millisecond
	for {
		select {
		case <-w.stop:
			return nil
		case <-c.quit:
			return nil
		default:
		}
		ch, err := c.arm(w)
		if err == nil {
			return ch
		}
		c.log.WithError(err).WithField("path", w.path).Debug("re-arming watch failed; retrying")
		t := time.NewTimer(backoff)
		select {
		case <-w.stop:
			t.Stop()
			return nil
		case <-c.quit:
			t.Stop()
			return nil
		case <-t.C:
		}
		if backoff < time.Second {
			backoff *= 2
		}
	}
}

func (c *Client) fire(w *watch) {
	c.dispatch.enqueue(func() {
		select {
		case <-w.stop:
			return
		default:
		}
		w.fn()
	})
}
