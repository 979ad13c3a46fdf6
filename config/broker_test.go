package config

import (
	"errors"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
)

func minimal(extra ...string) map[string]string {
	m := map[string]string{"zookeeper.connect": "localhost:2181"}
	for i := 0; i+1 < len(extra); i += 2 {
		m[extra[i]] = extra[i+1]
	}
	return m
}

func mustBroker(t *testing.T, props map[string]string) *Broker {
	t.Helper()
	b, _, err := NewBroker(props)
	if err != nil {
		t.Fatalf("NewBroker(%v): %v", props, err)
	}
	return b
}

// TestConfigTableMatchesStructs checks every table row against its Go field:
// the field exists, has the Go type of the key's Type (a pointer for null
// numeric defaults), each default parses and passes its own validator, and
// no field lacks a row.
func TestConfigTableMatchesStructs(t *testing.T) {
	goType := map[Type]reflect.Type{
		TypeBool: reflect.TypeOf(false), TypeShort: reflect.TypeOf(int16(0)), TypeInt: reflect.TypeOf(int32(0)),
		TypeLong: reflect.TypeOf(int64(0)), TypeDouble: reflect.TypeOf(0.0), TypeString: reflect.TypeOf(""),
		TypeList: reflect.TypeOf([]string(nil)),
	}
	check := func(t *testing.T, keys []Key, st reflect.Type) {
		names := map[string]bool{}
		fields := map[string]bool{}
		for _, k := range keys {
			if names[k.Name] || fields[k.Field] {
				t.Errorf("%s: duplicate name or field", k.Name)
			}
			names[k.Name], fields[k.Field] = true, true
			f, ok := st.FieldByName(k.Field)
			if !ok {
				t.Errorf("%s: no field %s", k.Name, k.Field)
				continue
			}
			want := goType[k.Type]
			if k.Null && k.Type != TypeString {
				want = reflect.PointerTo(want)
			}
			if f.Type != want {
				t.Errorf("%s: field %s is %v, want %v", k.Name, k.Field, f.Type, want)
			}
			if k.Doc == "" {
				t.Errorf("%s: no doc", k.Name)
			}
			if k.Null {
				continue
			}
			v, err := parseValue(k.Type, k.Default)
			if err == nil && k.Valid != nil {
				err = k.Valid.Check(v)
			}
			if err != nil {
				t.Errorf("%s: default %q: %v", k.Name, k.Default, err)
			}
		}
		for i := 0; i < st.NumField(); i++ {
			if f := st.Field(i); f.IsExported() && !fields[f.Name] {
				t.Errorf("field %s has no key", f.Name)
			}
		}
	}
	t.Run("broker", func(t *testing.T) { check(t, BrokerKeys, reflect.TypeOf(Broker{})) })
	t.Run("topic", func(t *testing.T) {
		check(t, TopicKeys, reflect.TypeOf(Topic{}))
		for _, k := range TopicKeys {
			if k.Synonym == "" {
				continue
			}
			if _, ok := findKey(BrokerKeys, k.Synonym); !ok {
				t.Errorf("%s: synonym %s is not a broker key", k.Name, k.Synonym)
			}
		}
	})
}

func TestConfigBrokerDefaults(t *testing.T) {
	b := mustBroker(t, minimal())
	checks := []struct {
		name      string
		got, want any
	}{
		{"broker.id", b.BrokerID, int32(-1)},
		{"zookeeper.session.timeout.ms", b.ZookeeperSessionTimeoutMs, int32(18000)},
		{"zookeeper.connection.timeout.ms", b.ZookeeperConnectionTimeoutMs(), int32(18000)},
		{"message.max.bytes", b.MessageMaxBytes, int32(1048588)},
		{"log.segment.bytes", b.LogSegmentBytes, int32(1073741824)},
		{"log.retention", b.LogRetentionMs(), int64(168 * 3600 * 1000)},
		{"log.roll", b.LogRollMs(), int64(168 * 3600 * 1000)},
		{"log.roll.jitter", b.LogRollJitterMs(), int64(0)},
		{"log.flush.interval.ms", b.LogFlushIntervalMs(), int64(9223372036854775807)},
		{"log.dirs", b.LogDirs(), []string{"/tmp/kafka-logs"}},
		{"log.cleanup.policy", b.LogCleanupPolicy, []string{"delete"}},
		{"offsets.topic.replication.factor", b.OffsetsTopicReplicationFactor, int16(3)},
		{"replica.lag.time.max.ms", b.ReplicaLagTimeMaxMs, int64(30000)},
		{"group.max.session.timeout.ms", b.GroupMaxSessionTimeoutMs, int32(1800000)},
		{"log.cleaner.min.cleanable.ratio", b.LogCleanerMinCleanableRatio, 0.5},
		{"listeners", b.Listeners(), []Listener{{Name: "PLAINTEXT", Host: "", Port: 9092, SecurityProtocol: "PLAINTEXT"}}},
		{"zk", b.ZKServers(), []string{"localhost:2181"}},
		{"chroot", b.ZKChroot(), ""},
	}
	for _, c := range checks {
		if !reflect.DeepEqual(c.got, c.want) {
			t.Errorf("%s = %v, want %v", c.name, c.got, c.want)
		}
	}
	if !reflect.DeepEqual(Defaults().LogCleanupPolicy, b.LogCleanupPolicy) {
		t.Error("Defaults() differs from NewBroker with no keys")
	}
}

func TestConfigBrokerRetentionPrecedence(t *testing.T) {
	tests := []struct {
		props []string
		want  int64
	}{
		{[]string{"log.retention.hours", "1"}, 3600000},
		{[]string{"log.retention.hours", "1", "log.retention.minutes", "2"}, 120000},
		{[]string{"log.retention.hours", "1", "log.retention.minutes", "2", "log.retention.ms", "5"}, 5},
		{[]string{"log.retention.ms", "-1"}, -1},
		{[]string{"log.retention.hours", "-5"}, -1},
	}
	for _, tc := range tests {
		b := mustBroker(t, minimal(tc.props...))
		if got := b.LogRetentionMs(); got != tc.want {
			t.Errorf("%v: LogRetentionMs = %d, want %d", tc.props, got, tc.want)
		}
	}
	b := mustBroker(t, minimal("log.roll.hours", "2", "log.roll.jitter.hours", "1"))
	if b.LogRollMs() != 7200000 || b.LogRollJitterMs() != 3600000 {
		t.Errorf("roll %d jitter %d", b.LogRollMs(), b.LogRollJitterMs())
	}
	b = mustBroker(t, minimal("log.roll.hours", "2", "log.roll.ms", "10", "log.roll.jitter.ms", "3", "log.flush.interval.ms", "7"))
	if b.LogRollMs() != 10 || b.LogRollJitterMs() != 3 || b.LogFlushIntervalMs() != 7 {
		t.Errorf("roll %d jitter %d flush %d", b.LogRollMs(), b.LogRollJitterMs(), b.LogFlushIntervalMs())
	}
	b = mustBroker(t, minimal("log.dir", "/a", "log.dirs", " /b , /c "))
	if !reflect.DeepEqual(b.LogDirs(), []string{"/b", "/c"}) {
		t.Errorf("LogDirs = %v", b.LogDirs())
	}
}

func TestConfigBrokerListeners(t *testing.T) {
	b := mustBroker(t, minimal(
		"listeners", "PLAINTEXT://0.0.0.0:9092,internal://[::1]:0",
		"advertised.listeners", "PLAINTEXT://kafka1:9092,INTERNAL://10.0.0.1:9093",
		"listener.security.protocol.map", "PLAINTEXT:PLAINTEXT,INTERNAL:PLAINTEXT",
		"inter.broker.listener.name", "internal",
	))
	want := []Listener{{"PLAINTEXT", "0.0.0.0", 9092, "PLAINTEXT"}, {"INTERNAL", "::1", 0, "PLAINTEXT"}}
	if !reflect.DeepEqual(b.Listeners(), want) {
		t.Errorf("Listeners = %+v", b.Listeners())
	}
	if got := b.Listeners()[1].Addr(); got != "[::1]:0" {
		t.Errorf("Addr = %s", got)
	}
	l, ok := b.InterBrokerListener()
	if !ok || l.Host != "10.0.0.1" || l.Port != 9093 {
		t.Errorf("InterBrokerListener = %+v, %v", l, ok)
	}
	b = mustBroker(t, minimal("host.name", "h", "port", "9999"))
	if got := b.AdvertisedListeners(); len(got) != 1 || got[0].String() != "PLAINTEXT://h:9999" {
		t.Errorf("AdvertisedListeners = %v", got)
	}
}

func TestConfigBrokerZKConnect(t *testing.T) {
	tests := []struct {
		in      string
		servers []string
		chroot  string
		bad     bool
	}{
		{"localhost:2181", []string{"localhost:2181"}, "", false},
		{"a:1,b:2/kafka/c1", []string{"a:1", "b:2"}, "/kafka/c1", false},
		{"a/", []string{"a:2181"}, "", false},
		{"a:1/x/", nil, "", true},
		{"a:1//x", nil, "", true},
		{"a:1/x/../y", nil, "", true},
		{"/chroot", nil, "", true},
	}
	for _, tc := range tests {
		s, c, err := ParseZKConnect(tc.in)
		if (err != nil) != tc.bad {
			t.Errorf("%q: err = %v", tc.in, err)
			continue
		}
		if !tc.bad && (!reflect.DeepEqual(s, tc.servers) || c != tc.chroot) {
			t.Errorf("%q: got %v %q", tc.in, s, c)
		}
	}
}

// TestConfigBrokerReportsAllProblems checks that one error names every bad
// key with its value, and that unknown keys are warnings, not errors.
func TestConfigBrokerReportsAllProblems(t *testing.T) {
	_, warnings, err := NewBroker(map[string]string{
		"num.partitions":            "zero",
		"message.max.bytes":         "-5",
		"log.cleanup.policy":        "delete,shred",
		"auto.create.topics.enable": "yes",
		"no.such.key":               "1",
		"replica.fetch.wait.max.ms": "40000",
	})
	if err == nil {
		t.Fatal("want error")
	}
	for _, s := range []string{
		`"zero" for configuration num.partitions`, `"-5" for configuration message.max.bytes`,
		`"delete,shred" for configuration log.cleanup.policy`, `"yes" for configuration auto.create.topics.enable`,
		"zookeeper.connect", "replica.socket.timeout.ms should always be at least replica.fetch.wait.max.ms",
	} {
		if !strings.Contains(err.Error(), s) {
			t.Errorf("error does not mention %s:\n%v", s, err)
		}
	}
	if !errors.Is(err, ErrMissingRequired) {
		t.Error("missing zookeeper.connect not marked ErrMissingRequired")
	}
	var ke *KeyError
	if !errors.As(err, &ke) {
		t.Error("no *KeyError in the joined error")
	}
	if len(warnings) != 1 || !strings.Contains(string(warnings[0]), "'no.such.key'") {
		t.Errorf("warnings = %v", warnings)
	}
}

func TestConfigBrokerCrossKeyValidation(t *testing.T) {
	tests := []struct {
		name  string
		props []string
		want  string
	}{
		{"broker id above reserved", []string{"broker.id", "1001"}, "reserved.broker.max.id"},
		{"no generation needs id", []string{"broker.id.generation.enable", "false"}, "greater than or equal to 0"},
		{"fetch wait vs socket", []string{"replica.fetch.wait.max.ms", "40000"}, "replica.socket.timeout.ms"},
		{"fetch wait vs lag", []string{"replica.fetch.wait.max.ms", "600", "replica.lag.time.max.ms", "500"}, "replica.lag.time.max.ms"},
		{"zero retention", []string{"log.retention.ms", "0"}, "log.retention.ms"},
		{"dedupe buffer", []string{"log.cleaner.dedupe.buffer.size", "1048576"}, "1MB per cleaner thread"},
		{"advertised 0.0.0.0", []string{"advertised.listeners", "PLAINTEXT://0.0.0.0:9092"}, "nonroutable"},
		{"duplicate listener", []string{"listeners", "PLAINTEXT://:1,PLAINTEXT://:2"}, "different name"},
		{"unmapped listener", []string{"listeners", "FOO://:1"}, "no security protocol"},
		{"inter broker both", []string{"inter.broker.listener.name", "PLAINTEXT", "security.inter.broker.protocol", "PLAINTEXT"}, "only one of"},
		{"inter broker missing", []string{"inter.broker.listener.name", "OTHER"}, "advertised.listeners"},
		{"control plane not a listener", []string{"control.plane.listener.name", "CONTROLLER"}, "not found in listeners"},
		{"control plane is inter broker", []string{"listeners", "PLAINTEXT://:1,CONTROLLER://:2",
			"listener.security.protocol.map", "PLAINTEXT:PLAINTEXT,CONTROLLER:PLAINTEXT", "control.plane.listener.name", "plaintext"},
			"different value from the inter broker listener name"},
		{"control plane not advertised", []string{"listeners", "PLAINTEXT://:1,CONTROLLER://:2",
			"listener.security.protocol.map", "PLAINTEXT:PLAINTEXT,CONTROLLER:PLAINTEXT", "advertised.listeners", "PLAINTEXT://h:1",
			"control.plane.listener.name", "CONTROLLER"}, "must be a listener name defined in advertised.listeners"},
		{"bad chroot", []string{"zookeeper.connect", "zk:2181/a/"}, "zookeeper.connect"},
		{"commit acks", []string{"offsets.commit.required.acks", "4"}, "offsets.commit.required.acks"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			_, _, err := NewBroker(minimal(tc.props...))
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("err = %v, want mention of %q", err, tc.want)
			}
		})
	}
}

func TestConfigLoadBrokerFileWithOverrides(t *testing.T) {
	path := filepath.Join(t.TempDir(), "server.properties")
	content := "# test\nbroker.id=0\nlisteners=PLAINTEXT://:9092\nlog.dirs=/tmp/x\nzookeeper.connect=localhost:2181/samsa\n"
	if err := os.WriteFile(path, []byte(content), 0o644); err != nil {
		t.Fatal(err)
	}
	b, warnings, err := LoadBroker(path, []string{"broker.id=2", "listeners=PLAINTEXT://127.0.0.1:9094"})
	if err != nil || len(warnings) != 0 {
		t.Fatalf("LoadBroker: %v %v", warnings, err)
	}
	if servers, chroot := b.ZKConnect(); len(servers) != 1 || servers[0] != "localhost:2181" || chroot != "/samsa" {
		t.Errorf("ZKConnect = %v %q", servers, chroot)
	}
	if b.BrokerID != 2 || b.Listeners()[0].Port != 9094 || b.ZKChroot() != "/samsa" {
		t.Errorf("got id %d listeners %v chroot %q", b.BrokerID, b.Listeners(), b.ZKChroot())
	}
	if v, supplied, ok := b.Value("broker.id"); v != "2" || !supplied || !ok {
		t.Errorf("Value(broker.id) = %q %v %v", v, supplied, ok)
	}
	if v, supplied, ok := b.Value("num.partitions"); v != "1" || supplied || !ok {
		t.Errorf("Value(num.partitions) = %q %v %v", v, supplied, ok)
	}
	if _, _, err := LoadBroker(path, []string{"bad"}); err == nil {
		t.Error("bad override accepted")
	}
	if _, _, err := LoadBroker(filepath.Join(t.TempDir(), "missing"), nil); err == nil {
		t.Error("missing file accepted")
	}
}

// TestConfigStockServerProperties loads the repository's server.properties:
// it must parse with no warning and no error.
func TestConfigStockServerProperties(t *testing.T) {
	b, warnings, err := LoadBroker("../server.properties", nil)
	if err != nil || len(warnings) > 0 {
		t.Fatalf("server.properties: warnings %v, err %v", warnings, err)
	}
	if b.BrokerID != 0 || b.LogDirs()[0] != "/tmp/kafka-logs" || b.NumPartitions != 1 || b.ZKServers()[0] != "localhost:2181" {
		t.Errorf("unexpected values: %+v", b)
	}
}

// TestConfigBrokerSecureListeners: SSL and SASL listeners parse with their
// protocols, and listener-prefixed keys are known (no warning).
func TestConfigBrokerSecureListeners(t *testing.T) {
	b, warnings, err := NewBroker(map[string]string{"zookeeper.connect": "zk:2181",
		"listeners": "SSL://:1,INTERNAL://:2", "listener.security.protocol.map": "SSL:SSL,INTERNAL:SASL_SSL",
		"inter.broker.listener.name": "INTERNAL", "listener.name.internal.ssl.keystore.location": "/k.jks",
		"listener.name.internal.scram-sha-512.sasl.jaas.config": "x required;", "listener.name.internal.sasl.enabled.mechanisms": "SCRAM-SHA-512",
		"listener.name.internal.nokey": "1"})
	if err != nil {
		t.Fatal(err)
	}
	if ls := b.Listeners(); len(ls) != 2 || ls[0].SecurityProtocol != "SSL" || ls[1].SecurityProtocol != "SASL_SSL" {
		t.Fatalf("listeners %+v", ls)
	}
	if len(warnings) != 1 || !strings.Contains(string(warnings[0]), "listener.name.internal.nokey") {
		t.Fatalf("warnings %v, want one for listener.name.internal.nokey", warnings)
	}
}

func TestConfigControlPlaneListener(t *testing.T) {
	b, _, err := NewBroker(minimal("listeners", "PLAINTEXT://127.0.0.1:9092,CONTROLLER://127.0.0.1:9093",
		"listener.security.protocol.map", "PLAINTEXT:PLAINTEXT,CONTROLLER:SSL", "control.plane.listener.name", "controller"))
	if err != nil {
		t.Fatal(err)
	}
	l, ok := b.ControlPlaneListener()
	if !ok || l.Name != "CONTROLLER" || l.Port != 9093 || l.SecurityProtocol != "SSL" {
		t.Fatalf("ControlPlaneListener = %+v, %v", l, ok)
	}
	if got := b.ControllerToBrokerListenerName(); got != "CONTROLLER" {
		t.Fatalf("ControllerToBrokerListenerName = %q", got)
	}
	d, _, err := NewBroker(minimal())
	if err != nil {
		t.Fatal(err)
	}
	if _, ok := d.ControlPlaneListener(); ok || d.ControllerToBrokerListenerName() != "PLAINTEXT" {
		t.Fatalf("unset control plane: %q", d.ControllerToBrokerListenerName())
	}
}
