package clustertest_test

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"os/exec"
	"strings"
	"testing"
	"time"

	"samsa/broker/brokertest"
)

// runKcatStatus runs kcat and returns stdout, stderr and whether it exited 0.
func runKcatStatus(t *testing.T, stdin string, kcat string, args ...string) (string, string, bool) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	cmd := exec.CommandContext(ctx, kcat, args...)
	cmd.Stdin = strings.NewReader(stdin)
	var out, errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errb
	err := cmd.Run()
	if ctx.Err() != nil {
		t.Fatalf("kcat %v did not finish: %s", args, errb.String())
	}
	return out.String(), errb.String(), err == nil
}

// TestCompatKcatErrors: the error paths librdkafka relies on. With
// auto-creation on, a producer creates its topic (after
// LEADER_NOT_AVAILABLE) while a consumer's metadata request
// (allow_auto_topic_creation=false) does not; a record above the topic's
// max.message.bytes is refused with MESSAGE_TOO_LARGE; a start offset past
// the end (OFFSET_OUT_OF_RANGE) is reset by auto.offset.reset.
func TestCompatKcatErrors(t *testing.T) {
	kcat := needTool(t, "kcat")
	c := brokertest.NewCluster(t, 1, brokertest.WithProperty("auto.create.topics.enable", "true"),
		brokertest.WithProperty("num.partitions", "2"))
	bootstrap := c.Addr(0)

	// Producer auto-creation.
	runBounded(t, 20*time.Second, "a\nb\n", kcat, "-b", bootstrap, "-P", "-t", "kc-auto", "-X", "message.timeout.ms=15000")
	msgs := kcatJSON(t, kcat, bootstrap, "kc-auto", 0, "beginning")
	more := kcatJSON(t, kcat, bootstrap, "kc-auto", 1, "beginning")
	if len(msgs)+len(more) != 2 {
		t.Fatalf("auto-created topic holds %d + %d records", len(msgs), len(more))
	}
	// A consumer does not create topics (librdkafka's allow.auto.create.topics=false).
	out, errOut, _ := runKcatStatus(t, "", kcat, "-b", bootstrap, "-C", "-t", "kc-not-created", "-o", "beginning", "-e", "-q",
		"-X", "topic.metadata.refresh.interval.ms=200", "-m", "2")
	if _, ok := c.Broker(0).Metadata().Partition("kc-not-created", 0); ok {
		t.Fatalf("a consumer's metadata request created the topic (stdout %q stderr %q)", out, errOut)
	}
	var md struct {
		Topics []struct {
			Topic string `json:"topic"`
			Err   string `json:"error"`
		} `json:"topics"`
	}
	out, _ = runBounded(t, 20*time.Second, "", kcat, "-b", bootstrap, "-L", "-J", "-t", "kc-auto")
	if err := json.Unmarshal([]byte(out), &md); err != nil || len(md.Topics) != 1 || md.Topics[0].Topic != "kc-auto" {
		t.Fatalf("metadata of kc-auto: %v %s", err, out)
	}

	// MESSAGE_TOO_LARGE.
	c.CreateTopic(t, "kc-small", 1, 1, map[string]*string{"max.message.bytes": strp("2000")})
	_, errOut, ok := runKcatStatus(t, strings.Repeat("x", 5000)+"\n", kcat, "-b", bootstrap, "-P", "-t", "kc-small",
		"-X", "message.timeout.ms=5000")
	if ok || !strings.Contains(errOut, "Message size too large") {
		t.Fatalf("a 5000-byte record into max.message.bytes=2000: ok=%v stderr %q", ok, errOut)
	}
	runBounded(t, 20*time.Second, "small\n", kcat, "-b", bootstrap, "-P", "-t", "kc-small")
	if msgs := kcatJSON(t, kcat, bootstrap, "kc-small", 0, "beginning"); len(msgs) != 1 || derefOr(msgs[0].Payload, "") != "small" {
		t.Fatalf("kc-small holds %+v", msgs)
	}

	// OFFSET_OUT_OF_RANGE answered by auto.offset.reset.
	c.CreateTopic(t, "kc-range", 1, 1)
	var in strings.Builder
	for i := 0; i < 10; i++ {
		fmt.Fprintf(&in, "r%d\n", i)
	}
	runBounded(t, 20*time.Second, in.String(), kcat, "-b", bootstrap, "-P", "-t", "kc-range", "-p", "0")
	if msgs := kcatJSON(t, kcat, bootstrap, "kc-range", 0, "1000", "-X", "auto.offset.reset=earliest"); len(msgs) != 10 || msgs[0].Offset != 0 {
		t.Fatalf("reset to earliest read %+v", msgs)
	}
	if msgs := kcatJSON(t, kcat, bootstrap, "kc-range", 0, "1000", "-X", "auto.offset.reset=latest"); len(msgs) != 0 {
		t.Fatalf("reset to latest read %+v", msgs)
	}
	_, errOut, ok = runKcatStatus(t, "", kcat, "-b", bootstrap, "-C", "-t", "kc-range", "-p", "0", "-o", "1000", "-e",
		"-X", "auto.offset.reset=error")
	if ok || !strings.Contains(errOut, "out of range") {
		t.Fatalf("auto.offset.reset=error: ok=%v stderr %q", ok, errOut)
	}
}
