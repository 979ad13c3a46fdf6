package clustertest_test

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kgo"

	"samsa/broker/brokertest"
)

// needKafkaPython returns Debian's python3 with kafka-python (python3-kafka),
// skipping outside CI when it is missing.
func needKafkaPython(t *testing.T) string {
	t.Helper()
	return needPythonModule(t, "kafka", "python3-kafka")
}

// needPythonModule returns Debian's python3 once it imports module (from the
// Debian package pkg): a test fails in CI without it and skips elsewhere.
func needPythonModule(t *testing.T, module, pkg string) string {
	t.Helper()
	py := needTool(t, "/usr/bin/python3")
	if err := exec.Command(py, "-c", "import "+module).Run(); err != nil {
		if os.Getenv("CI") != "" {
			t.Fatalf("%s is required in CI: %v", pkg, err)
		}
		t.Skipf("%s not installed: %v", pkg, err)
	}
	return py
}

// TestCompatKafkaPython runs testdata/compat_kafka_python.py: kafka-python's
// admin client (create/delete topics, create partitions, describe/alter
// configs, describe cluster, list/describe/delete groups, group offsets),
// a gzip acks=all producer with timestamps, headers and tombstones, a group
// consumer that commits, end/beginning offsets, offsets_for_times and seeks.
func TestCompatKafkaPython(t *testing.T) {
	py := needKafkaPython(t)
	// Three brokers: the admin client sends topic changes to the
	// controller, group calls to each group's coordinator and broker
	// configs to the broker described.
	c := brokertest.NewCluster(t, 3, brokertest.WithProperty("offsets.topic.num.partitions", "3"))
	runPythonScript(t, py, "compat_kafka_python.py", strings.Join(c.Addrs(), ","), strconv.Itoa(int(c.Broker(2).ID())))
}

// TestCompatKafkaPythonErrors runs testdata/compat_kafka_python_errors.py:
// auto-creation on produce, MESSAGE_TOO_LARGE against a topic's
// max.message.bytes, OFFSET_OUT_OF_RANGE answered by auto_offset_reset
// earliest and latest, and producers and group consumers pinned to old
// protocol versions (api_version 0.8.2 up to 2.0).
func TestCompatKafkaPythonErrors(t *testing.T) {
	py := needKafkaPython(t)
	c := brokertest.NewCluster(t, 1, brokertest.WithProperty("offsets.topic.num.partitions", "2"),
		brokertest.WithProperty("auto.create.topics.enable", "true"))
	runPythonScript(t, py, "compat_kafka_python_errors.py", strings.Join(c.Addrs(), ","))
}

// TestCompatKafkaPythonFailover: a kafka-python producer (acks=all, one
// request in flight) keeps going while the partition leader is killed: it
// retries NOT_LEADER_OR_FOLLOWER and disconnects, follows the new leader,
// and every record is stored once or more, in order.
func TestCompatKafkaPythonFailover(t *testing.T) {
	py := needKafkaPython(t)
	c := brokertest.NewCluster(t, 3, brokertest.WithProperty("auto.leader.rebalance.enable", "false"))
	c.CreateTopic(t, "pyfail", 1, 3)
	c.WaitForISR(t, "pyfail", 0, 3)
	leader := c.WaitForLeader(t, "pyfail", 0)
	script, err := filepath.Abs(filepath.Join("testdata", "compat_kafka_python_failover.py"))
	if err != nil {
		t.Fatal(err)
	}
	out := runWhileLeaderKilled(t, c, "pyfail", 100, py, script, strings.Join(c.Addrs(), ","), "pyfail", "400")
	if !strings.HasSuffix(out, "OK\n") {
		t.Fatalf("kafka-python (leader %d killed):\n%s", leader, out)
	}
	t.Logf("kafka-python:\n%s", out)
}

// runWhileLeaderKilled runs a client (bounded by 60 s) that produces to
// partition 0 of topic, kills the partition's leader once its end offset
// reaches after, and returns the client's stdout once it exited 0 (its
// stdout and stderr fail the test otherwise).
func runWhileLeaderKilled(t *testing.T, c *brokertest.Cluster, topic string, after int64, name string, args ...string) string {
	t.Helper()
	leader := c.WaitForLeader(t, topic, 0)
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	cmd := exec.CommandContext(ctx, name, args...)
	var out, errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errb
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()
	adm, _ := newKadm(t, c.Addrs(), kgo.MetadataMinAge(10*time.Millisecond))
	brokertest.WaitFor(t, 30*time.Second, func() error {
		lo, err := adm.ListEndOffsets(kctx(t), topic)
		if err != nil {
			return err
		}
		if o, _ := lo.Lookup(topic, 0); o.Offset < after {
			return fmt.Errorf("end offset %d", o.Offset)
		}
		return nil
	})
	c.Kill(c.Index(leader))
	if err := <-done; err != nil {
		t.Fatalf("%s: %v\nstdout:\n%s\nstderr:\n%s", filepath.Base(name), err, out.String(), errb.String())
	}
	return out.String()
}

// TestCompatKafkaPythonGroup runs testdata/compat_kafka_python_group.py:
// two kafka-python members per assignor (range, roundrobin) share a
// topic after a rebalance, auto-commit, and the survivor takes every
// partition when the other leaves.
func TestCompatKafkaPythonGroup(t *testing.T) {
	py := needKafkaPython(t)
	c := brokertest.NewCluster(t, 1, brokertest.WithProperty("offsets.topic.num.partitions", "2"))
	runPythonScript(t, py, "compat_kafka_python_group.py", strings.Join(c.Addrs(), ","))
}

// runPythonScript runs testdata/<name> with py and args (30 s at most);
// the script must end its output with OK.
func runPythonScript(t *testing.T, py, name string, args ...string) {
	t.Helper()
	script, err := filepath.Abs(filepath.Join("testdata", name))
	if err != nil {
		t.Fatal(err)
	}
	out, _ := runBounded(t, 30*time.Second, "", py, append([]string{script}, args...)...)
	if !strings.HasSuffix(out, "OK\n") {
		t.Fatalf("kafka-python:\n%s", out)
	}
	t.Logf("kafka-python:\n%s", out)
}
