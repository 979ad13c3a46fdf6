package tools

import (
	"bytes"
	"reflect"
	"testing"

	"github.com/IBM/sarama"

	"samsa/zkutil"
)

func TestToolConfigsZK(t *testing.T) {
	zk, c := zkCluster(t, 1)
	if _, _, code := runTool(t, "", "kafka-topics", "--zookeeper", zk, "--create", "--topic", "t1", "--partitions", "1", "--replication-factor", "1", "--config", "retention.ms=1000"); code != 0 {
		t.Fatal("create failed")
	}
	const warn = "Warning: --zookeeper is deprecated and will be removed in a future version of Kafka.\nUse --bootstrap-server instead to specify a broker to connect to.\n"
	expect := func(wantOut string, wantCode int, args ...string) string {
		t.Helper()
		out, errOut, code := runTool(t, "", append([]string{"kafka-configs", "--zookeeper", zk}, args...)...)
		if out != wantOut || code != wantCode {
			t.Fatalf("%v: code %d stdout %q stderr %q, want %d %q", args, code, out, errOut, wantCode, wantOut)
		}
		return errOut
	}
	expect(warn+"Configs for topic 't1' are retention.ms=1000\n", 0, "--describe", "--entity-type", "topics", "--entity-name", "t1")
	expect(warn+"Completed updating config for entity: topic 't1'.\n", 0, "--alter", "--topic", "t1",
		"--add-config", "cleanup.policy=[compact,delete],segment.bytes=1048576", "--delete-config", "retention.ms")
	cfg, err := c.GetEntityConfig(zkutil.ConfigTypeTopic, "t1")
	if err != nil || !reflect.DeepEqual(cfg, map[string]string{"cleanup.policy": "compact,delete", "segment.bytes": "1048576"}) {
		t.Fatalf("config %v, %v", cfg, err)
	}
	expect(warn+"Configs for topic 't1' are cleanup.policy=compact,delete,segment.bytes=1048576\n", 0, "--describe", "--entity-type", "topics")
	if e := expect(warn, 1, "--alter", "--topic", "t1", "--delete-config", "nope"); e != "Invalid config(s): nope\n" {
		t.Errorf("stderr %q", e)
	}
	if e := expect(warn, 1, "--alter", "--topic", "t1", "--add-config", "segment.bytes=1"); !bytes.Contains([]byte(e), []byte("segment.bytes")) {
		t.Errorf("stderr %q", e)
	}
	if e := expect(warn, 1, "--alter", "--topic", "missing", "--add-config", "segment.bytes=100000"); !bytes.Contains([]byte(e), []byte("Topic 'missing' does not exist.")) {
		t.Errorf("stderr %q", e)
	}
	if _, errOut, code := runTool(t, "", "kafka-configs", "--zookeeper", zk, "--describe", "--entity-type", "brokers"); code != 1 || errOut == "" {
		t.Errorf("brokers: %d %q", code, errOut)
	}
}

func TestToolConfigsAddConfigParsing(t *testing.T) {
	got, err := parseAddConfig("a=1, b=[x,y,z] ,c=,d=e=f")
	want := map[string]string{"a": "1", "b": "x,y,z", "c": "", "d": "e=f"}
	if err != nil || !reflect.DeepEqual(got, want) {
		t.Fatalf("got %v %v", got, err)
	}
	for _, bad := range []string{"novalue", "a b=1"} {
		if _, err := parseAddConfig(bad); err == nil {
			t.Errorf("%q accepted", bad)
		}
	}
}

func TestToolConfigsDescribeFormat(t *testing.T) {
	entries := []sarama.ConfigEntry{
		{Name: "segment.bytes", Value: "1048576", Source: sarama.SourceTopic, Synonyms: []*sarama.ConfigSynonym{
			{ConfigName: "segment.bytes", ConfigValue: "1048576", Source: sarama.SourceTopic},
			{ConfigName: "log.segment.bytes", ConfigValue: "1073741824", Source: sarama.SourceStaticBroker},
			{ConfigName: "log.segment.bytes", ConfigValue: "1073741824", Source: sarama.SourceDefault},
		}},
		{Name: "cleanup.policy", Value: "delete", Source: sarama.SourceDefault, Synonyms: []*sarama.ConfigSynonym{
			{ConfigName: "log.cleanup.policy", ConfigValue: "delete", Source: sarama.SourceDefault},
		}},
	}
	var buf bytes.Buffer
	writeConfigEntries(&buf, "t", entries, false)
	writeConfigEntries(&buf, "t", entries, true)
	checkGolden(t, "configs_describe", buf.Bytes())
}
