package configs

import (
	"reflect"
	"strings"
	"testing"

	"samsa/broker/brokertest"
	"samsa/zkutil"
)

// TestToolConfigsIPs: --entity-type ips (KIP-612's connection_creation_rate)
// through --bootstrap-server (AlterClientQuotas / DescribeClientQuotas)
// and --zookeeper (/config/ips), with Kafka 2.8's output and refusals.
func TestToolConfigsIPs(t *testing.T) {
	c := brokertest.NewCluster(t, 1)
	bs := []string{"kafka-configs", "--bootstrap-server", c.Addr(0)}
	for _, step := range []struct {
		args []string
		code int
		want string
	}{
		{[]string{"--alter", "--entity-type", "ips", "--entity-name", "127.0.0.2", "--add-config", "connection_creation_rate=5"}, 0,
			"Completed updating config for ip 127.0.0.2.\n"},
		{[]string{"--alter", "--ip-defaults", "--add-config", "connection_creation_rate=20"}, 0,
			"Completed updating default config for ips in the cluster.\n"},
		{[]string{"--describe", "--ip", "127.0.0.2"}, 0, "Quota configs for ip '127.0.0.2' are connection_creation_rate=5.0\n"},
		{[]string{"--describe", "--entity-type", "ips"}, 0,
			"Quota configs for ip '127.0.0.2' are connection_creation_rate=5.0\nQuota configs for the default ip are connection_creation_rate=20.0\n"},
		{[]string{"--alter", "--ip", "127.0.0.2", "--add-config", "producer_byte_rate=1"}, 1, ""},
		{[]string{"--alter", "--ip", "127.0.0.2", "--add-config", "connection_creation_rate=1.5"}, 1, ""},
		{[]string{"--alter", "--ip", "example.invalid", "--add-config", "connection_creation_rate=1"}, 1, ""},
		{[]string{"--alter", "--ip", "127.0.0.2", "--delete-config", "connection_creation_rate"}, 0,
			"Completed updating config for ip 127.0.0.2.\n"},
		{[]string{"--describe", "--ip", "127.0.0.2"}, 0, ""},
	} {
		out, errOut, code := runTool(t, "", append(bs, step.args...)...)
		if code != step.code || (step.code == 0 && out != step.want) {
			t.Errorf("%s: exit %d, stdout %q, stderr %q; want exit %d, %q", strings.Join(step.args, " "), code, out, errOut, step.code, step.want)
		}
	}

	zk := c.ZKConnect()
	zc := c.ZooKeeper(t)
	if _, errOut, code := runTool(t, "", "kafka-configs", "--zookeeper", zk, "--alter", "--ip", "127.0.0.3", "--add-config", "connection_creation_rate=7"); code != 0 {
		t.Fatalf("--zookeeper alter: %d %s", code, errOut)
	}
	if cfg, err := zc.GetEntityConfig(zkutil.ConfigTypeIP, "127.0.0.3"); err != nil || !reflect.DeepEqual(cfg, map[string]string{"connection_creation_rate": "7"}) {
		t.Fatalf("/config/ips/127.0.0.3: %v, %v", cfg, err)
	}
	if _, _, code := runTool(t, "", "kafka-configs", "--zookeeper", zk, "--alter", "--ip", "127.0.0.3", "--add-config", "connection_creation_rate=-1"); code != 1 {
		t.Fatalf("--zookeeper alter with a negative rate: exit %d, want 1", code)
	}
	out, _, code := runTool(t, "", "kafka-configs", "--zookeeper", zk, "--describe", "--entity-type", "ips", "--entity-name", "127.0.0.3")
	if code != 0 || !strings.Contains(out, "Configs for ips '127.0.0.3' are connection_creation_rate=7\n") {
		t.Fatalf("--zookeeper describe: %d %q", code, out)
	}
}
