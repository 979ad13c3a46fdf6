package zkutil_test

import (
	"errors"
	"reflect"
	"strings"
	"testing"

	"samsa/kafka"
	"samsa/zkutil"
	"samsa/zkutil/zktest"
)

func TestZKIsrChangeNotifications(t *testing.T) {
	srv := zktest.Start(t)
	cs := srv.Chroot(t)
	c, ctl := connect(t, cs), connect(t, cs)
	mustf(t, c.CreatePersistentPaths(), "persistent paths")
	_, zkv, err := ctl.ElectController(1)
	mustf(t, err, "elect")

	seen := newCounter()
	cancel := ctl.WatchChildren(zkutil.IsrChangeNotificationPath(), seen.fn)
	defer cancel()

	batches := [][]kafka.TopicPartition{
		{{Topic: "a", Partition: 0}},
		{{Topic: "b", Partition: 1}, {Topic: "c", Partition: 2}},
		{{Topic: "d", Partition: 3}},
	}
	for _, b := range batches {
		mustf(t, c.WriteIsrChangeNotification(b), "write")
	}
	seen.wait(t, "isr change watch")
	nodes, err := ctl.GetIsrChangeNotifications()
	mustf(t, err, "list")
	if len(nodes) != 3 {
		t.Fatalf("nodes %v", nodes)
	}
	for i, n := range nodes {
		if !strings.HasPrefix(n, zkutil.IsrChangeSeqPrefix) || len(n) != len(zkutil.IsrChangeSeqPrefix)+10 {
			t.Fatalf("node name %q", n)
		}
		tps, err := ctl.ReadIsrChangeNotification(n)
		mustf(t, err, "read %s", n)
		if !reflect.DeepEqual(tps, batches[i]) {
			t.Fatalf("node %s = %v, want %v (sequence order)", n, tps, batches[i])
		}
	}
	// A deposed controller cannot delete them; the current one can.
	if err := c.DeleteIsrChangeNotifications(nodes, zkv+1); !errors.Is(err, zkutil.ErrControllerMoved) {
		t.Fatalf("fenced delete: %v", err)
	}
	mustf(t, ctl.DeleteIsrChangeNotifications(append(nodes, "isr_change_9999999999"), zkv), "delete")
	left, err := ctl.GetIsrChangeNotifications()
	mustf(t, err, "list again")
	if len(left) != 0 {
		t.Fatalf("left %v", left)
	}
}

func TestZKEntityConfigAndChanges(t *testing.T) {
	srv := zktest.Start(t)
	c := connect(t, srv.Chroot(t))
	mustf(t, c.CreatePersistentPaths(), "persistent paths")
	cfg, err := c.GetEntityConfig(zkutil.ConfigTypeTopic, "nope")
	mustf(t, err, "missing config")
	if len(cfg) != 0 {
		t.Fatalf("missing config = %v", cfg)
	}
	mustf(t, c.SetEntityConfig(zkutil.ConfigTypeTopic, "foo", map[string]string{"cleanup.policy": "compact"}), "set")
	mustf(t, c.SetEntityConfig(zkutil.ConfigTypeBroker, "<default>", map[string]string{"log.retention.ms": "5"}), "set broker")
	changes, err := c.GetConfigChanges()
	mustf(t, err, "changes")
	if len(changes) != 2 {
		t.Fatalf("changes %v", changes)
	}
	p, ctime, err := c.ReadConfigChange(changes[0])
	mustf(t, err, "read change")
	if p != "topics/foo" || ctime == 0 {
		t.Fatalf("change = %q %d", p, ctime)
	}
	all, err := c.GetAllEntityConfigs(zkutil.ConfigTypeTopic)
	mustf(t, err, "all configs")
	if all["foo"]["cleanup.policy"] != "compact" {
		t.Fatalf("all = %v", all)
	}
	mustf(t, c.DeleteConfigChange(changes[0]), "delete change")
	mustf(t, c.DeleteConfigChange(changes[0]), "delete change twice")
}

func TestZKAdminNodes(t *testing.T) {
	srv := zktest.Start(t)
	c := connect(t, srv.Chroot(t))
	_, zkv, err := c.ElectController(1)
	mustf(t, err, "elect")
	r := map[kafka.TopicPartition][]int32{{Topic: "foo", Partition: 0}: {4, 5, 6}, {Topic: "foo", Partition: 1}: {5, 6, 4}}
	mustf(t, c.CreatePartitionReassignment(r), "create reassignment")
	if err := c.CreatePartitionReassignment(r); !errors.Is(err, zkutil.ErrNodeExists) {
		t.Fatalf("second reassignment: %v", err)
	}
	got, err := c.GetPartitionReassignment()
	mustf(t, err, "get reassignment")
	if !reflect.DeepEqual(got, r) {
		t.Fatalf("reassignment %v", got)
	}
	delete(r, kafka.TopicPartition{Topic: "foo", Partition: 0})
	mustf(t, c.SetPartitionReassignment(r, zkv), "shrink")
	mustf(t, c.SetPartitionReassignment(nil, zkv), "finish")
	if ok, _ := c.ReassignmentInProgress(); ok {
		t.Fatal("reassignment still in progress")
	}
	tps := []kafka.TopicPartition{{Topic: "bar", Partition: 3}}
	mustf(t, c.CreatePreferredReplicaElection(tps), "create election")
	gotTPs, err := c.GetPreferredReplicaElection()
	mustf(t, err, "get election")
	if !reflect.DeepEqual(gotTPs, tps) {
		t.Fatalf("election %v", gotTPs)
	}
	mustf(t, c.DeletePreferredReplicaElection(zkv), "delete election")
	if _, err := c.GetPreferredReplicaElection(); !errors.Is(err, zkutil.ErrNoNode) {
		t.Fatalf("after delete: %v", err)
	}
	b1, err := c.AllocateProducerIDBlock(1)
	mustf(t, err, "pid block")
	b2, err := c.AllocateProducerIDBlock(2)
	mustf(t, err, "pid block 2")
	if b1.BlockStart != 0 || b1.BlockEnd != 999 || b2.BlockStart != 1000 || b2.BlockEnd != 1999 {
		t.Fatalf("blocks %+v %+v", b1, b2)
	}
}
