package zkutil_test

import (
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"reflect"
	"testing"

	"samsa/zkutil"
)

func golden(t testing.TB, name string) []byte {
	t.Helper()
	b, err := os.ReadFile(filepath.Join("testdata", name))
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// sameJSON compares two JSON documents ignoring key order (Kafka writes
// through a hash map, so key order is not part of the format).
func sameJSON(t *testing.T, name string, got, want []byte) {
	t.Helper()
	var g, w any
	if err := json.Unmarshal(got, &g); err != nil {
		t.Fatalf("%s: encoded JSON invalid: %v: %s", name, err, got)
	}
	if err := json.Unmarshal(want, &w); err != nil {
		t.Fatalf("%s: golden JSON invalid: %v", name, err)
	}
	if !reflect.DeepEqual(g, w) {
		t.Fatalf("%s:\n got  %s\n want %s", name, got, want)
	}
}

// TestZKCodecGoldenRoundTrip decodes each golden file (the examples of
// shared/reference/kafka-zookeeper-mode.md §1) and checks that encoding the
// result gives the same JSON content.
func TestZKCodecGoldenRoundTrip(t *testing.T) {
	cases := []struct {
		file   string
		encode func(t *testing.T, data []byte) []byte
	}{
		{"broker_v4.json", func(t *testing.T, d []byte) []byte {
			r, err := zkutil.DecodeBrokerRegistration(d)
			mustf(t, err, "decode")
			return r.Encode()
		}},
		{"broker_v5.json", func(t *testing.T, d []byte) []byte {
			r, err := zkutil.DecodeBrokerRegistration(d)
			mustf(t, err, "decode")
			return r.Encode()
		}},
		{"topic_v2.json", func(t *testing.T, d []byte) []byte {
			a, err := zkutil.DecodeTopicAssignment(d)
			mustf(t, err, "decode")
			return a.Encode()
		}},
		{"topic_v3.json", func(t *testing.T, d []byte) []byte {
			a, err := zkutil.DecodeTopicAssignment(d)
			mustf(t, err, "decode")
			return a.Encode()
		}},
		{"partition_state.json", func(t *testing.T, d []byte) []byte {
			s, err := zkutil.DecodePartitionState(d)
			mustf(t, err, "decode")
			return s.Encode()
		}},
		{"controller.json", func(t *testing.T, d []byte) []byte {
			c, err := zkutil.DecodeControllerInfo(d)
			mustf(t, err, "decode")
			return c.Encode()
		}},
		{"cluster_id.json", func(t *testing.T, d []byte) []byte {
			id, err := zkutil.DecodeClusterID(d)
			mustf(t, err, "decode")
			return zkutil.EncodeClusterID(id)
		}},
		{"entity_config.json", func(t *testing.T, d []byte) []byte {
			c, err := zkutil.DecodeEntityConfig(d)
			mustf(t, err, "decode")
			return zkutil.EncodeEntityConfig(c)
		}},
		{"config_change_v2.json", func(t *testing.T, d []byte) []byte {
			p, err := zkutil.DecodeConfigChange(d)
			mustf(t, err, "decode")
			return zkutil.EncodeConfigChange(p)
		}},
		{"isr_change.json", func(t *testing.T, d []byte) []byte {
			tps, err := zkutil.DecodeIsrChangeNotification(d)
			mustf(t, err, "decode")
			return zkutil.EncodeIsrChangeNotification(tps)
		}},
		{"preferred_replica_election.json", func(t *testing.T, d []byte) []byte {
			tps, err := zkutil.DecodePreferredReplicaElection(d)
			mustf(t, err, "decode")
			return zkutil.EncodePreferredReplicaElection(tps)
		}},
		{"reassign_partitions.json", func(t *testing.T, d []byte) []byte {
			r, err := zkutil.DecodeReassignment(d)
			mustf(t, err, "decode")
			return zkutil.EncodeReassignment(r)
		}},
		{"consumer_registration.json", func(t *testing.T, d []byte) []byte {
			r, err := zkutil.DecodeConsumerRegistration(d)
			mustf(t, err, "decode")
			return r.Encode()
		}},
		{"producer_id_block.json", func(t *testing.T, d []byte) []byte {
			b, err := zkutil.DecodeProducerIDBlock(d)
			mustf(t, err, "decode")
			return b.Encode()
		}},
		{"feature.json", func(t *testing.T, d []byte) []byte {
			f, err := zkutil.DecodeFeatureZNode(d)
			mustf(t, err, "decode")
			return f.Encode()
		}},
		{"log_dir_event.json", func(t *testing.T, d []byte) []byte {
			b, err := zkutil.DecodeLogDirEvent(d)
			mustf(t, err, "decode")
			return zkutil.EncodeLogDirEvent(b)
		}},
	}
	for _, tc := range cases {
		t.Run(tc.file, func(t *testing.T) {
			want := golden(t, tc.file)
			sameJSON(t, tc.file, tc.encode(t, want), want)
		})
	}
}

func TestZKCodecBrokerRegistrationVersions(t *testing.T) {
	r4, err := zkutil.DecodeBrokerRegistration(golden(t, "broker_v4.json"))
	mustf(t, err, "v4")
	want4 := zkutil.BrokerRegistration{
		Version: 4, JMXPort: -1, Timestamp: 1620000000000, Rack: "dc1",
		Endpoints: []zkutil.Endpoint{
			{ListenerName: "PLAINTEXT", SecurityProtocol: "PLAINTEXT", Host: "kafka1", Port: 9092},
			{ListenerName: "SSL", SecurityProtocol: "SSL", Host: "kafka1", Port: 9093},
		},
	}
	if !reflect.DeepEqual(r4, want4) {
		t.Fatalf("v4 = %+v", r4)
	}
	r1, err := zkutil.DecodeBrokerRegistration(golden(t, "broker_v1.json"))
	mustf(t, err, "v1")
	if len(r1.Endpoints) != 1 || r1.Endpoints[0] != (zkutil.Endpoint{ListenerName: "PLAINTEXT", SecurityProtocol: "PLAINTEXT", Host: "kafka1", Port: 9092}) {
		t.Fatalf("v1 = %+v", r1)
	}
	r2, err := zkutil.DecodeBrokerRegistration(golden(t, "broker_v2.json"))
	mustf(t, err, "v2")
	if len(r2.Endpoints) != 1 || r2.Endpoints[0].Host != "kafka2" || r2.Endpoints[0].SecurityProtocol != "PLAINTEXT" {
		t.Fatalf("v2 = %+v", r2)
	}
	r5, err := zkutil.DecodeBrokerRegistration(golden(t, "broker_v5.json"))
	mustf(t, err, "v5")
	if r5.Endpoints[0] != (zkutil.Endpoint{ListenerName: "INTERNAL", SecurityProtocol: "SASL_SSL", Host: "::1", Port: 9094}) ||
		r5.Features["feature_1"].MaxVersion != 2 {
		t.Fatalf("v5 = %+v", r5)
	}
	// host/port follow the first PLAINTEXT-protocol endpoint.
	var j map[string]any
	_ = json.Unmarshal(r5.Encode(), &j)
	if j["host"] != nil || j["port"].(float64) != -1 || j["endpoints"].([]any)[0] != "INTERNAL://[::1]:9094" {
		t.Fatalf("v5 encode = %v", j)
	}
}

func TestZKCodecOldVersions(t *testing.T) {
	a, err := zkutil.DecodeTopicAssignment(golden(t, "topic_v1.json"))
	mustf(t, err, "topic v1")
	if a.Version != 1 || len(a.Partitions) != 3 || a.Partitions[2][0] != 3 || a.AddingReplicas == nil {
		t.Fatalf("topic v1 = %+v", a)
	}
	for _, f := range []string{"config_change_v0.json", "config_change_v1.json", "config_change_v2.json"} {
		p, err := zkutil.DecodeConfigChange(golden(t, f))
		mustf(t, err, "%s", f)
		if p != "topics/foo" {
			t.Fatalf("%s = %q", f, p)
		}
	}
	c, err := zkutil.DecodeControllerInfo(golden(t, "controller_v2.json"))
	mustf(t, err, "controller v2")
	if c.BrokerID != 2 {
		t.Fatalf("controller v2 = %+v", c)
	}
	if c, err := zkutil.DecodeControllerInfo([]byte("3")); err != nil || c.BrokerID != 3 {
		t.Fatalf("bare controller id: %+v %v", c, err)
	}
	if e, err := zkutil.DecodeControllerEpoch([]byte("7")); err != nil || e != 7 {
		t.Fatalf("epoch: %d %v", e, err)
	}
	if string(zkutil.EncodeControllerEpoch(7)) != "7" || string(zkutil.EncodeConsumerOffset(1234)) != "1234" {
		t.Fatal("ASCII encodings")
	}
}

func TestZKCodecRejectsBadInput(t *testing.T) {
	bad := [][]byte{nil, []byte(""), []byte("{"), []byte("[]"), []byte(`{"version":"x"}`), []byte("null")}
	for _, b := range bad {
		if _, err := zkutil.DecodeBrokerRegistration(b); !errors.Is(err, zkutil.ErrMalformed) {
			t.Errorf("broker %q: %v", b, err)
		}
		if _, err := zkutil.DecodeTopicAssignment(b); !errors.Is(err, zkutil.ErrMalformed) {
			t.Errorf("topic %q: %v", b, err)
		}
		if _, err := zkutil.DecodePartitionState(b); !errors.Is(err, zkutil.ErrMalformed) {
			t.Errorf("state %q: %v", b, err)
		}
		if _, err := zkutil.DecodeClusterID(b); !errors.Is(err, zkutil.ErrMalformed) {
			t.Errorf("cluster id %q: %v", b, err)
		}
	}
	if _, err := zkutil.DecodeTopicAssignment([]byte(`{"version":2,"partitions":{"-1":[1]}}`)); !errors.Is(err, zkutil.ErrMalformed) {
		t.Errorf("negative partition: %v", err)
	}
	if _, err := zkutil.DecodeBrokerRegistration([]byte(`{"version":4,"endpoints":["nonsense"]}`)); !errors.Is(err, zkutil.ErrMalformed) {
		t.Errorf("bad endpoint: %v", err)
	}
}

func TestZKPaths(t *testing.T) {
	cases := map[string]string{
		zkutil.BrokerIDPath(3):                                       "/brokers/ids/3",
		zkutil.PartitionStatePath("foo", 2):                          "/brokers/topics/foo/partitions/2/state",
		zkutil.EntityConfigPath(zkutil.ConfigTypeTopic, "foo"):       "/config/topics/foo",
		zkutil.DeleteTopicPath("foo"):                                "/admin/delete_topics/foo",
		zkutil.ConsumerOffsetPath("g", "t", 1):                       "/consumers/g/offsets/t/1",
		zkutil.ConsumerOwnerPath("g", "t", 1):                        "/consumers/g/owners/t/1",
		zkutil.ConsumerIDPath("g", "c1"):                             "/consumers/g/ids/c1",
		zkutil.IsrChangeNotificationSeqPath("isr_change_0000000001"): "/isr_change_notification/isr_change_0000000001",
	}
	for got, want := range cases {
		if got != want {
			t.Errorf("path %q, want %q", got, want)
		}
	}
	want := []string{"/consumers", "/brokers/ids", "/brokers/topics", "/config/changes", "/admin/delete_topics",
		"/brokers/seqid", "/isr_change_notification", "/latest_producer_id_block", "/log_dir_event_notification",
		"/config/topics", "/config/clients", "/config/users", "/config/brokers", "/config/ips"}
	if got := zkutil.PersistentPaths(); !reflect.DeepEqual(got, want) {
		t.Errorf("persistent paths %v", got)
	}
	for _, tc := range []struct{ in, chroot string }{
		{"h1:2181,h2:2181/kafka", "/kafka"}, {"h1:2181", ""}, {"h1:2181/", ""}, {"h:1/a/b/", "/a/b"},
	} {
		_, chroot, err := zkutil.ParseConnect(tc.in)
		if err != nil || chroot != tc.chroot {
			t.Errorf("ParseConnect(%q) = %q, %v", tc.in, chroot, err)
		}
	}
	for _, bad := range []string{"", "/kafka", "h:1/a//b", "h:1/a/../b"} {
		if _, _, err := zkutil.ParseConnect(bad); err == nil {
			t.Errorf("ParseConnect(%q) accepted", bad)
		}
	}
}

// A v1 registration with a port no endpoint can carry is refused, as v2+ endpoints are,
// so every registration that decodes also re-decodes from its own encoding (found by
// FuzzZKCodecs: "port":-1).
func TestBrokerRegistrationV1PortRange(t *testing.T) {
	for _, port := range []string{"-1", "65536"} {
		data := []byte(`{"version":1,"host":"h","port":` + port + `}`)
		if _, err := zkutil.DecodeBrokerRegistration(data); err == nil {
			t.Errorf("port %s: decoded, want a malformed-data error", port)
		}
	}
	r, err := zkutil.DecodeBrokerRegistration([]byte(`{"version":1,"host":"h","port":9092}`))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := zkutil.DecodeBrokerRegistration(r.Encode()); err != nil {
		t.Fatalf("re-decode: %v", err)
	}
}
