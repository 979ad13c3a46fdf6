package clustertest_test

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"testing"
	"time"

	"samsa/broker/brokertest"
)

// TestClusterFaultProducerPerf is the replication benchmark of
// docs/benchmarks.md, not a correctness test: `samsa
// kafka-producer-perf-test` with 100-byte records at acks=1 and acks=all
// against 3 broker processes, RF=3, min.insync.replicas=2. It runs only
// with SAMSA_REPLICATION_PERF=<records> (for example 500000); each run
// uses a fresh topic of SAMSA_REPLICATION_PERF_PARTITIONS partitions
// (default 3) and the perf tool's last line is logged.
func TestClusterFaultProducerPerf(t *testing.T) {
	n := os.Getenv("SAMSA_REPLICATION_PERF")
	if n == "" {
		t.Skip("set SAMSA_REPLICATION_PERF=<records> to run the replication benchmark")
	}
	if _, err := strconv.Atoi(n); err != nil {
		t.Fatalf("SAMSA_REPLICATION_PERF=%q: %v", n, err)
	}
	parts := int32(3)
	if s := os.Getenv("SAMSA_REPLICATION_PERF_PARTITIONS"); s != "" {
		v, err := strconv.Atoi(s)
		if err != nil || v < 1 || v > 100 {
			t.Fatalf("SAMSA_REPLICATION_PERF_PARTITIONS=%q", s)
		}
		parts = int32(v)
	}
	c := brokertest.NewProcCluster(t, 3, brokertest.WithProperty("min.insync.replicas", "2"),
		brokertest.WithProperty("log.level", "warn"))
	bin := brokertest.SamsaBinary(t)
	bootstrap := strings.Join(c.Addrs(), ",")
	for run, acks := range []string{"1", "all", "1", "all", "1", "all"} {
		topic := fmt.Sprintf("perf-%d", run)
		c.CreateTopic(t, topic, parts, 3, nil)
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
		args := []string{"kafka-producer-perf-test", "--topic", topic, "--num-records", n, "--record-size", "100",
			"--throughput", "-1", "--producer-props", "bootstrap.servers=" + bootstrap, "acks=" + acks}
		out, err := exec.CommandContext(ctx, bin, args...).CombinedOutput()
		cancel()
		if err != nil {
			t.Fatalf("%v: %v\n%s", args, err, out)
		}
		lines := strings.Split(strings.TrimSpace(string(out)), "\n")
		t.Logf("partitions=%d acks=%s: %s", parts, acks, lines[len(lines)-1])
	}
}
