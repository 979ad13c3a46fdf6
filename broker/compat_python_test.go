package broker_test

import (
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"samsa/broker/brokertest"
)

// needKafkaPython returns Debian's python3 with kafka-python (python3-kafka),
// skipping outside CI when it is missing.
func needKafkaPython(t *testing.T) string {
	t.Helper()
	py := needTool(t, "/usr/bin/python3")
	if err := exec.Command(py, "-c", "import kafka").Run(); err != nil {
		if os.Getenv("CI") != "" {
			t.Fatalf("python3-kafka is required in CI: %v", err)
		}
		t.Skipf("python3-kafka not installed: %v", err)
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
	c := brokertest.NewCluster(t, 1, brokertest.WithProperty("offsets.topic.num.partitions", "2"))
	script, err := filepath.Abs(filepath.Join("testdata", "compat_kafka_python.py"))
	if err != nil {
		t.Fatal(err)
	}
	out, _ := runBounded(t, 30*time.Second, "", py, script, strings.Join(c.Addrs(), ","), strconv.Itoa(int(c.Broker(0).ID())))
	if !strings.HasSuffix(out, "OK\n") {
		t.Fatalf("kafka-python:\n%s", out)
	}
	t.Logf("kafka-python:\n%s", out)
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
	script, err := filepath.Abs(filepath.Join("testdata", "compat_kafka_python_errors.py"))
	if err != nil {
		t.Fatal(err)
	}
	out, _ := runBounded(t, 30*time.Second, "", py, script, strings.Join(c.Addrs(), ","))
	if !strings.HasSuffix(out, "OK\n") {
		t.Fatalf("kafka-python:\n%s", out)
	}
	t.Logf("kafka-python:\n%s", out)
}
