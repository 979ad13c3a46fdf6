package reassign

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/IBM/sarama"

	"samsa/broker/brokertest"
	"samsa/kafka"
	"samsa/zkutil"
)

// TestToolReassignAndElect drives kafka-reassign-partitions (generate,
// execute with a throttle, verify until complete, which clears the
// throttles), kafka-leader-election and kafka-preferred-replica-election
// against a three-broker cluster.
func TestToolReassignAndElect(t *testing.T) {
	c := brokertest.NewCluster(t, 3)
	ids := []int32{c.Broker(0).ID(), c.Broker(1).ID(), c.Broker(2).ID()}
	admin := c.Admin(t, brokertest.SaramaConfig(sarama.V2_8_0_0))
	if err := admin.CreateTopic("mv", &sarama.TopicDetail{NumPartitions: -1, ReplicationFactor: -1,
		ReplicaAssignment: map[int32][]int32{0: {ids[0], ids[1]}}}, false); err != nil {
		t.Fatal(err)
	}
	c.WaitForLeader(t, "mv", 0)
	boot := c.Addr(0)
	dir := t.TempDir()
	write := func(name, js string) string {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, []byte(js), 0o644); err != nil {
			t.Fatal(err)
		}
		return p
	}

	topicsFile := write("topics.json", `{"topics":[{"topic":"mv"}],"version":1}`)
	out, errOut, code := runTool(t, "", "kafka-reassign-partitions", "--bootstrap-server", boot, "--generate",
		"--topics-to-move-json-file", topicsFile, "--broker-list", fmt.Sprintf("%d,%d", ids[1], ids[2]))
	wantCur := fmt.Sprintf(`{"version":1,"partitions":[{"topic":"mv","partition":0,"replicas":[%d,%d],"log_dirs":["any","any"]}]}`, ids[0], ids[1])
	if code != 0 || !strings.HasPrefix(out, "Current partition replica assignment\n"+wantCur+"\n\nProposed partition reassignment configuration\n") {
		t.Fatalf("generate: exit %d stderr %q\n%s", code, errOut, out)
	}

	plan := write("plan.json", fmt.Sprintf(`{"version":1,"partitions":[{"topic":"mv","partition":0,"replicas":[%d,%d]}]}`, ids[1], ids[2]))
	out, errOut, code = runTool(t, "", "kafka-reassign-partitions", "--bootstrap-server", boot, "--execute",
		"--reassignment-json-file", plan, "--throttle", "50000000")
	want := "Current partition replica assignment\n\n" + wantCur + "\n\nSave this to use as the --reassignment-json-file option during rollback\n" +
		youMustRunVerifyPeriodically + "\nThe inter-broker throttle limit was set to 50000000 B/s\nSuccessfully started partition reassignment for mv-0\n"
	if code != 0 || out != want {
		t.Fatalf("execute: exit %d stderr %q\n%s\nwant\n%s", code, errOut, out, want)
	}
	zk := c.ZooKeeper(t)
	tc, err := zk.GetEntityConfig(zkutil.ConfigTypeTopic, "mv")
	if err != nil || tc[leaderThrottledReplicasKey] != fmt.Sprintf("0:%d,0:%d", ids[0], ids[1]) || tc[followerThrottledReplicasKey] != fmt.Sprintf("0:%d", ids[2]) {
		t.Fatalf("topic throttles %v %v", tc, err)
	}

	brokertest.WaitFor(t, 60*time.Second, func() error {
		out, errOut, code = runTool(t, "", "kafka-reassign-partitions", "--bootstrap-server", boot, "--verify", "--reassignment-json-file", plan)
		if code != 0 || !strings.Contains(out, "Reassignment of partition mv-0 is complete.") {
			return fmt.Errorf("verify: exit %d stderr %q\n%s", code, errOut, out)
		}
		return nil
	})
	if !strings.HasPrefix(out, "Status of partition reassignment:\nReassignment of partition mv-0 is complete.\nClearing broker-level throttles on brokers ") ||
		!strings.HasSuffix(out, "Clearing topic-level throttles on topic mv\n") {
		t.Fatalf("verify output:\n%s", out)
	}
	tc, _ = zk.GetEntityConfig(zkutil.ConfigTypeTopic, "mv")
	bc, _ := zk.GetEntityConfig(zkutil.ConfigTypeBroker, fmt.Sprint(ids[2]))
	if len(tc) != 0 || bc[leaderThrottledRateKey] != "" {
		t.Fatalf("throttles left: topic %v broker %v", tc, bc)
	}
	out, _, code = runTool(t, "", "kafka-reassign-partitions", "--bootstrap-server", boot, "--list")
	if code != 0 || out != "No partition reassignments found.\n" {
		t.Fatalf("list: exit %d\n%s", code, out)
	}
	out, _, code = runTool(t, "", "kafka-reassign-partitions", "--bootstrap-server", boot, "--cancel", "--reassignment-json-file", plan)
	if code != 0 || !strings.HasPrefix(out, "None of the specified partition reassignments are active.\n") {
		t.Fatalf("cancel: exit %d\n%s", code, out)
	}

	// The preferred replica is ids[1]; move leadership away, then back.
	out, errOut, code = runTool(t, "", "kafka-leader-election", "--bootstrap-server", boot, "--election-type", "preferred", "--topic", "mv", "--partition", "0")
	if code != 0 || (out != "Valid replica already elected for partitions mv-0\n" && out != "Successfully completed leader election (PREFERRED) for partitions mv-0\n") {
		t.Fatalf("leader-election: exit %d stderr %q\n%s", code, errOut, out)
	}
	out, _, code = runTool(t, "", "kafka-leader-election", "--bootstrap-server", boot, "--election-type", "preferred", "--topic", "nosuch", "--partition", "0")
	if code != 1 || !strings.Contains(out, "Error completing leader election (PREFERRED) for partition: nosuch-0: org.apache.kafka.common.errors.UnknownTopicOrPartitionException") {
		t.Fatalf("unknown partition: exit %d\n%s", code, out)
	}
	out, _, code = runTool(t, "", "kafka-preferred-replica-election", "--zookeeper", c.ZKConnect(), "--path-to-json-file",
		write("pre.json", `{"partitions":[{"topic":"mv","partition":0}]}`))
	if code != 0 || !strings.Contains(out, "Successfully started preferred replica election for partitions Set(mv-0)\n") {
		t.Fatalf("preferred-replica-election: exit %d\n%s", code, out)
	}
	brokertest.WaitFor(t, 30*time.Second, func() error {
		if ok, _, err := zk.Exists("/admin/preferred_replica_election"); err != nil || ok {
			return fmt.Errorf("election znode still present (%v)", err)
		}
		return nil
	})
}

// TestToolReassignStartAtLogEndZK: --zookeeper --execute --start-at-log-end
// moves a partition whose new replica starts at the leader's log end.
func TestToolReassignStartAtLogEndZK(t *testing.T) {
	c := brokertest.NewCluster(t, 2)
	ids := []int32{c.Broker(0).ID(), c.Broker(1).ID()}
	admin := c.Admin(t, brokertest.SaramaConfig(sarama.V2_8_0_0))
	if err := admin.CreateTopic("lc", &sarama.TopicDetail{NumPartitions: -1, ReplicationFactor: -1,
		ReplicaAssignment: map[int32][]int32{0: {ids[0]}}}, false); err != nil {
		t.Fatal(err)
	}
	c.WaitForLeader(t, "lc", 0)
	cfg := brokertest.SaramaConfig(sarama.V2_8_0_0)
	cfg.Producer.Return.Successes = true
	p := c.SyncProducer(t, cfg)
	for i := 0; i < 50; i++ {
		if _, _, err := p.SendMessage(&sarama.ProducerMessage{Topic: "lc", Value: sarama.StringEncoder("old")}); err != nil {
			t.Fatal(err)
		}
	}
	plan := filepath.Join(t.TempDir(), "plan.json")
	if err := os.WriteFile(plan, []byte(fmt.Sprintf(`{"version":1,"partitions":[{"topic":"lc","partition":0,"replicas":[%d,%d]}]}`, ids[0], ids[1])), 0o644); err != nil {
		t.Fatal(err)
	}
	out, errOut, code := runTool(t, "", "kafka-reassign-partitions", "--zookeeper", c.ZKConnect(), "--execute",
		"--reassignment-json-file", plan, "--start-at-log-end")
	if code != 0 || !strings.HasSuffix(out, "Successfully started partition reassignment for lc-0\n") {
		t.Fatalf("execute: exit %d stderr %q\n%s", code, errOut, out)
	}
	brokertest.WaitFor(t, 30*time.Second, func() error {
		out, _, _ = runTool(t, "", "kafka-reassign-partitions", "--zookeeper", c.ZKConnect(), "--verify", "--reassignment-json-file", plan)
		if !strings.Contains(out, "Reassignment of partition lc-0 is complete.") {
			return fmt.Errorf("verify:\n%s", out)
		}
		return nil
	})
	if cfg, err := c.ZooKeeper(t).GetEntityConfig(zkutil.ConfigTypeLogEndReplicas, "lc"); err != nil || cfg["replicas"] != "" {
		t.Fatalf("log-end entries left after --verify: %v %v", cfg, err)
	}
	st := c.Broker(1).Replicas().Partition(kafka.TopicPartition{Topic: "lc", Partition: 0}).State()
	if st.LogStartOffset != 50 {
		t.Fatalf("new replica's log starts at %d, want the leader's log end 50", st.LogStartOffset)
	}
}
