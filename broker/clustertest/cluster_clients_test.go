package clustertest_test

import (
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"strings"
	"testing"
	"time"

	"samsa/broker/brokertest"
)

// needTool returns the path of an external client, skipping the test only
// when it is missing outside CI (in CI the clients must run).
func needTool(t *testing.T, path string) string {
	t.Helper()
	p, err := exec.LookPath(path)
	if err == nil {
		return p
	}
	if os.Getenv("CI") != "" {
		t.Fatalf("%s is required in CI: %v", path, err)
	}
	t.Skipf("%s not installed (apt-get install kcat python3-kafka): %v", path, err)
	return ""
}

// run is runBounded with a minute's deadline: the command's stdout.
func run(t *testing.T, stdin string, name string, args ...string) string {
	t.Helper()
	out, _ := runBounded(t, 60*time.Second, stdin, name, args...)
	return out
}

// TestClusterKcat: librdkafka (kcat) lists metadata as JSON, produces,
// consumes to the end and queries offsets against a 3-broker cluster.
func TestClusterKcat(t *testing.T) {
	kcat := needTool(t, "kcat")
	c := brokertest.NewCluster(t, 3, brokertest.WithProperty("offsets.topic.num.partitions", "3"))
	c.CreateTopic(t, "kc", 2, 3)
	bootstrap := strings.Join(c.Addrs(), ",")

	var md struct {
		Brokers []struct {
			ID   int32  `json:"id"`
			Name string `json:"name"`
		} `json:"brokers"`
		Topics []struct {
			Topic      string `json:"topic"`
			Partitions []struct {
				Partition int32 `json:"partition"`
				Leader    int32 `json:"leader"`
				Replicas  []struct {
					ID int32 `json:"id"`
				} `json:"replicas"`
				ISRs []struct {
					ID int32 `json:"id"`
				} `json:"isrs"`
			} `json:"partitions"`
		} `json:"topics"`
	}
	out := run(t, "", kcat, "-b", bootstrap, "-L", "-J", "-t", "kc")
	if err := json.Unmarshal([]byte(out), &md); err != nil {
		t.Fatalf("kcat -L -J: %v\n%s", err, out)
	}
	if len(md.Brokers) != 3 || len(md.Topics) != 1 || len(md.Topics[0].Partitions) != 2 {
		t.Fatalf("metadata: %s", out)
	}
	for _, p := range md.Topics[0].Partitions {
		if len(p.Replicas) != 3 || len(p.ISRs) != 3 || p.Leader < 0 {
			t.Fatalf("partition %+v", p)
		}
	}

	var in strings.Builder
	for i := 0; i < 20; i++ {
		fmt.Fprintf(&in, "msg-%d\n", i)
	}
	run(t, in.String(), kcat, "-b", bootstrap, "-P", "-t", "kc", "-p", "0", "-X", "acks=all")
	got := run(t, "", kcat, "-b", bootstrap, "-C", "-t", "kc", "-p", "0", "-o", "beginning", "-e", "-q")
	lines := strings.Split(strings.TrimSpace(got), "\n")
	if len(lines) != 20 || lines[0] != "msg-0" || lines[19] != "msg-19" {
		t.Fatalf("consumed %d lines: %q", len(lines), got)
	}
	// -G: a balanced consumer group (librdkafka's group protocol).
	grp := run(t, "", kcat, "-b", bootstrap, "-G", "kcgroup", "-o", "beginning", "-e", "-q", "-X", "topic.auto.offset.reset=earliest", "kc")
	if n := len(strings.Split(strings.TrimSpace(grp), "\n")); n != 20 {
		t.Fatalf("kcat -G consumed %d lines: %q", n, grp)
	}
	// -Q: offset for a timestamp in the past is the first offset.
	q := run(t, "", kcat, "-b", bootstrap, "-Q", "-t", "kc:0:1")
	if !strings.Contains(q, "kc [0] offset 0") {
		t.Fatalf("kcat -Q: %q", q)
	}
}

// TestClusterKafkaPython: kafka-python produces with acks=all and consumes
// everything back against a 3-broker cluster.
func TestClusterKafkaPython(t *testing.T) {
	py := needTool(t, "/usr/bin/python3")
	if err := exec.Command(py, "-c", "import kafka").Run(); err != nil {
		if os.Getenv("CI") != "" {
			t.Fatalf("python3-kafka is required in CI: %v", err)
		}
		t.Skipf("python3-kafka not installed: %v", err)
	}
	c := brokertest.NewCluster(t, 3, brokertest.WithProperty("offsets.topic.num.partitions", "3"))
	c.CreateTopic(t, "py", 3, 3)
	script := `
import sys
from kafka import KafkaProducer, KafkaConsumer
bs = sys.argv[1].split(",")
p = KafkaProducer(bootstrap_servers=bs, acks="all", retries=5)
for i in range(30):
    p.send("py", key=("k%d" % (i % 5)).encode(), value=("v%d" % i).encode()).get(timeout=30)
p.flush()
p.close()
c = KafkaConsumer("py", bootstrap_servers=bs, auto_offset_reset="earliest",
                  enable_auto_commit=False, group_id=None, consumer_timeout_ms=15000)
vals = sorted(int(m.value.decode()[1:]) for _, m in zip(range(30), c))
c.close()
print("got", len(vals), vals == list(range(30)))
g = KafkaConsumer("py", bootstrap_servers=bs, auto_offset_reset="earliest",
                  group_id="pygroup", enable_auto_commit=False, consumer_timeout_ms=30000)
gvals = sorted(int(m.value.decode()[1:]) for _, m in zip(range(30), g))
g.commit()
committed = sum(g.committed(tp) or 0 for tp in g.assignment())
g.close()
print("group", len(gvals), committed)
`
	out := run(t, "", py, "-c", script, strings.Join(c.Addrs(), ","))
	if strings.TrimSpace(out) != "got 30 True\ngroup 30 30" {
		t.Fatalf("kafka-python: %q", out)
	}
}
