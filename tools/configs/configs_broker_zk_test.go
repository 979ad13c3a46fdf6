package configs

import (
	"errors"
	"fmt"
	"maps"
	"reflect"
	"testing"

	"samsa/tools/internal/tooltest"
	"samsa/zkutil"
)

// brokerRunningMsg is Kafka 2.8's refusal of non-throttle broker configs
// through ZooKeeper; the first argument is the configs' Set, the second
// the clause naming what runs.
const brokerRunningMsg = "requirement failed: --bootstrap-server option must be specified to update broker configs Set(%s). %s" +
	" Broker configuration updates using ZooKeeper are supported for bootstrapping before brokers" +
	" are started to enable encrypted password configs to be stored in ZooKeeper.\n"

// TestToolConfigsZKBrokerRunning: kafka-configs --zookeeper --alter of a
// broker entity does what Kafka 2.8's alterConfigWithZk does. Before the
// broker registers any dynamic config is stored (bootstrapping); while
// /brokers/ids/1 exists a non-throttle config on broker 1, or on the
// cluster default while any broker is registered, is refused with Kafka's
// message before any other check, nothing is written and no change is
// announced; the replication throttles, deletions and a broker that is
// not registered are accepted.
func TestToolConfigsZKBrokerRunning(t *testing.T) {
	zk, c := tooltest.ZKCluster(t)
	alter := func(wantCode int, wantErr string, args ...string) {
		t.Helper()
		out, errOut, code := runTool(t, "", append([]string{"kafka-configs", "--zookeeper", zk, "--alter"}, args...)...)
		if code != wantCode || (wantErr != "" && errOut != wantErr) {
			t.Fatalf("%v: exit %d, stdout %q, stderr %q; want exit %d, stderr %q", args, code, out, errOut, wantCode, wantErr)
		}
	}
	stored := func(entity string) map[string]string {
		t.Helper()
		cfg, err := c.GetEntityConfig(zkutil.ConfigTypeBroker, entity)
		if err != nil && !errors.Is(err, zkutil.ErrNoNode) {
			t.Fatal(err)
		}
		return cfg
	}
	alter(0, "", "--broker", "1", "--add-config", "message.max.bytes=2000000")
	alter(0, "", "--broker-defaults", "--add-config", "log.retention.ms=3600000")

	reg := zkutil.BrokerRegistration{ID: 1, JMXPort: -1, Timestamp: 1,
		Endpoints: []zkutil.Endpoint{{ListenerName: "PLAINTEXT", SecurityProtocol: "PLAINTEXT", Host: "127.0.0.1", Port: 9091}}}
	if _, err := c.RegisterBroker(reg); err != nil {
		t.Fatal(err)
	}
	before1, beforeDefault := stored("1"), stored("<default>")
	changes, err := c.GetConfigChanges()
	if err != nil {
		t.Fatal(err)
	}
	onBroker1 := "when broker 1 is running."
	onDefault := "for default cluster if any broker is running."
	for _, tc := range []struct {
		args    []string
		set     string
		running string
	}{
		{[]string{"--broker", "1", "--add-config", "message.max.bytes=3000000"}, "message.max.bytes", onBroker1},
		// Before the value checks: Kafka refuses first.
		{[]string{"--broker", "1", "--add-config", "message.max.bytes=-5,follower.replication.throttled.rate=1024"}, "message.max.bytes", onBroker1},
		{[]string{"--broker", "1", "--add-config", "listener.name.internal.ssl.keystore.password=pw,password.encoder.secret=s"},
			"listener.name.internal.ssl.keystore.password, password.encoder.secret", onBroker1},
		{[]string{"--entity-type", "brokers", "--entity-default", "--add-config", "log.retention.ms=1,log.segment.bytes=2000000"},
			"log.retention.ms, log.segment.bytes", onDefault},
	} {
		alter(1, fmt.Sprintf(brokerRunningMsg, tc.set, tc.running), tc.args...)
	}
	if got1, gotDefault := stored("1"), stored("<default>"); !maps.Equal(got1, before1) || !maps.Equal(gotDefault, beforeDefault) {
		t.Fatalf("refused changes wrote /config/brokers/1 = %v, <default> = %v", got1, gotDefault)
	}
	if after, err := c.GetConfigChanges(); err != nil || len(after) != len(changes) {
		t.Fatalf("refused changes announced: %d notifications before, %v after (%v)", len(changes), after, err)
	}

	// Accepted while broker 1 runs: throttles, a deletion, broker 2.
	alter(0, "", "--broker", "1", "--add-config", "leader.replication.throttled.rate=10,follower.replication.throttled.rate=20")
	alter(0, "", "--broker-defaults", "--add-config", "replica.alter.log.dirs.io.max.bytes.per.second=30")
	alter(0, "", "--broker", "1", "--delete-config", "message.max.bytes")
	alter(0, "", "--broker", "2", "--add-config", "message.max.bytes=4000000")
	for entity, want := range map[string]map[string]string{
		"1":         {"leader.replication.throttled.rate": "10", "follower.replication.throttled.rate": "20"},
		"<default>": {"log.retention.ms": "3600000", "replica.alter.log.dirs.io.max.bytes.per.second": "30"},
		"2":         {"message.max.bytes": "4000000"},
	} {
		if got := stored(entity); !reflect.DeepEqual(got, want) {
			t.Errorf("/config/brokers/%s = %v, want %v", entity, got, want)
		}
	}

	// Once no broker is registered, the default takes any config again.
	if err := c.DeregisterBroker(1); err != nil {
		t.Fatal(err)
	}
	alter(0, "", "--broker-defaults", "--add-config", "log.retention.ms=1")
	if got := stored("<default>")["log.retention.ms"]; got != "1" {
		t.Errorf("default log.retention.ms = %q after the brokers stopped", got)
	}
}
