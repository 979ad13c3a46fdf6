package serverstart

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"sort"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/sirupsen/logrus"

	"samsa/internal/testwait"
	"samsa/tools/internal/tool"
	"samsa/tools/internal/tooltest"
	"samsa/zkutil"
	"samsa/zkutil/zktest"
)

// syncBuffer is a bytes.Buffer safe for the broker's logging goroutines.
type syncBuffer struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

func (b *syncBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.Write(p)
}

func (b *syncBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.String()
}

func TestToolServerStartArgs(t *testing.T) {
	path, ov, err := parseServerArgs([]string{"s.properties", "--override", "broker.id=2", "--override=log.dirs=/x"})
	if err != nil || path != "s.properties" || strings.Join(ov, " ") != "broker.id=2 log.dirs=/x" {
		t.Fatalf("got %q %q %v", path, ov, err)
	}
	for _, bad := range [][]string{{}, {"--override", "a=b"}, {"s", "--override"}, {"s", "extra"}} {
		if _, _, err := parseServerArgs(bad); err == nil {
			t.Errorf("%q accepted", bad)
		}
	}
	_, errOut, code := runTool(t, "", "kafka-server-start")
	if code != 1 || !strings.Contains(errOut, "USAGE:") {
		t.Errorf("no args: code %d stderr %q", code, errOut)
	}
	dir := t.TempDir()
	props := filepath.Join(dir, "server.properties")
	os.WriteFile(props, []byte("num.partitions=zero\n"), 0o644)
	_, errOut, code = runTool(t, "", "kafka-server-start", props, "--override", "message.max.bytes=-1")
	if code != 1 || !strings.Contains(errOut, "num.partitions") || !strings.Contains(errOut, "message.max.bytes") || !strings.Contains(errOut, "zookeeper.connect") {
		t.Errorf("bad config: code %d stderr %q", code, errOut)
	}
}

// TestToolServerStartEndToEnd starts a broker through kafka-server-start,
// then drives it with kafka-topics and the console producer and consumer,
// all in-process, and stops it by ending tool.Env.Context (as SIGTERM would).
func TestToolServerStartEndToEnd(t *testing.T) {
	b := startServerForTest(t)
	checkServerStartTopics(t, b.bootstrap)
	checkServerStartConsole(t, b.bootstrap)
	checkServerStartConfigs(t, b.bootstrap)
	checkServerStartPerf(t, b.bootstrap)
	checkServerStartZooKeeperAndDelete(t, b.bootstrap, b.connect)
	b.stop(t)
}

// serverStartBroker is a broker run by kafka-server-start in this process.
type serverStartBroker struct {
	bootstrap, connect string
	cancel             context.CancelFunc // stops the broker
	exited             chan int           // kafka-server-start's exit code
	zk                 *zkutil.Client
}

// startServerForTest writes a server.properties, runs kafka-server-start
// on it (with an --override) and waits for the broker's registration in
// ZooKeeper. The broker's log is printed if the test fails.
func startServerForTest(t *testing.T) *serverStartBroker {
	srv := zktest.Start(t)
	connect := srv.Chroot(t)
	dir := t.TempDir()
	port := tooltest.FreePort(t)
	bootstrap := fmt.Sprintf("127.0.0.1:%d", port)
	props := filepath.Join(dir, "server.properties")
	content := fmt.Sprintf("broker.id=1\nlisteners=PLAINTEXT://%s\nlog.dirs=%s\nzookeeper.connect=%s\n"+
		"offsets.topic.replication.factor=1\ngroup.initial.rebalance.delay.ms=0\nlog.segment.bytes=1073741824\n", bootstrap, filepath.Join(dir, "logs"), connect)
	if err := os.WriteFile(props, []byte(content), 0o644); err != nil {
		t.Fatal(err)
	}
	logs := &syncBuffer{}
	logger := logrus.New()
	logger.SetOutput(logs)
	logger.SetLevel(logrus.InfoLevel)
	ctx, cancel := context.WithCancel(context.Background())
	t.Cleanup(cancel)
	exited := make(chan int, 1)
	go func() {
		exited <- runApp([]string{"samsa", "kafka-server-start", props, "--override", "auto.create.topics.enable=false"},
			tool.Env{Stdout: logs, Stderr: logs, Logger: logger, Context: ctx})
	}()
	t.Cleanup(func() {
		if t.Failed() {
			t.Logf("broker log:\n%s", logs.String())
		}
	})

	zctx, zcancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer zcancel()
	zk, err := zkutil.Connect(zctx, zkutil.Config{Connect: connect})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(zk.Close)
	testwait.For(t, 30*time.Second, func() error {
		select {
		case code := <-exited:
			t.Fatalf("kafka-server-start exited with %d", code)
		default:
		}
		ids, err := zk.GetBrokerIDs()
		if err != nil || len(ids) != 1 || ids[0] != 1 {
			return fmt.Errorf("broker ids %v, %v", ids, err)
		}
		return nil
	})
	return &serverStartBroker{bootstrap: bootstrap, connect: connect, cancel: cancel, exited: exited, zk: zk}
}

// checkServerStartTopics creates topics by count and by assignment, and
// lists them.
func checkServerStartTopics(t *testing.T, bootstrap string) {
	out, errOut, code := runTool(t, "", "kafka-topics", "--bootstrap-server", bootstrap, "--create", "--topic", "greetings", "--partitions", "2", "--replication-factor", "1")
	if code != 0 || out != "Created topic greetings.\n" {
		t.Fatalf("create: %d %q %q", code, out, errOut)
	}
	testwait.For(t, 20*time.Second, func() error {
		out, errOut, code := runTool(t, "", "kafka-topics", "--bootstrap-server", bootstrap, "--describe", "--topic", "greetings")
		if code != 0 || strings.Count(out, "\tLeader: 1\t") != 2 {
			return fmt.Errorf("describe: %d %q %q", code, out, errOut)
		}
		return nil
	})
	out, errOut, code = runTool(t, "", "kafka-topics", "--bootstrap-server", bootstrap, "--create", "--topic", "manual", "--replica-assignment", "1,1")
	if code != 0 || out != "Created topic manual.\n" {
		t.Fatalf("create with assignment: %d %q %q", code, out, errOut)
	}
	out, errOut, code = runTool(t, "", "kafka-topics", "--bootstrap-server", bootstrap, "--create", "--topic", "manual", "--partitions", "1")
	if code != 1 || out != "Error while executing topic command : Topic 'manual' already exists.\n" {
		t.Errorf("create existing: %d %q %q", code, out, errOut)
	}
	out, _, _ = runTool(t, "", "kafka-topics", "--bootstrap-server", bootstrap, "--list", "--exclude-internal")
	if out != "greetings\nmanual\n" {
		t.Errorf("list: %q", out)
	}
}

// checkServerStartConsole produces keyed records with the console
// producer and reads them back with the console consumer: without a group,
// with a group that commits, and from one partition.
func checkServerStartConsole(t *testing.T, bootstrap string) {
	_, errOut, code := runTool(t, "k1:hello\nk2:world\nk3:again\n", "kafka-console-producer", "--bootstrap-server", bootstrap, "--topic", "greetings",
		"--property", "parse.key=true", "--property", "key.separator=:", "--request-required-acks", "all")
	if code != 0 {
		t.Fatalf("producer: %d %q", code, errOut)
	}
	out, errOut, code := runTool(t, "", "kafka-console-consumer", "--bootstrap-server", bootstrap, "--topic", "greetings",
		"--from-beginning", "--max-messages", "3", "--timeout-ms", "15000", "--property", "print.key=true", "--property", "key.separator=:")
	got := strings.Split(strings.TrimSuffix(out, "\n"), "\n")
	sort.Strings(got)
	if code != 0 || strings.Join(got, ",") != "k1:hello,k2:world,k3:again" || !strings.Contains(errOut, "Processed a total of 3 messages") {
		t.Fatalf("consumer: %d %q %q", code, out, errOut)
	}
	// With a group, offsets are committed: a second run of the same group
	// sees nothing new.
	out, errOut, code = runTool(t, "", "kafka-console-consumer", "--bootstrap-server", bootstrap, "--topic", "greetings",
		"--group", "g1", "--from-beginning", "--max-messages", "3", "--timeout-ms", "30000")
	if code != 0 || strings.Count(out, "\n") != 3 {
		t.Fatalf("group consumer: %d %q %q", code, out, errOut)
	}
	out, errOut, code = runTool(t, "", "kafka-console-consumer", "--bootstrap-server", bootstrap, "--topic", "greetings",
		"--group", "g1", "--from-beginning", "--timeout-ms", "3000")
	if code != 0 || out != "" || !strings.Contains(errOut, "Processed a total of 0 messages") {
		t.Fatalf("group consumer again: %d %q %q", code, out, errOut)
	}
	out, _, code = runTool(t, "", "kafka-console-consumer", "--bootstrap-server", bootstrap, "--topic", "greetings",
		"--partition", "0", "--offset", "earliest", "--timeout-ms", "1000", "--property", "print.offset=true")
	if code != 0 || !strings.HasPrefix(out, "Offset:0\t") {
		t.Errorf("partition consumer: %d %q", code, out)
	}
}

// checkServerStartConfigs checks a server.properties key shown as a topic
// override, alters and describes a topic config, and adds a partition.
func checkServerStartConfigs(t *testing.T, bootstrap string) {
	// As in Kafka, a broker key set in server.properties shows up as a
	// non-default topic config (STATIC_BROKER_CONFIG).
	out, errOut, code := runTool(t, "", "kafka-topics", "--bootstrap-server", bootstrap, "--describe", "--topic", "greetings", "--topics-with-overrides")
	if code != 0 || !strings.HasPrefix(out, "Topic: greetings\t") || !strings.Contains(out, "\tConfigs: segment.bytes=1073741824\n") {
		t.Errorf("describe overrides: %d %q %q", code, out, errOut)
	}
	out, errOut, code = runTool(t, "", "kafka-configs", "--bootstrap-server", bootstrap, "--alter", "--topic", "greetings", "--add-config", "retention.ms=86400000")
	if code != 0 || out != "Completed updating config for topic greetings.\n" {
		t.Errorf("configs alter: %d %q %q", code, out, errOut)
	}
	out, errOut, code = runTool(t, "", "kafka-configs", "--bootstrap-server", bootstrap, "--describe", "--topic", "greetings")
	if code != 0 || !strings.HasPrefix(out, "Dynamic configs for topic greetings are:\n  retention.ms=86400000 sensitive=false synonyms={DYNAMIC_TOPIC_CONFIG:retention.ms=86400000") {
		t.Errorf("configs describe: %d %q %q", code, out, errOut)
	}
	out, errOut, code = runTool(t, "", "kafka-topics", "--bootstrap-server", bootstrap, "--alter", "--topic", "greetings", "--partitions", "3")
	if code != 0 || out != "" {
		t.Errorf("alter partitions: %d %q %q", code, out, errOut)
	}
	testwait.For(t, 20*time.Second, func() error {
		out, errOut, code := runTool(t, "", "kafka-topics", "--bootstrap-server", bootstrap, "--describe", "--topic", "greetings")
		if code != 0 || strings.Count(out, "\tLeader: 1\t") != 3 {
			return fmt.Errorf("describe after alter: %d %q %q", code, out, errOut)
		}
		return nil
	})
}

// checkServerStartPerf runs the producer and consumer perf tools against
// the broker.
func checkServerStartPerf(t *testing.T, bootstrap string) {
	out, errOut, code := runTool(t, "", "kafka-producer-perf-test", "--topic", "greetings", "--num-records", "2000", "--record-size", "100",
		"--throughput", "-1", "--producer-props", "bootstrap.servers="+bootstrap, "acks=all")
	if code != 0 || !strings.HasPrefix(out[strings.LastIndex(strings.TrimSuffix(out, "\n"), "\n")+1:], "2000 records sent, ") {
		t.Errorf("producer perf: %d %q %q", code, out, errOut)
	}
	out, errOut, code = runTool(t, "", "kafka-consumer-perf-test", "--bootstrap-server", bootstrap, "--topic", "greetings", "--messages", "2003", "--timeout", "15000")
	lines := strings.Split(out, "\n")
	if code != 0 || len(lines) != 3 || !strings.HasPrefix(lines[0], "start.time, end.time") || !strings.Contains(lines[1], ", 2003, ") {
		t.Errorf("consumer perf: %d %q %q", code, out, errOut)
	}
}

// checkServerStartZooKeeperAndDelete describes the topic through
// ZooKeeper, then deletes it over the Admin API.
func checkServerStartZooKeeperAndDelete(t *testing.T, bootstrap, connect string) {
	out, errOut, code := runTool(t, "", "kafka-topics", "--zookeeper", connect, "--describe", "--topic", "greetings")
	header := regexp.MustCompile(`^Topic: greetings\t(TopicId: [A-Za-z0-9_-]{22}\t)?PartitionCount: 3\tReplicationFactor: 1\tConfigs: retention.ms=86400000\n`)
	if code != 0 || strings.Count(out, "\tLeader: 1\t") != 3 || !header.MatchString(out) {
		t.Errorf("zookeeper describe: %d %q %q", code, out, errOut)
	}

	out, errOut, code = runTool(t, "", "kafka-topics", "--bootstrap-server", bootstrap, "--delete", "--topic", "greetings")
	if code != 0 || out != "" {
		t.Errorf("delete: %d %q %q", code, out, errOut)
	}
	testwait.For(t, 30*time.Second, func() error {
		out, _, _ := runTool(t, "", "kafka-topics", "--zookeeper", connect, "--list", "--exclude-internal")
		if out != "manual\n" {
			return fmt.Errorf("topics left: %q", out)
		}
		return nil
	})
}

// stop cancels kafka-server-start, which must exit with 0 and deregister
// the broker.
func (b *serverStartBroker) stop(t *testing.T) {
	b.cancel()
	select {
	case code := <-b.exited:
		if code != 0 {
			t.Fatalf("kafka-server-start exit code %d", code)
		}
	case <-time.After(60 * time.Second):
		t.Fatal("broker did not shut down")
	}
	testwait.For(t, 20*time.Second, func() error {
		if ids, _ := b.zk.GetBrokerIDs(); len(ids) != 0 {
			return fmt.Errorf("still registered: %v", ids)
		}
		return nil
	})
}
