package perf

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"samsa/broker/brokertest"
	"samsa/tools/internal/tool"
	"samsa/tools/internal/tooltest"
)

func TestToolPerfJavaFormats(t *testing.T) {
	for _, tc := range []struct {
		f    float64
		d    int
		want string
	}{
		{0.125, 2, "0.13"}, {2.675, 2, "2.68"}, {71.7151, 2, "71.72"}, {751992.780869, 6, "751992.780869"},
		{9.995, 2, "10.00"}, {0, 4, "0.0000"}, {-1.5, 0, "-2"}, {1.0 / 3, 1, "0.3"},
	} {
		if got := javaFixed(tc.f, tc.d); got != tc.want {
			t.Errorf("javaFixed(%v, %d) = %s, want %s", tc.f, tc.d, got, tc.want)
		}
	}
	var zero float64
	if got := javaFixed(1/zero, 4); got != "Infinity" {
		t.Errorf("Inf: %s", got)
	}
	l, err := tool.ParseJavaDate("yyyy-MM-dd HH:mm:ss:SSS")
	if err != nil {
		t.Fatal(err)
	}
	ts := time.Date(2026, 3, 4, 5, 6, 7, 89*int(time.Millisecond), time.Local)
	if got := l.Format(ts); got != "2026-03-04 05:06:07:089" {
		t.Errorf("date: %s", got)
	}
	l, _ = tool.ParseJavaDate("EEE, d MMM yy 'at' h:mm a")
	if got := l.Format(ts); got != "Wed, 4 Mar 26 at 5:06 AM" {
		t.Errorf("date: %s", got)
	}
	if _, err := tool.ParseJavaDate("yyyy-qq"); err == nil || !strings.Contains(err.Error(), "Illegal pattern character 'q'") {
		t.Errorf("bad pattern: %v", err)
	}
}

func TestToolPerfProducerStats(t *testing.T) {
	now := int64(1000)
	var out bytes.Buffer
	s := newProducerStats(10, perfReportingInterval, &out, func() int64 { return now })
	for i := int64(0); i < 10; i++ {
		now += 600 // crosses the 5 s window at the 9th completion
		s.record(i, int32(i+1), 100, now)
	}
	now = 1000 + 8000
	s.printTotal()
	tooltest.CheckGolden(t, "producer_perf_stats", out.Bytes())

	th := tool.NewThroughputThrottler(100, 0)
	if th.ShouldThrottle(50, 0) || th.ShouldThrottle(99, 1000) || !th.ShouldThrottle(101, 1000) {
		t.Error("shouldThrottle does not follow Kafka's rate test")
	}
	if tool.NewThroughputThrottler(-1, 0).ShouldThrottle(1<<40, 1) {
		t.Error("-1 throttled")
	}
}

func TestToolPerfProducerArgs(t *testing.T) {
	o, err := parseProducerPerfArgs([]string{"--topic", "t", "--num-records", "10", "--record-size", "5", "--throughput", "-1",
		"--producer-props", "bootstrap.servers=h:1", "acks=all", "--print-metrics"})
	if err != nil || o.topic != "t" || o.numRecords != 10 || o.recordSize != 5 || o.throughput != -1 ||
		strings.Join(o.props, " ") != "bootstrap.servers=h:1 acks=all" || !o.printMetrics {
		t.Fatalf("%+v %v", o, err)
	}
	for args, want := range map[string]string{
		"--topic t --num-records 1 --throughput 1 --producer-props a=b":                                  "one of the arguments --record-size --payload-file is required",
		"--topic t --num-records 1 --record-size 1 --payload-file f --throughput 1 --producer-props a=b": "argument --payload-file: not allowed with argument --record-size",
		"--num-records 1 --record-size 1 --throughput 1 --producer-props a=b":                            "argument --topic is required",
		"--topic t --num-records x --record-size 1 --throughput 1":                                       "argument --num-records: could not convert 'x' to Long",
		"--topic t --num-records 1 --record-size 1 --throughput 1":                                       "Either --producer-props or --producer.config must be specified.",
		"--topic t --bogus": "unrecognized arguments: '--bogus'",
	} {
		if _, err := parseProducerPerfArgs(strings.Fields(args)); err == nil || err.Error() != want {
			t.Errorf("%s: %v, want %s", args, err, want)
		}
	}
	_, errOut, code := runTool(t, "", "kafka-producer-perf-test", "--topic", "t", "--num-records", "1", "--record-size", "1", "--throughput", "1", "--producer-props", "acks")
	if code != 1 || !strings.Contains(errOut, "IllegalArgumentException: Invalid property: acks") {
		t.Errorf("bad property: exit %d %q", code, errOut)
	}
}

var (
	perfWindowRe = regexp.MustCompile(`^\d+ records sent, \d+\.\d records/sec \(\d+\.\d{2} MB/sec\), \d+\.\d ms avg latency, \d+\.\d ms max latency\.$`)
	perfTotalRe  = regexp.MustCompile(`^(\d+) records sent, (\d+\.\d{6}) records/sec \(\d+\.\d{2} MB/sec\), \d+\.\d{2} ms avg latency, \d+\.\d{2} ms max latency, \d+ ms 50th, \d+ ms 95th, \d+ ms 99th, \d+ ms 99\.9th\.$`)
	perfCSVRe    = regexp.MustCompile(`^\d{4}-\d\d-\d\d \d\d:\d\d:\d\d:\d{3}, \d{4}-\d\d-\d\d \d\d:\d\d:\d\d:\d{3}, \d+\.\d{4}, \d+\.\d{4}, (\d+), \d+\.\d{4}, \d+, \d+, \d+\.\d{4}, \d+\.\d{4}$`)
)

func TestToolPerfCluster(t *testing.T) {
	c := brokertest.NewCluster(t, 1)
	c.CreateTopic(t, "perf", 2, 1)
	boot := c.Addr(0)
	out, errOut, code := runTool(t, "", "kafka-producer-perf-test", "--topic", "perf", "--num-records", "3000", "--record-size", "100",
		"--throughput", "-1", "--producer-props", "bootstrap.servers="+boot, "acks=all", "linger.ms=5", "batch.size=16384",
		"compression.type=lz4", "max.in.flight.requests.per.connection=5", "--print-metrics")
	if code != 0 || errOut != "" {
		t.Fatalf("producer: exit %d\n%s\nstderr: %s", code, out, errOut)
	}
	t.Logf("kafka-producer-perf-test:\n%s", out)
	lines := strings.Split(out, "\n")
	total := -1
	for i, l := range lines {
		if perfTotalRe.MatchString(l) {
			total = i
			break
		}
		if !perfWindowRe.MatchString(l) {
			t.Errorf("line %d is not a window line: %q", i, l)
		}
	}
	if total < 0 || perfTotalRe.FindStringSubmatch(lines[total])[1] != "3000" {
		t.Fatalf("no total line for 3000 records:\n%s", out)
	}
	if !strings.Contains(out, "\nMetric Name") || !regexp.MustCompile(`\nproducer-metrics:record-send-rate:\{client-id=perf-producer-client\} +: \d+\.\d{3}\n`).MatchString(out) {
		t.Errorf("metrics not in Kafka's layout:\n%s", out)
	}

	// batch.size with Kafka's default linger.ms=0: the last short batch is sent at once, so
	// the run ends (7 records never fill a 16 KiB batch).
	c.CreateTopic(t, "perf-nolinger", 1, 1)
	done := make(chan string, 1)
	go func() {
		out, errOut, code := runTool(t, "", "kafka-producer-perf-test", "--topic", "perf-nolinger", "--num-records", "7", "--record-size", "100",
			"--throughput", "-1", "--producer-props", "bootstrap.servers="+boot, "batch.size=16384")
		done <- fmt.Sprintf("exit %d\n%s\nstderr: %s", code, out, errOut)
	}()
	select {
	case res := <-done:
		if !strings.HasPrefix(res, "exit 0\n") || !strings.Contains(res, "7 records sent") {
			t.Fatalf("batch.size without linger.ms: %s", res)
		}
	case <-time.After(60 * time.Second):
		t.Fatal("batch.size without linger.ms: the producer perf test did not finish within 60 s")
	}

	// Throttled: 2000 records at 1000/s take more than a second (Kafka's
	// throttler starts once a millisecond has passed, so a burst goes first).
	payloads := filepath.Join(t.TempDir(), "payloads.txt")
	if err := os.WriteFile(payloads, []byte("alpha|beta|gamma||"), 0o644); err != nil {
		t.Fatal(err)
	}
	start := time.Now()
	out, errOut, code = runTool(t, "", "kafka-producer-perf-test", "--topic", "perf", "--num-records", "2000", "--payload-file", payloads,
		"--payload-delimiter", `\|`, "--throughput", "1000", "--producer-props", "bootstrap.servers="+boot)
	lines = strings.Split(strings.TrimSuffix(out, "\n"), "\n")
	if code != 0 || errOut != "" || len(lines) != 3 || !strings.HasPrefix(lines[0], "Reading payloads from: ") ||
		lines[1] != "Number of messages read: 3" || !perfTotalRe.MatchString(lines[2]) {
		t.Fatalf("payload file: exit %d\n%s\nstderr: %s", code, out, errOut)
	}
	if el := time.Since(start); el < time.Second {
		t.Errorf("2000 records at 1000/s took only %v", el)
	}

	// The consumer reads the 5000 records through a group; a second run of
	// the same group finds nothing left and times out with Kafka's warning.
	out, errOut, code = runTool(t, "", "kafka-consumer-perf-test", "--bootstrap-server", boot, "--topic", "perf", "--messages", "5000", "--group", "perf-g", "--timeout", "20000")
	t.Logf("kafka-consumer-perf-test:\n%s", out)
	lines = strings.Split(strings.TrimSuffix(out, "\n"), "\n")
	if code != 0 || len(lines) != 2 || lines[0] != consumerPerfHeader || !perfCSVRe.MatchString(lines[1]) {
		t.Fatalf("consumer: exit %d\n%s\nstderr: %s", code, out, errOut)
	}
	if n := perfCSVRe.FindStringSubmatch(lines[1])[1]; n != "5000" {
		t.Errorf("consumed %s records, want 5000", n)
	}
	out, _, code = runTool(t, "", "kafka-consumer-perf-test", "--bootstrap-server", boot, "--topic", "perf", "--messages", "10", "--group", "perf-g", "--timeout", "1500", "--hide-header")
	want := "WARNING: Exiting before consuming the expected number of messages: timeout (1500 ms) exceeded. You can use the --timeout option to increase the timeout.\n"
	if code != 0 || !strings.HasPrefix(out, want) || !perfCSVRe.MatchString(strings.TrimSuffix(strings.TrimPrefix(out, want), "\n")) {
		t.Errorf("second run of the group: exit %d\n%s", code, out)
	}
	out, _, code = runTool(t, "", "kafka-consumer-perf-test", "--broker-list", boot, "--topic", "perf", "--messages", "100", "--show-detailed-stats", "--reporting-interval", "1", "--print-metrics")
	if code != 0 || !strings.HasPrefix(out, consumerPerfDetail+"\n") || strings.Count(out, ", 0, ") == 0 {
		t.Errorf("detailed stats: exit %d\n%s", code, out)
	}
	if !regexp.MustCompile(`\nconsumer-metrics:incoming-byte-rate:\{client-id=perf-consumer-client\} +: \d+\.\d{3}\n`).MatchString(out) {
		t.Errorf("consumer metrics missing:\n%s", out)
	}
}
