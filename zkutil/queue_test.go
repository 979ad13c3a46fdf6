package zkutil

import (
	"io"
	"slices"
	"strings"
	"testing"

	"github.com/go-zookeeper/zk"
	"github.com/sirupsen/logrus"
)

// TestDispatcherRoutesInOrderAndMerges: route queues the watches an event
// fires, in event order; an event for a watch already queued merges into
// its task, which keeps its place; a one-shot watch fires once; a cancelled
// watch is neither queued nor called; session tasks merge.
func TestDispatcherRoutesInOrderAndMerges(t *testing.T) {
	log := logrus.New()
	log.SetOutput(io.Discard)
	d := newDispatcher(log)
	var calls []string
	add := func(path string, kind watchKind, label string) *watch {
		w := &watch{key: watchKey{path: path, kind: kind}, path: path, fn: func() { calls = append(calls, label) }}
		d.add(w)
		return w
	}
	add("/a", watchData, "a")
	add("/b", watchChildren, "b")
	add("/a", watchOnce, "a-once")
	gone := add("/c", watchData, "c")
	ev := func(typ zk.EventType, path string) zk.Event { return zk.Event{Type: typ, Path: path} }

	d.route(ev(zk.EventNodeDataChanged, "/c"))
	d.remove(gone) // queued, then cancelled: not called
	d.route(ev(zk.EventNodeDataChanged, "/a"))
	d.route(ev(zk.EventNodeChildrenChanged, "/b"))
	d.route(ev(zk.EventNodeDataChanged, "/a"))     // merges into a's task
	d.route(ev(zk.EventNodeDataChanged, "/b"))     // a children watch ignores data changes
	d.route(ev(zk.EventNodeChildrenChanged, "/a")) // nothing watches /a's children
	d.route(ev(zk.EventNodeDataChanged, "/c"))     // cancelled: not queued
	d.queueSession(func() { calls = append(calls, "hooks") })
	d.queueSession(func() { calls = append(calls, "hooks again") }) // merges

	batch := d.take()
	var rearm []bool
	for _, task := range batch {
		rearm = append(rearm, task.rearm)
		d.call(task)
	}
	if want := []string{"a", "a-once", "b", "hooks"}; !slices.Equal(calls, want) {
		t.Fatalf("calls %v, want %v", calls, want)
	}
	if want := []bool{true, true, false, true, false}; !slices.Equal(rearm, want) {
		t.Fatalf("rearm flags %v, want %v (batch %d tasks)", rearm, want, len(batch))
	}

	// Taken tasks are no longer pending: the next event queues again; the
	// one-shot watch is gone.
	calls = nil
	d.route(ev(zk.EventNodeDeleted, "/a"))
	d.route(ev(zk.EventNodeDeleted, "/b"))
	for _, task := range d.take() {
		d.call(task)
	}
	if want := []string{"a", "b"}; !slices.Equal(calls, want) {
		t.Fatalf("after take: calls %v, want %v", calls, want)
	}
}

// TestWatchKindFiredBy is ZooKeeper's table of which event fires which
// watch (exists watch, children watch, GetW's data watch).
func TestWatchKindFiredBy(t *testing.T) {
	types := []zk.EventType{zk.EventNodeCreated, zk.EventNodeDeleted, zk.EventNodeDataChanged, zk.EventNodeChildrenChanged}
	want := map[watchKind]string{
		watchData:     "created deleted data",
		watchChildren: "created deleted children",
		watchOnce:     "deleted data",
	}
	names := []string{"created", "deleted", "data", "children"}
	for kind, w := range want {
		var got []string
		for i, typ := range types {
			if kind.firedBy(zk.Event{Type: typ}) {
				got = append(got, names[i])
			}
		}
		if strings.Join(got, " ") != w {
			t.Errorf("kind %d fired by %v, want %s", kind, got, w)
		}
	}
	lost := zk.Event{Type: zk.EventNotWatching, Err: zk.ErrSessionExpired}
	if !watchOnce.firedBy(lost) || watchData.firedBy(lost) || watchChildren.firedBy(lost) {
		t.Errorf("a watch lost with the session fires only one-shot watches")
	}
	if watchOnce.firedBy(zk.Event{Type: zk.EventNotWatching, Err: zk.ErrClosing}) {
		t.Errorf("Close fires no watch")
	}
}
