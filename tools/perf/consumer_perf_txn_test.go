package perf

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/IBM/sarama"
	"github.com/twmb/franz-go/pkg/kgo"

	"samsa/broker/brokertest"
)

// TestToolPerfConsumerTransactional: kafka-consumer-perf-test reads committed
// transactions written by franz-go at either isolation level, the shape
// bin/samsa-benchmark.sh's transaction cells consume (a one-record warm-up
// transaction, then 100 transactions of 1,000 records round-robin over 6
// partitions, a commit marker per transaction and partition;
// auto.offset.reset=earliest in --consumer.config; auto.create.topics.enable
// with a client's Metadata naming __consumer_offsets before any group: the
// broker must create it with offsets.topic.num.partitions, not
// num.partitions, or the groups here, which hash to partition 1 of 3, never
// find a coordinator and the tool reads 0 records). The tool counts records,
// not offsets: the markers occupy offsets but are no records, so it must
// read exactly the records asked for and exit without the timeout warning.
func TestToolPerfConsumerTransactional(t *testing.T) {
	c := brokertest.NewCluster(t, 1,
		brokertest.WithProperty("transaction.state.log.num.partitions", "3"),
		brokertest.WithProperty("offsets.topic.num.partitions", "3"),
		brokertest.WithProperty("auto.create.topics.enable", "true"), brokertest.WithProperty("num.partitions", "1"))
	c.CreateTopic(t, "perf-txn", 6, 1)
	// The answer is LEADER_NOT_AVAILABLE while the topic is being created.
	_ = c.Sarama(t, brokertest.SaramaConfig(sarama.V2_1_0_0)).RefreshMetadata("__consumer_offsets")
	cl, err := kgo.NewClient(kgo.SeedBrokers(c.Addrs()...), kgo.TransactionalID("perf-txn-writer"),
		kgo.DefaultProduceTopic("perf-txn"), kgo.RecordPartitioner(kgo.RoundRobinPartitioner()),
		kgo.RequiredAcks(kgo.AllISRAcks()), kgo.ProducerBatchCompression(kgo.NoCompression()))
	if err != nil {
		t.Fatal(err)
	}
	defer cl.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 120*time.Second)
	defer cancel()
	txn := func(k int) {
		t.Helper()
		if err := cl.BeginTransaction(); err != nil {
			t.Fatal(err)
		}
		for j := 0; j < k; j++ {
			cl.Produce(ctx, &kgo.Record{Value: []byte(fmt.Sprintf("record-%06d", j))}, func(_ *kgo.Record, err error) {
				if err != nil {
					t.Errorf("produce: %v", err)
				}
			})
		}
		if err := cl.Flush(ctx); err != nil {
			t.Fatalf("flush: %v", err)
		}
		if err := cl.EndTransaction(ctx, kgo.TryCommit); err != nil {
			t.Fatalf("commit: %v", err)
		}
	}
	const txns, perTxn = 100, 1000
	txn(1)
	for i := 0; i < txns; i++ {
		txn(perTxn)
	}
	want := txns*perTxn + 1
	boot := c.Addr(0)
	for iso, group := range map[string]string{"read_uncommitted": "perf-txn-uncommitted", "read_committed": "perf-txn-committed"} {
		props := filepath.Join(t.TempDir(), "consumer.properties")
		if err := os.WriteFile(props, []byte("isolation.level="+iso+"\nauto.offset.reset=earliest\n"), 0o644); err != nil {
			t.Fatal(err)
		}
		done := make(chan string, 1)
		go func() {
			out, errOut, code := runTool(t, "", "kafka-consumer-perf-test", "--bootstrap-server", boot, "--topic", "perf-txn",
				"--messages", fmt.Sprint(want), "--group", group, "--timeout", "30000", "--hide-header", "--consumer.config", props)
			done <- fmt.Sprintf("exit %d\n%s\nstderr: %s", code, out, errOut)
		}()
		var res string
		select {
		case res = <-done:
		case <-time.After(120 * time.Second):
			t.Fatalf("%s: the consumer perf test did not finish within 120 s", iso)
		}
		t.Logf("%s: %s", iso, res)
		lines := strings.Split(res, "\n")
		// exit 0, then exactly one CSV row: no timeout warning.
		if lines[0] != "exit 0" || len(lines) < 2 || !perfCSVRe.MatchString(lines[1]) {
			t.Fatalf("%s: %s", iso, res)
		}
		if n := perfCSVRe.FindStringSubmatch(lines[1])[1]; n != fmt.Sprint(want) {
			t.Errorf("%s: consumed %s records, want %d (the commit markers are no records)", iso, n, want)
		}
	}
}
