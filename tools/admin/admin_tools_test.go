package admin

import (
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/IBM/sarama"

	"samsa/broker/brokertest"
	"samsa/tools/internal/tooltest"
)

// adminFixture is a two-broker cluster with topic "offsets" (2 partitions,
// RF 1): partition 0 holds 3 records stamped t0, t0+1s, t0+2s, partition 1
// holds 2 records stamped t0 and t0+1s.
type adminFixture struct {
	c  *brokertest.Cluster
	t0 time.Time
}

func newAdminFixture(t *testing.T) *adminFixture {
	t.Helper()
	c := brokertest.NewCluster(t, 2)
	c.CreateTopic(t, "offsets", 2, 1)
	cfg := brokertest.SaramaConfig(sarama.V2_8_0_0)
	cfg.Producer.Partitioner = sarama.NewManualPartitioner
	cfg.Producer.Return.Successes = true
	p := c.SyncProducer(t, cfg)
	t0 := time.Now().Add(-time.Hour).Truncate(time.Second)
	for part, n := range []int{3, 2} {
		for i := 0; i < n; i++ {
			msg := &sarama.ProducerMessage{Topic: "offsets", Partition: int32(part), Value: sarama.StringEncoder("v"), Timestamp: t0.Add(time.Duration(i) * time.Second)}
			if _, _, err := p.SendMessage(msg); err != nil {
				t.Fatal(err)
			}
		}
	}
	return &adminFixture{c: c, t0: t0}
}

// anonymize replaces broker addresses with BROKER<i>.
func (f *adminFixture) anonymize(s string) string {
	for i, a := range f.c.Addrs() {
		s = strings.ReplaceAll(s, a, fmt.Sprintf("BROKER%d", i))
	}
	return s
}

func TestToolAdminCommands(t *testing.T) {
	f := newAdminFixture(t)
	boot := f.c.Addr(0)
	t.Run("GetOffsets", func(t *testing.T) { testGetOffsets(t, f, boot) })
	t.Run("BrokerAPIVersions", func(t *testing.T) { testBrokerAPIVersions(t, f, boot) })
	t.Run("LogDirs", func(t *testing.T) { testLogDirs(t, f, boot) })
	t.Run("DeleteRecords", func(t *testing.T) { testDeleteRecords(t, f, boot) })
}

func testDeleteRecords(t *testing.T, f *adminFixture, boot string) {
	dir := t.TempDir()
	write := func(name, js string) string {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, []byte(js), 0o644); err != nil {
			t.Fatal(err)
		}
		return p
	}
	ok := write("ok.json", `{"partitions": [{"topic": "offsets", "partition": 1, "offset": -1}, {"topic": "offsets", "partition": 0, "offset": 2}], "version": 1}`)
	bad := write("bad.json", `{"partitions": [{"topic": "offsets", "partition": 0, "offset": 99}, {"topic": "nosuch", "partition": 0, "offset": 1}]}`)
	var all strings.Builder
	for _, file := range []string{ok, bad} {
		out, errOut, code := runTool(t, "", "kafka-delete-records", "--bootstrap-server", boot, "--offset-json-file", file)
		if code != 0 || errOut != "" {
			t.Fatalf("%s: exit %d stderr %q\n%s", file, code, errOut, out)
		}
		all.WriteString(out)
	}
	// The new log start offsets are what kafka-get-offsets --time -2 shows.
	out, _, _ := runTool(t, "", "kafka-get-offsets", "--broker-list", boot, "--topic", "offsets", "--time", "-2")
	all.WriteString(out)
	tooltest.CheckGolden(t, "delete_records", []byte(all.String()))
}

func testGetOffsets(t *testing.T, f *adminFixture, boot string) {
	var all strings.Builder
	for _, args := range [][]string{
		{"--broker-list", boot, "--topic", "offsets", "--time", "-2"},
		{"--bootstrap-server", boot, "--topic", "offsets"},
		{"--broker-list", boot, "--topic", "offsets", "--time", fmt.Sprint(f.t0.Add(1500 * time.Millisecond).UnixMilli())},
		{"--broker-list", boot, "--topic", "offsets", "--partitions", "1", "--time", "-1"},
	} {
		out, errOut, code := runTool(t, "", append([]string{"kafka-get-offsets"}, args...)...)
		if code != 0 || errOut != "" {
			t.Fatalf("%v: exit %d stderr %q", args, code, errOut)
		}
		all.WriteString(out)
	}
	tooltest.CheckGolden(t, "get_offsets", []byte(all.String()))

	_, errOut, code := runTool(t, "", "kafka-get-offsets", "--broker-list", boot, "--topic", "nosuch")
	if code != 1 || errOut != "Topic nosuch does not exist\n" {
		t.Errorf("missing topic: exit %d %q", code, errOut)
	}
	out, errOut, code := runTool(t, "", "kafka-get-offsets", "--broker-list", boot, "--topic", "offsets", "--partitions", "0,7")
	if code != 0 || out != "offsets:0:3\n" || errOut != "Error: partition 7 does not exist\n" {
		t.Errorf("unknown partition: exit %d out %q err %q", code, out, errOut)
	}
	if _, errOut, code := runTool(t, "", "kafka-get-offsets", "--broker-list", "nohost", "--topic", "t"); code != 1 || !strings.Contains(errOut, "Please provide valid host:port") {
		t.Errorf("bad host:port: exit %d %q", code, errOut)
	}
}

func testBrokerAPIVersions(t *testing.T, f *adminFixture, boot string) {
	out, errOut, code := runTool(t, "", "kafka-broker-api-versions", "--bootstrap-server", boot)
	if code != 0 || errOut != "" {
		t.Fatalf("exit %d stderr %q", code, errOut)
	}
	out = f.anonymize(out)
	t.Logf("kafka-broker-api-versions:\n%s", out)
	// The broker's API table grows while Samsa is built, so check the shape
	// of every line and a few fixed entries rather than a golden file.
	head := regexp.MustCompile(`^BROKER\d \(id: \d+ rack: null\) -> \($`)
	entry := regexp.MustCompile(`^\t[A-Za-z]+\(\d+\): (UNSUPPORTED|\d+( to \d+)? \[(usable: \d+|unusable: node too (new|old))\]),?$`)
	// APIs newer than Kafka 2.8 (DescribeTransactions 65, ListTransactions
	// 66) print as Kafka 2.8's NodeApiVersions prints unknown keys.
	unknown := regexp.MustCompile(`^\tUNKNOWN\(\d+\): \d+( to \d+)?,?$`)
	heads := 0
	for _, line := range strings.Split(strings.TrimSuffix(out, "\n"), "\n") {
		switch {
		case head.MatchString(line):
			heads++
		case line == ")", entry.MatchString(line), unknown.MatchString(line):
		default:
			t.Errorf("line not in Kafka's format: %q", line)
		}
	}
	if heads != 2 {
		t.Errorf("want 2 brokers, got %d:\n%s", heads, out)
	}
	for _, want := range []string{"\tProduce(0): 0 to 9 [usable: 9],\n", "\tApiVersions(18): 0 to 3 [usable: 3],\n", "\tControlledShutdown(7): "} {
		if !strings.Contains(out, want) {
			t.Errorf("missing %q in\n%s", want, out)
		}
	}
}

func testLogDirs(t *testing.T, f *adminFixture, boot string) {
	out, errOut, code := runTool(t, "", "kafka-log-dirs", "--describe", "--bootstrap-server", boot, "--topic-list", "offsets")
	if code != 0 || errOut != "" {
		t.Fatalf("exit %d stderr %q", code, errOut)
	}
	t.Logf("kafka-log-dirs:\n%s", out)
	lines := strings.Split(out, "\n")
	if len(lines) != 4 || lines[0] != "Querying brokers for log directories information" ||
		!regexp.MustCompile(`^Received log directory information from brokers \d+,\d+$`).MatchString(lines[1]) {
		t.Fatalf("header lines:\n%s", out)
	}
	// Log dir paths are temporary directories: check the JSON's shape with
	// them blanked.
	js := regexp.MustCompile(`"logDir":"[^"]*"`).ReplaceAllString(lines[2], `"logDir":"DIR"`)
	js = regexp.MustCompile(`"broker":\d+`).ReplaceAllString(js, `"broker":N`)
	js = regexp.MustCompile(`"size":\d+`).ReplaceAllString(js, `"size":S`)
	want := `{"version":1,"brokers":[{"broker":N,"logDirs":[{"logDir":"DIR","error":null,"partitions":[%s]}]},{"broker":N,"logDirs":[{"logDir":"DIR","error":null,"partitions":[%s]}]}]}`
	p0 := `{"partition":"offsets-0","size":S,"offsetLag":0,"isFuture":false}`
	p1 := `{"partition":"offsets-1","size":S,"offsetLag":0,"isFuture":false}`
	if js != fmt.Sprintf(want, p0, p1) && js != fmt.Sprintf(want, p1, p0) {
		t.Errorf("JSON not in Kafka's format:\n%s", lines[2])
	}
	if !strings.Contains(lines[2], `"size":0`) && !regexp.MustCompile(`"size":[1-9]`).MatchString(lines[2]) {
		t.Errorf("no sizes: %s", lines[2])
	}
	// --broker-list limits the query; an unknown topic gives empty lists.
	out, _, code = runTool(t, "", "kafka-log-dirs", "--describe", "--bootstrap-server", boot, "--broker-list", "1", "--topic-list", "none")
	if code != 0 || !strings.Contains(out, "from brokers 1\n") || !regexp.MustCompile(`"partitions":\[\]`).MatchString(out) {
		t.Errorf("broker-list: exit %d\n%s", code, out)
	}
	if _, errOut, code := runTool(t, "", "kafka-log-dirs", "--bootstrap-server", boot); code != 1 || !strings.Contains(errOut, `Missing required argument "[describe]"`) {
		t.Errorf("no --describe: exit %d %q", code, errOut)
	}
}

func TestToolDeleteRecordsJSON(t *testing.T) {
	got, err := parseDeleteRecordsJSON([]byte(`{"partitions": [{"topic": "foo", "partition": 1, "offset": 1}, {"topic": "bar", "partition": 0, "offset": -1}], "version": 1}`))
	if err != nil || len(got) != 2 || got[0] != (deleteRecordsTarget{"foo", 1, 1}) || got[1] != (deleteRecordsTarget{"bar", 0, -1}) {
		t.Errorf("parse: %v %v", got, err)
	}
	for in, want := range map[string]string{
		`{"partitions": [`:                 "kafka.admin.AdminOperationException: The input string is not a valid JSON",
		`{"version": 1}`:                   "kafka.admin.AdminOperationException: Missing partitions field",
		`{"version": 2, "partitions": []}`: "kafka.admin.AdminOperationException: Not supported version field value 2",
		`{"partitions": [{"topic": "a", "partition": 0, "offset": 1}, {"topic": "a", "partition": 0, "offset": 2}]}`: "kafka.common.AdminCommandFailedException: Offset json file contains duplicate topic partitions: a-0",
	} {
		if _, err := parseDeleteRecordsJSON([]byte(in)); err == nil || err.Error() != `Exception in thread "main" `+want {
			t.Errorf("%s: %v", in, err)
		}
	}
	dir := t.TempDir()
	file := filepath.Join(dir, "offsets.json")
	if err := os.WriteFile(file, []byte(`{"version": 3, "partitions": []}`), 0o644); err != nil {
		t.Fatal(err)
	}
	_, errOut, code := runTool(t, "", "kafka-delete-records", "--bootstrap-server", "127.0.0.1:1", "--offset-json-file", file)
	if code != 1 || !strings.Contains(errOut, "Not supported version field value 3") {
		t.Errorf("exit %d %q", code, errOut)
	}
}

func TestToolBrokerAPIVersionsFormat(t *testing.T) {
	keys := []sarama.ApiVersionsResponseKey{
		{ApiKey: 0, MinVersion: 0, MaxVersion: 9},
		{ApiKey: 1, MinVersion: 0, MaxVersion: 13},
		{ApiKey: 3, MinVersion: 12, MaxVersion: 12},
		{ApiKey: 18, MinVersion: 0, MaxVersion: 3},
		{ApiKey: 200, MinVersion: 0, MaxVersion: 1},
	}
	var b strings.Builder
	writeNodeAPIVersions(&b, keys)
	tooltest.CheckGolden(t, "broker_api_versions", []byte(b.String()+"\n"))
}
