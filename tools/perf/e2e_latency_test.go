package perf

import (
	"regexp"
	"strings"
	"testing"

	"samsa/broker/brokertest"
	"samsa/tools/internal/tool"
)

func TestToolE2ELatencyJavaCompat(t *testing.T) {
	// Output of java.util.Random(0).nextInt(26)+65 (checked with OpenJDK 17).
	r := newJavaRandom(0)
	var sb strings.Builder
	for i := 0; i < 40; i++ {
		sb.WriteByte(byte(r.nextInt(26) + 65))
	}
	if got := sb.String(); got != "SSXVNJHPDQDXVCRASTVYBCWVMGNYKRXVZXKGXTSP" {
		t.Errorf("javaRandom: %s", got)
	}
	for f, want := range map[float64]string{12: "12.0", 0.5: "0.5", 0.000123: "1.23E-4", 12345678.9: "1.23456789E7", 3.14159: "3.14159"} {
		if got := tool.JavaDouble(f); got != want {
			t.Errorf("javaDouble(%v) = %s, want %s", f, got, want)
		}
	}
}

func TestToolE2ELatencyArgs(t *testing.T) {
	_, errOut, code := runTool(t, "", "kafka-e2e-latency", "h:9092", "t", "10")
	if code != 1 || errOut != e2eUsage+"\n" {
		t.Errorf("too few args: exit %d %q", code, errOut)
	}
	_, errOut, code = runTool(t, "", "kafka-e2e-latency", "h:9092", "t", "10", "0", "20")
	if code != 1 || !strings.Contains(errOut, "Latency testing requires synchronous acknowledgement. Please use 1 or all") {
		t.Errorf("acks=0: exit %d %q", code, errOut)
	}
	_, errOut, code = runTool(t, "", "kafka-e2e-latency", "h:9092", "t", "ten", "1", "20")
	if code != 1 || !strings.Contains(errOut, `NumberFormatException: For input string: "ten"`) {
		t.Errorf("bad count: exit %d %q", code, errOut)
	}
}

func TestToolE2ELatencyCluster(t *testing.T) {
	c := brokertest.NewCluster(t, 1)
	out, errOut, code := runTool(t, "", "kafka-e2e-latency", c.Addr(0), "e2e", "5", "all", "20")
	if code != 0 {
		t.Fatalf("exit %d\nstdout:\n%s\nstderr:\n%s", code, out, errOut)
	}
	want := regexp.MustCompile(`^Topic "e2e" does not exist\. Will create topic with 1 partition\(s\) and replication factor = 1\n` +
		`0\t\d+\.\d+(E-?\d+)?\n` +
		`Avg latency: \d+\.\d{4} ms\n\n` +
		`Percentiles: 50th = \d+, 99th = \d+, 99\.9th = \d+\n$`)
	if !want.MatchString(out) {
		t.Errorf("output does not have Kafka's shape:\n%s", out)
	}
	// The topic exists now: no creation line the second time.
	out, _, code = runTool(t, "", "kafka-e2e-latency", c.Addr(0), "e2e", "2", "1", "5")
	if code != 0 || strings.HasPrefix(out, "Topic") || !strings.Contains(out, "Percentiles: ") {
		t.Errorf("second run: exit %d\n%s", code, out)
	}
}
