package console

import (
	"context"
	"regexp"
	"sort"
	"strings"
	"testing"
	"time"

	"samsa/tools/internal/tooltest"
	"samsa/tools/zkconsumer"
)

func TestToolConsoleConsumerZK(t *testing.T) {
	c := tooltest.GroupFixture(t)
	out, errOut, code := runTool(t, "", "kafka-console-consumer", "--zookeeper", c.ZKConnect(), "--topic", "cg",
		"--from-beginning", "--max-messages", "5", "--group", "console-zk", "--timeout-ms", "30000")
	lines := strings.Split(strings.TrimSuffix(out, "\n"), "\n")
	sort.Strings(lines)
	if code != 0 || strings.Join(lines, ",") != "m0-0,m0-1,m0-2,m1-0,m1-1" || !strings.HasSuffix(errOut, "Processed a total of 5 messages\n") {
		t.Fatalf("code %d stdout %q stderr %q", code, out, errOut)
	}
	// The group committed its offsets to ZooKeeper at exit.
	out, _, _ = runTool(t, "", "kafka-consumer-groups", "--zookeeper", c.ZKConnect(), "--describe", "--group", "console-zk")
	if !regexp.MustCompile(`(?m)^cg +0 +3 +3 +0 +- +$`).MatchString(out) || !regexp.MustCompile(`(?m)^cg +1 +2 +2 +0 +- +$`).MatchString(out) {
		t.Errorf("describe after the console consumer: %q", out)
	}
	// --from-beginning would be ignored for a group with offsets: refused.
	_, errOut, code = runTool(t, "", "kafka-console-consumer", "--zookeeper", c.ZKConnect(), "--topic", "cg",
		"--from-beginning", "--max-messages", "1", "--group", "console-zk")
	if code != 1 || errOut != "Found previous offset information for this group console-zk. Please use --delete-consumer-offsets to delete previous offsets metadata\n" {
		t.Errorf("existing offsets: code %d stderr %q", code, errOut)
	}
	out, errOut, code = runTool(t, "", "kafka-console-consumer", "--zookeeper", c.ZKConnect(), "--topic", "cg",
		"--from-beginning", "--max-messages", "5", "--group", "console-zk", "--delete-consumer-offsets", "--timeout-ms", "30000")
	if code != 0 || len(strings.Split(strings.TrimSuffix(out, "\n"), "\n")) != 5 {
		t.Errorf("--delete-consumer-offsets: code %d stdout %q stderr %q", code, out, errOut)
	}
	// A generated group is removed at exit.
	out, errOut, code = runTool(t, "", "kafka-console-consumer", "--zookeeper", c.ZKConnect(), "--topic", "cg", "--from-beginning", "--max-messages", "1")
	if code != 0 || !regexp.MustCompile(`^m[01]-0\n$`).MatchString(out) {
		t.Fatalf("generated group: code %d stdout %q stderr %q", code, out, errOut)
	}
	out, _, _ = runTool(t, "", "kafka-consumer-groups", "--zookeeper", c.ZKConnect(), "--list")
	if out != "console-zk\n" {
		t.Errorf("list: %q", out)
	}
}

func TestToolConsumerGroupsZKDescribe(t *testing.T) {
	c := tooltest.GroupFixture(t)
	cfg := zkconsumer.DefaultConfig()
	cfg.GroupID, cfg.ZooKeeperConnect, cfg.AutoOffsetReset, cfg.ConsumerID = "zkg", c.ZKConnect(), zkconsumer.ResetSmallest, "m1"
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	conn, err := zkconsumer.NewConnector(ctx, cfg)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	streams, err := conn.CreateMessageStreams(ctx, map[string]int{"cg": 1})
	if err != nil {
		t.Fatal(err)
	}
	for i := 0; i < 5; i++ {
		if _, err := streams["cg"][0].Next(ctx); err != nil {
			t.Fatal(err)
		}
	}
	streams["cg"][0].MarkDone()
	if err := conn.CommitOffsets(ctx); err != nil {
		t.Fatal(err)
	}
	out, errOut, code := runTool(t, "", "kafka-consumer-groups", "--zookeeper", c.ZKConnect(), "--describe", "--group", "zkg")
	want := "\n" + strings.Join([]string{
		padRow("TOPIC", "PARTITION", "CURRENT-OFFSET", "LOG-END-OFFSET", "LAG", "OWNER"),
		padRow("cg", "0", "3", "3", "0", "zkg_m1-0"),
		padRow("cg", "1", "2", "2", "0", "zkg_m1-0"),
	}, "\n") + "\n"
	if code != 0 || out != want {
		t.Errorf("code %d stderr %q stdout\n%q\nwant\n%q", code, errOut, out, want)
	}
	if !strings.HasPrefix(errOut, "Note: This will only show information about consumers that use ZooKeeper") {
		t.Errorf("stderr %q", errOut)
	}
	out, _, _ = runTool(t, "", "kafka-consumer-groups", "--zookeeper", c.ZKConnect(), "--list")
	if out != "zkg\n" {
		t.Errorf("list: %q", out)
	}
}

func padRow(cols ...string) string {
	return strings.Join([]string{pad(cols[0], 30), pad(cols[1], 10), pad(cols[2], 15), pad(cols[3], 15), pad(cols[4], 10), pad(cols[5], 50)}, " ")
}

func pad(s string, n int) string { return s + strings.Repeat(" ", max(0, n-len(s))) }
