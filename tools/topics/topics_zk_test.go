package topics

import (
	"strings"
	"testing"

	"samsa/tools/internal/tooltest"
	"samsa/zkutil"
)

func TestToolTopicsZKLifecycle(t *testing.T) {
	zk, c := tooltest.ZKCluster(t, 1, 2, 3)
	expect := func(wantOut string, wantCode int, args ...string) {
		t.Helper()
		out, errOut, code := runTool(t, "", append([]string{"kafka-topics", "--zookeeper", zk}, args...)...)
		if out != wantOut || code != wantCode {
			t.Fatalf("%v: got code %d stdout %q stderr %q, want code %d stdout %q", args, code, out, errOut, wantCode, wantOut)
		}
	}
	expect("Created topic orders.\n", 0, "--create", "--topic", "orders", "--partitions", "3", "--replication-factor", "2", "--config", "cleanup.policy=compact", "--config", "segment.bytes=1048576")
	expect("Created topic manual.\n", 0, "--create", "--topic", "manual", "--replica-assignment", "3:1,1:2")
	expect("Error while executing topic command : Topic 'orders' already exists.\n", 1, "--create", "--topic", "orders", "--partitions", "1", "--replication-factor", "1")
	expect("", 0, "--create", "--topic", "orders", "--partitions", "1", "--replication-factor", "1", "--if-not-exists")
	expect("Error while executing topic command : Replication factor: 4 larger than available brokers: 3.\n", 1, "--create", "--topic", "big", "--partitions", "1", "--replication-factor", "4")
	expect("WARNING: Due to limitations in metric names, topics with a period ('.') or underscore ('_') could collide. To avoid issues it is best to use either, but not both.\nCreated topic a.b.\n", 0,
		"--create", "--topic", "a.b", "--partitions", "1", "--replication-factor", "1")
	expect("a.b\nmanual\norders\n", 0, "--list")

	a, _, err := c.GetTopicAssignment("orders")
	if err != nil || len(a.Partitions) != 3 || len(a.Partitions[0]) != 2 {
		t.Fatalf("assignment %+v, %v", a, err)
	}
	cfg, err := c.GetEntityConfig(zkutil.ConfigTypeTopic, "orders")
	if err != nil || cfg["cleanup.policy"] != "compact" {
		t.Fatalf("config %v, %v", cfg, err)
	}

	// No controller runs here, so partitions have no /state: Leader none.
	expect("Topic: manual\tPartitionCount: 2\tReplicationFactor: 2\tConfigs: \n"+
		"\tTopic: manual\tPartition: 0\tLeader: none\tReplicas: 3,1\tIsr: \n"+
		"\tTopic: manual\tPartition: 1\tLeader: none\tReplicas: 1,2\tIsr: \n", 0, "--describe", "--topic", "manual")
	st := zkutil.PartitionState{Leader: 3, ISR: []int32{3, 1}, ControllerEpoch: 1}
	if _, err := c.CreateRecursive(zkutil.PartitionStatePath("manual", 0), st.Encode(), zkutil.Persistent); err != nil {
		t.Fatal(err)
	}
	expect("\tTopic: manual\tPartition: 1\tLeader: none\tReplicas: 1,2\tIsr: \n", 0, "--describe", "--topic", "manual", "--unavailable-partitions")
	expect("\tTopic: manual\tPartition: 1\tLeader: none\tReplicas: 1,2\tIsr: \n", 0, "--describe", "--topic", "man.*", "--exclude-internal", "--under-replicated-partitions")
	expect("Topic: manual\tPartitionCount: 2\tReplicationFactor: 2\tConfigs: \n"+
		"\tTopic: manual\tPartition: 0\tLeader: 3\tReplicas: 3,1\tIsr: 3,1\n"+
		"\tTopic: manual\tPartition: 1\tLeader: none\tReplicas: 1,2\tIsr: \n", 0, "--describe", "--topic", "manual")
	expect("Topic: orders\tPartitionCount: 3\tReplicationFactor: 2\tConfigs: cleanup.policy=compact,segment.bytes=1048576\n", 0, "--describe", "--topics-with-overrides")

	expect("WARNING: If partitions are increased for a topic that has a key, the partition logic or ordering of the messages will be affected\nAdding partitions succeeded!\n", 0,
		"--alter", "--topic", "orders", "--partitions", "5")
	if a, _, _ := c.GetTopicAssignment("orders"); len(a.Partitions) != 5 || len(a.Partitions[4]) != 2 {
		t.Fatalf("after alter: %+v", a)
	}
	expect("WARNING: If partitions are increased for a topic that has a key, the partition logic or ordering of the messages will be affected\n"+
		"Error while executing topic command : The number of partitions for a topic can only be increased. Topic orders currently has 5 partitions, 2 would not be an increase.\n", 1,
		"--alter", "--topic", "orders", "--partitions", "2")

	expect("Topic orders is marked for deletion.\nNote: This will have no impact if delete.topic.enable is not set to true.\n", 0, "--delete", "--topic", "orders")
	expect("Topic orders is already marked for deletion.\n", 0, "--delete", "--topic", "orders")
	expect("a.b\nmanual\norders - marked for deletion\n", 0, "--list")
	expect("Error while executing topic command : Topic 'nope' does not exist as expected\n", 1, "--describe", "--topic", "nope")
	expect("", 0, "--describe", "--topic", "nope", "--if-exists")
	expect("Error while executing topic command : Unknown topic config name: retention.mss\n", 1,
		"--create", "--topic", "bad", "--partitions", "1", "--replication-factor", "1", "--config", "retention.mss=1")
}

func TestToolTopicsUsageErrors(t *testing.T) {
	tests := []struct {
		args []string
		want string
	}{
		{[]string{"--zookeeper", "x:1", "--list", "--describe"}, "Command must include exactly one action"},
		{[]string{"--list"}, "Only one of --bootstrap-server or --zookeeper must be specified"},
		{[]string{"--bogus"}, "flag provided but not defined: -bogus"},
		{[]string{"--zookeeper", "x:1", "--bootstrap-server", "y:2", "--list"}, "Only one of --bootstrap-server or --zookeeper"},
		{[]string{"--zookeeper", "x:1", "--create", "--partitions", "1", "--replication-factor", "1"}, `Missing required argument "[topic]"`},
		{[]string{"--zookeeper", "x:1", "--create", "--topic", "t", "--replication-factor", "1"}, `Missing required argument "[partitions]"`},
		{[]string{"--zookeeper", "x:1", "--create", "--topic", "t", "--replica-assignment", "1:2,3", "--partitions", "2"}, "different replication factor"},
		{[]string{"--zookeeper", "x:1", "--create", "--topic", "t", "--replica-assignment", "1:1"}, "duplicate entries: 1"},
		{[]string{"--zookeeper", "x:1", "--describe", "--under-replicated-partitions", "--unavailable-partitions"}, "can't be used with"},
		{[]string{"--zookeeper", "x:1", "--describe", "--under-min-isr-partitions"}, `"[zookeeper]"`},
		{[]string{"--bootstrap-server", "x:1", "--alter", "--topic", "t", "--config", "a=b", "--partitions", "2"}, `"[bootstrap-server]"`},
	}
	for _, tc := range tests {
		out, errOut, code := runTool(t, "", append([]string{"kafka-topics"}, tc.args...)...)
		if code != 1 || out != "" || !strings.Contains(errOut, tc.want) {
			t.Errorf("%v: code %d stdout %q stderr %q, want stderr with %q", tc.args, code, out, errOut, tc.want)
		}
	}
}

func TestToolZookeeperShell(t *testing.T) {
	zk, _ := tooltest.ZKCluster(t, 3, 1, 2)
	out, errOut, code := runTool(t, "", "zookeeper-shell", zk, "ls", zkutil.BrokerIDsPath())
	if code != 0 || out != "[1, 2, 3]\n" {
		t.Fatalf("ls: %d %q %q", code, out, errOut)
	}
	out, _, code = runTool(t, "", "zookeeper-shell", zk, "get", zkutil.BrokerIDPath(2))
	if code != 0 || !strings.Contains(out, `"port":9092`) {
		t.Fatalf("get: %d %q", code, out)
	}
	_, errOut, code = runTool(t, "", "zookeeper-shell", zk, "ls", zkutil.TopicPath("none"))
	if code != 1 || !strings.HasPrefix(errOut, "Node does not exist: ") {
		t.Fatalf("missing: %d %q", code, errOut)
	}
}
