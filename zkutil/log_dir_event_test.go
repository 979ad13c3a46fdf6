package zkutil_test

import (
	"errors"
	"fmt"
	"strings"
	"testing"

	"samsa/zkutil"
	"samsa/zkutil/zktest"
)

// TestZKLogDirEventNotifications: brokers write log-dir failure
// notifications (the parent is created when missing), the controller's watch
// fires, lists them in sequence order, reads broker and event, and deletes
// them only while it holds the controller epoch.
func TestZKLogDirEventNotifications(t *testing.T) {
	srv := zktest.Start(t)
	cs := srv.Chroot(t)
	b, ctl := connect(t, cs), connect(t, cs)

	// No CreatePersistentPaths: the writer creates the parent.
	mustf(t, b.WriteLogDirEventNotification(3), "write to a missing parent")
	_, zkv, err := ctl.ElectController(1)
	mustf(t, err, "elect")

	seen := newCounter()
	cancel := ctl.WatchChildren(zkutil.LogDirEventNotificationPath(), seen.fn)
	defer cancel()
	seen.drain()
	mustf(t, b.WriteLogDirEventNotification(5), "write")
	seen.wait(t, "log dir event watch")
	// Raw children as other writers may leave them: a future event type, one
	// without "event", a malformed one.
	for _, data := range []string{`{"version":1,"broker":7,"event":2}`, `{"version":1,"broker":8}`, `{"broker":`} {
		_, err := b.Create(zkutil.LogDirEventNotificationPath()+"/"+zkutil.LogDirEventSeqPrefix, []byte(data), zkutil.PersistentSequential)
		mustf(t, err, "raw child %s", data)
	}

	nodes, err := ctl.GetLogDirEventNotifications()
	mustf(t, err, "list")
	if len(nodes) != 5 {
		t.Fatalf("nodes %v", nodes)
	}
	want := []struct {
		broker int32
		event  int
	}{{3, 1}, {5, 1}, {7, 2}, {8, 1}}
	for i, n := range nodes {
		if !strings.HasPrefix(n, zkutil.LogDirEventSeqPrefix) || len(n) != len(zkutil.LogDirEventSeqPrefix)+10 {
			t.Fatalf("node name %q", n)
		}
		broker, event, err := ctl.ReadLogDirEvent(n)
		if i == 4 {
			if !errors.Is(err, zkutil.ErrMalformed) {
				t.Fatalf("malformed child %s: %d %d %v", n, broker, event, err)
			}
			continue
		}
		mustf(t, err, "read %s", n)
		if broker != want[i].broker || event != want[i].event {
			t.Fatalf("node %s = broker %d event %d, want %+v (sequence order)", n, broker, event, want[i])
		}
		if i < 2 {
			data, _, err := ctl.Get(zkutil.LogDirEventNotificationSeqPath(n))
			mustf(t, err, "get %s", n)
			if string(data) != fmt.Sprintf(`{"version":1,"broker":%d,"event":1}`, want[i].broker) {
				t.Fatalf("node %s data %s", n, data)
			}
		}
	}

	// A deposed controller cannot delete them; the current one can, and
	// nodes already gone are fine.
	if err := b.DeleteLogDirEventNotifications(nodes, zkv+1); !errors.Is(err, zkutil.ErrControllerMoved) {
		t.Fatalf("fenced delete: %v", err)
	}
	mustf(t, ctl.DeleteLogDirEventNotifications(append(nodes, "log_dir_event_9999999999"), zkv), "delete")
	left, err := ctl.GetLogDirEventNotifications()
	mustf(t, err, "list again")
	if len(left) != 0 {
		t.Fatalf("left %v", left)
	}
	if _, _, err := ctl.ReadLogDirEvent(nodes[0]); !errors.Is(err, zkutil.ErrNoNode) {
		t.Fatalf("read deleted: %v", err)
	}
}

// FuzzZKLogDirEvent: the notification decoder never panics on arbitrary
// bytes, and whatever it decodes re-encodes to the same broker and event.
func FuzzZKLogDirEvent(f *testing.F) {
	for _, s := range []string{
		`{"version":1,"broker":3,"event":1}`, `{"version":1,"broker":3}`, `{"broker":-1,"event":2}`,
		`{"broker":"3"}`, `{"broker":99999999999}`, `[]`, `null`, ``, `{"event":1}`,
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		broker, event, err := zkutil.DecodeLogDirEventNotification(data)
		if err != nil {
			if !errors.Is(err, zkutil.ErrMalformed) {
				t.Fatalf("error %v does not wrap ErrMalformed", err)
			}
			return
		}
		b2, e2, err := zkutil.DecodeLogDirEventNotification(zkutil.EncodeLogDirEventNotification(broker, event))
		if err != nil || b2 != broker || e2 != event {
			t.Fatalf("round trip %d/%d -> %d/%d %v", broker, event, b2, e2, err)
		}
	})
}
