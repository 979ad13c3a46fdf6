package clustertest_test

import (
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"samsa/broker/brokertest"
)

// kafkajsVersion is the KafkaJS release .ci/install-deps.sh installs into
// .build/node (npm install --prefix .build/node kafkajs@2.2.4).
const kafkajsVersion = "2.2.4"

// needConfluentKafka returns Debian's python3 with confluent-kafka-python
// (python3-confluent-kafka, over the system librdkafka), skipping outside CI
// when it is missing.
func needConfluentKafka(t *testing.T) string {
	t.Helper()
	return needPythonModule(t, "confluent_kafka", "python3-confluent-kafka")
}

// needKafkaJS returns node and a node_modules directory holding kafkajs:
// $SAMSA_KAFKAJS_MODULES, else the repository's .build/node/node_modules.
// Missing outside CI, the test is skipped.
func needKafkaJS(t *testing.T) (node, modules string) {
	t.Helper()
	node = needTool(t, "node")
	modules = os.Getenv("SAMSA_KAFKAJS_MODULES")
	if modules == "" {
		root, err := filepath.Abs(filepath.Join("..", "..", ".build", "node", "node_modules"))
		if err != nil {
			t.Fatal(err)
		}
		modules = root
	}
	if _, err := os.Stat(filepath.Join(modules, "kafkajs", "package.json")); err != nil {
		if os.Getenv("CI") != "" {
			t.Fatalf("kafkajs is required in CI (npm install --prefix .build/node kafkajs@%s): %v", kafkajsVersion, err)
		}
		t.Skipf("kafkajs not installed (npm install --prefix .build/node kafkajs@%s): %v", kafkajsVersion, err)
	}
	return node, modules
}

// TestCompatConfluentKafka runs testdata/compat_confluent_kafka.py:
// librdkafka's AdminClient (create, describe configs, create partitions,
// delete), its idempotent zstd producer (every delivery report ok, offsets
// dense per partition), transactions committed and aborted read
// read_committed and read_uncommitted, consume-transform-produce with
// send_offsets_to_transaction, and a second instance fencing the first.
func TestCompatConfluentKafka(t *testing.T) {
	py := needConfluentKafka(t)
	c := newTxnClientCluster(t)
	runClientScript(t, 60*time.Second, "confluent-kafka", nil, py, "compat_confluent_kafka.py",
		strings.Join(c.Addrs(), ","), strconv.Itoa(3))
}

// TestCompatKafkaJS runs testdata/compat_kafkajs.js: KafkaJS's admin client
// (create, metadata, configs, partitions, offsets, groups, delete), an
// idempotent gzip producer, transactions committed and aborted,
// consume-transform-produce with sendOffsets, and a group of two members
// that rebalances when one leaves.
func TestCompatKafkaJS(t *testing.T) {
	node, modules := needKafkaJS(t)
	c := newTxnClientCluster(t)
	runClientScript(t, 60*time.Second, "kafkajs", []string{"NODE_PATH=" + modules}, node, "compat_kafkajs.js",
		strings.Join(c.Addrs(), ","), strconv.Itoa(3))
}

// TestCompatKafkaJSFailover: a KafkaJS idempotent producer (acks=all, one
// request in flight) keeps going while the partition leader is killed: it
// retries NOT_LEADER_OR_FOLLOWER and the lost connection, follows the new
// leader, and the partition read back holds every record exactly once, in
// order (the idempotent retry of a request the dead leader may have
// appended is a duplicate the new leader refuses).
func TestCompatKafkaJSFailover(t *testing.T) {
	node, modules := needKafkaJS(t)
	c := brokertest.NewCluster(t, 3, brokertest.WithInternalTopicPartitions(3),
		brokertest.WithProperty("auto.leader.rebalance.enable", "false"))
	c.CreateTopic(t, "kjsfail", 1, 3)
	c.WaitForISR(t, "kjsfail", 0, 3)
	leader := c.WaitForLeader(t, "kjsfail", 0)
	t.Setenv("NODE_PATH", modules)
	script, err := filepath.Abs(filepath.Join("testdata", "compat_kafkajs_failover.js"))
	if err != nil {
		t.Fatal(err)
	}
	out := runWhileLeaderKilled(t, c, "kjsfail", 100, node, script, strings.Join(c.Addrs(), ","), "kjsfail", "300")
	if !strings.HasSuffix(out, "OK\n") {
		t.Fatalf("kafkajs (leader %d killed):\n%s", leader, out)
	}
	t.Logf("kafkajs:\n%s", out)
}

// runClientScript runs testdata/<name> with interpreter and args, bounded
// by timeout, with env added to the test's environment; the script must end
// its output with OK.
func runClientScript(t *testing.T, timeout time.Duration, client string, env []string, interpreter, name string, args ...string) {
	t.Helper()
	script, err := filepath.Abs(filepath.Join("testdata", name))
	if err != nil {
		t.Fatal(err)
	}
	for _, kv := range env {
		k, v, _ := strings.Cut(kv, "=")
		t.Setenv(k, v)
	}
	out, _ := runBounded(t, timeout, "", interpreter, append([]string{script}, args...)...)
	if !strings.HasSuffix(out, "OK\n") {
		t.Fatalf("%s:\n%s", client, out)
	}
	t.Logf("%s:\n%s", client, out)
}

// newTxnClientCluster is the cluster of the transactional client scripts:
// three brokers, __consumer_offsets and __transaction_state of 3 partitions
// each, the transaction log at RF 3 with min.insync.replicas 2 (Kafka's
// defaults but the partition count).
func newTxnClientCluster(t *testing.T) *brokertest.Cluster {
	return brokertest.NewCluster(t, 3, brokertest.WithInternalTopicPartitions(3),
		brokertest.WithProperty("transaction.state.log.replication.factor", "3"),
		brokertest.WithProperty("transaction.state.log.min.isr", "2"))
}
