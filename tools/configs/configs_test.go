package configs

import (
	"bytes"
	"fmt"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/IBM/sarama"
	"github.com/sirupsen/logrus"

	"samsa/broker/brokertest"
	"samsa/tools/internal/tooltest"
	"samsa/zkutil"
)

// configsTranscript runs kafka-configs commands and records each one (with
// the connection argument left out) and its output, for a golden file.
type configsTranscript struct {
	t       *testing.T
	connArg []string
	buf     bytes.Buffer
}

func (ct *configsTranscript) run(wantCode int, args ...string) string {
	ct.t.Helper()
	out, errOut, code := runTool(ct.t, "", append(append([]string{"kafka-configs"}, ct.connArg...), args...)...)
	fmt.Fprintf(&ct.buf, "$ kafka-configs %s %s\n%s", ct.connArg[0], strings.Join(args, " "), out)
	if errOut != "" {
		fmt.Fprintf(&ct.buf, "[stderr] %s", strings.ReplaceAll(errOut, ct.connArg[1], "<server>"))
	}
	fmt.Fprintf(&ct.buf, "[exit %d]\n", code)
	if code != wantCode {
		ct.t.Errorf("%v: exit %d, want %d; stdout %q stderr %q", args, code, wantCode, out, errOut)
	}
	return out
}

func TestToolConfigsZK(t *testing.T) {
	zk, c := tooltest.ZKCluster(t, 1)
	if _, _, code := runTool(t, "", "kafka-topics", "--zookeeper", zk, "--create", "--topic", "t1", "--partitions", "1", "--replication-factor", "1", "--config", "retention.ms=1000"); code != 0 {
		t.Fatal("create failed")
	}
	ct := &configsTranscript{t: t, connArg: []string{"--zookeeper", zk}}
	ct.run(0, "--describe", "--entity-type", "topics", "--entity-name", "t1")
	ct.run(0, "--alter", "--topic", "t1", "--add-config", "cleanup.policy=[compact,delete],segment.bytes=1048576", "--delete-config", "retention.ms")
	cfg, err := c.GetEntityConfig(zkutil.ConfigTypeTopic, "t1")
	if err != nil || !reflect.DeepEqual(cfg, map[string]string{"cleanup.policy": "compact,delete", "segment.bytes": "1048576"}) {
		t.Fatalf("config %v, %v", cfg, err)
	}
	ct.run(0, "--describe", "--entity-type", "topics")
	ct.run(1, "--alter", "--topic", "t1", "--delete-config", "nope")
	ct.run(1, "--alter", "--topic", "t1", "--add-config", "segment.bytes=1")
	ct.run(1, "--alter", "--topic", "missing", "--add-config", "segment.bytes=100000")

	// Brokers while broker 1 is registered: only the replication throttles
	// may change through ZooKeeper, as in Kafka.
	ct.run(1, "--alter", "--entity-type", "brokers", "--entity-default", "--add-config", "log.retention.ms=3600000")
	ct.run(1, "--alter", "--broker", "1", "--add-config", "message.max.bytes=2000000,follower.replication.throttled.rate=1024")
	ct.run(0, "--alter", "--broker", "1", "--add-config", "follower.replication.throttled.rate=1024")
	ct.run(0, "--describe", "--broker", "1")
	// Brokers before they start (bootstrapping): per broker and cluster
	// default.
	if err := c.DeregisterBroker(1); err != nil {
		t.Fatal(err)
	}
	ct.run(0, "--alter", "--entity-type", "brokers", "--entity-default", "--add-config", "log.retention.ms=3600000,log.cleanup.policy=[delete,compact]")
	ct.run(0, "--alter", "--broker", "1", "--add-config", "message.max.bytes=2000000,follower.replication.throttled.rate=1024")
	ct.run(0, "--describe", "--entity-type", "brokers", "--entity-name", "1")
	ct.run(0, "--describe", "--broker-defaults")
	ct.run(0, "--describe", "--entity-type", "brokers")
	ct.run(1, "--alter", "--broker", "1", "--add-config", "broker.id=7")
	ct.run(1, "--alter", "--broker", "1", "--add-config", "no.such.key=1")
	ct.run(1, "--alter", "--broker", "1", "--add-config", "message.max.bytes=-5")
	ct.run(1, "--alter", "--broker", "x", "--add-config", "message.max.bytes=5")
	ct.run(1, "--alter", "--entity-type", "brokers", "--add-config", "message.max.bytes=5")
	ct.run(0, "--alter", "--broker", "1", "--delete-config", "follower.replication.throttled.rate")

	// Users and clients (quotas; names are sanitised in the znode).
	ct.run(0, "--alter", "--entity-type", "users", "--entity-name", "CN=alice bob", "--add-config", "producer_byte_rate=1024,request_percentage=12.5")
	ct.run(0, "--alter", "--client-defaults", "--add-config", "consumer_byte_rate=2048")
	ct.run(0, "--alter", "--client", "app-1", "--add-config", "consumer_byte_rate=4096")
	ct.run(0, "--describe", "--entity-type", "users")
	ct.run(0, "--describe", "--entity-type", "clients")
	ct.run(1, "--alter", "--user", "u", "--add-config", "producer_byte_rate=fast")
	ct.run(1, "--alter", "--user", "u", "--add-config", "retention.ms=1")
	ct.run(1, "--describe", "--entity-type", "groups")
	ct.run(1, "--describe", "--topic", "t1", "--broker", "1")
	tooltest.CheckGolden(t, "configs_zk", ct.buf.Bytes())

	if names, err := c.GetEntityNames(zkutil.ConfigTypeUser); err != nil || !reflect.DeepEqual(names, []string{"CN%3Dalice%20bob"}) {
		t.Errorf("user znodes %v, %v", names, err)
	}
	changes, err := c.GetConfigChanges()
	if err != nil || len(changes) < 6 {
		t.Errorf("config change notifications %v, %v", changes, err)
	}
}

// TestToolConfigsCluster: kafka-configs --bootstrap-server against a
// running broker; the changes take effect without a restart.
func TestToolConfigsCluster(t *testing.T) {
	c := brokertest.NewCluster(t, 1)
	c.CreateTopic(t, "cfg", 1, 1)
	c.WaitForLeader(t, "cfg", 0)
	ct := &configsTranscript{t: t, connArg: []string{"--bootstrap-server", c.Addr(0)}}
	ct.run(0, "--alter", "--entity-type", "topics", "--entity-name", "cfg", "--add-config", "retention.ms=1000,cleanup.policy=[delete,compact]")
	ct.run(0, "--describe", "--topic", "cfg")
	ct.run(1, "--alter", "--topic", "cfg", "--delete-config", "segment.bytes")
	ct.run(0, "--alter", "--topic", "cfg", "--delete-config", "cleanup.policy")
	ct.run(0, "--describe", "--topic", "cfg")
	ct.run(0, "--alter", "--entity-type", "brokers", "--entity-default", "--add-config", "log.segment.bytes=2000000")
	ct.run(0, "--alter", "--broker", "1", "--add-config", "log.retention.bytes=5000000")
	ct.run(0, "--describe", "--broker-defaults")
	ct.run(0, "--describe", "--broker", "1")
	ct.run(1, "--alter", "--broker", "1", "--add-config", "broker.id=9")
	ct.run(1, "--describe", "--topic", "cfg", "--all", "--add-config", "a=b")
	// Client quotas through DescribeClientQuotas / AlterClientQuotas.
	ct.run(0, "--alter", "--user", "alice", "--add-config", "producer_byte_rate=1024,request_percentage=12.5")
	ct.run(0, "--alter", "--client-defaults", "--add-config", "consumer_byte_rate=2048")
	ct.run(0, "--describe", "--entity-type", "users")
	ct.run(0, "--describe", "--client-defaults")
	ct.run(0, "--alter", "--user", "alice", "--delete-config", "request_percentage")
	ct.run(0, "--describe", "--user", "alice")
	ct.run(1, "--alter", "--user", "alice", "--add-config", "retention.ms=5")
	tooltest.CheckGolden(t, "configs_cluster", ct.buf.Bytes())

	logCfg := func() (int64, int32, int64) {
		for _, p := range c.Broker(0).Replicas().Partitions() {
			if l := p.Log(); l != nil && p.TopicPartition().Topic == "cfg" {
				cfg := l.Config()
				return cfg.RetentionMs, cfg.SegmentBytes, cfg.RetentionBytes
			}
		}
		return 0, 0, 0
	}
	brokertest.WaitFor(t, 20*time.Second, func() error {
		if r, s, rb := logCfg(); r != 1000 || s != 2000000 || rb != 5000000 {
			return fmt.Errorf("log config retention.ms=%d segment.bytes=%d retention.bytes=%d", r, s, rb)
		}
		return nil
	})

	// --all lists every topic config.
	out, _, code := runTool(t, "", "kafka-configs", "--bootstrap-server", c.Addr(0), "--describe", "--topic", "cfg", "--all")
	if code != 0 || !strings.HasPrefix(out, "All configs for topic cfg are:\n") || !strings.Contains(out, "  retention.ms=1000 sensitive=false synonyms={DYNAMIC_TOPIC_CONFIG:retention.ms=1000") ||
		!strings.Contains(out, "  segment.bytes=2000000 sensitive=false synonyms={DYNAMIC_DEFAULT_BROKER_CONFIG:log.segment.bytes=2000000") {
		t.Errorf("describe --all: %d\n%s", code, out)
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
	for in, want := range map[string]string{"alice": "alice", "CN=a b,O=x": "CN%3Da%20b%2CO%3Dx", "a*b~c": "a%2Ab%7Ec", "é": "%C3%A9"} {
		if got := sanitizeEntityName(in); got != want {
			t.Errorf("sanitize %q = %q, want %q", in, got, want)
		}
		if back := desanitizeEntityName(sanitizeEntityName(in)); back != in {
			t.Errorf("desanitize(sanitize(%q)) = %q", in, back)
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
	tooltest.CheckGolden(t, "configs_describe", buf.Bytes())
}

// TestToolConfigsRetentionTakesEffect: retention.ms lowered with
// kafka-configs on a running broker deletes old segments without a
// restart.
func TestToolConfigsRetentionTakesEffect(t *testing.T) {
	c := brokertest.NewCluster(t, 1, brokertest.WithProperty("log.retention.check.interval.ms", "100"))
	segBytes := "1024"
	c.CreateTopic(t, "ret", 1, 1, map[string]*string{"segment.bytes": &segBytes})
	cfg := brokertest.SaramaConfig(sarama.V2_8_0_0)
	cfg.Producer.Return.Successes = true
	p := c.SyncProducer(t, cfg)
	for i := 0; i < 40; i++ {
		if _, _, err := p.SendMessage(&sarama.ProducerMessage{Topic: "ret", Value: sarama.ByteEncoder(bytes.Repeat([]byte("x"), 200))}); err != nil {
			t.Fatal(err)
		}
	}
	client := c.Sarama(t, brokertest.SaramaConfig(sarama.V2_8_0_0))
	start := func() int64 {
		t.Helper()
		off, err := client.GetOffset("ret", 0, sarama.OffsetOldest)
		if err != nil {
			t.Fatal(err)
		}
		return off
	}
	if s := start(); s != 0 {
		t.Fatalf("log start %d before the change", s)
	}
	if out, errOut, code := runTool(t, "", "kafka-configs", "--bootstrap-server", c.Addr(0), "--alter", "--topic", "ret", "--add-config", "retention.ms=500"); code != 0 {
		t.Fatalf("alter: %d %q %q", code, out, errOut)
	}
	brokertest.WaitFor(t, 30*time.Second, func() error {
		if s := start(); s == 0 {
			return fmt.Errorf("log start offset still 0")
		}
		return nil
	})
}

// TestToolConfigsBrokerLoggers: kafka-configs --entity-type broker-loggers
// (KIP-412) describes and sets the broker's root log level; unknown loggers
// and levels fail as in Kafka.
func TestToolConfigsBrokerLoggers(t *testing.T) {
	c := brokertest.NewCluster(t, 1, brokertest.WithLogLevel(logrus.WarnLevel))
	ct := &configsTranscript{t: t, connArg: []string{"--bootstrap-server", c.Addr(0)}}
	ct.run(0, "--describe", "--entity-type", "broker-loggers", "--entity-name", "1")
	ct.run(0, "--alter", "--broker-logger", "1", "--add-config", "root=ERROR")
	ct.run(0, "--describe", "--broker-logger", "1")
	ct.run(1, "--alter", "--broker-logger", "1", "--add-config", "kafka.controller=INFO")
	ct.run(1, "--alter", "--broker-logger", "1", "--add-config", "root=LOUD")
	ct.run(1, "--alter", "--broker-logger", "1", "--delete-config", "root")
	ct.run(0, "--alter", "--broker-logger", "1", "--add-config", "root=WARN")
	ct.run(1, "--describe", "--entity-type", "broker-loggers")
	ct.run(1, "--describe", "--broker-logger", "x")
	tooltest.CheckGolden(t, "configs_loggers", ct.buf.Bytes())

	zk := &configsTranscript{t: t, connArg: []string{"--zookeeper", c.ZKConnect()}}
	zk.run(1, "--describe", "--broker-logger", "1")
}
