package txn

import (
	"fmt"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/IBM/sarama"

	"samsa/broker/brokertest"
)

// TestToolTransactionsListDescribe: kafka-transactions list and describe
// print Kafka's tables for an open, then committed, Sarama transaction.
func TestToolTransactionsListDescribe(t *testing.T) {
	c := brokertest.NewCluster(t, 1, brokertest.WithInternalTopicPartitions(2))
	c.CreateTopic(t, "tt", 1, 1)
	p := c.SyncProducer(t, brokertest.SaramaTxnConfig("tool-txn"))
	if err := p.BeginTxn(); err != nil {
		t.Fatal(err)
	}
	if _, _, err := p.SendMessage(&sarama.ProducerMessage{Topic: "tt", Value: sarama.StringEncoder("v")}); err != nil {
		t.Fatal(err)
	}
	boot := c.Addr(0)
	id := c.Broker(0).ID()
	out, errOut, code := runTool(t, "", "kafka-transactions", "--bootstrap-server", boot, "list")
	if code != 0 {
		t.Fatalf("list: %d %s", code, errOut)
	}
	lines := strings.Split(strings.TrimRight(out, "\n"), "\n")
	if len(lines) != 2 || lines[0] != "TransactionalId\tCoordinator\tProducerId\tTransactionState\t" ||
		!regexp.MustCompile(fmt.Sprintf(`^tool-txn       \t%d +\t\d+ +\tOngoing         \t$`, id)).MatchString(lines[1]) {
		t.Fatalf("list output:\n%q", out)
	}
	out, errOut, code = runTool(t, "", "kafka-transactions", "--bootstrap-server", boot, "describe", "--transactional-id", "tool-txn")
	if code != 0 {
		t.Fatalf("describe: %d %s", code, errOut)
	}
	lines = strings.Split(strings.TrimRight(out, "\n"), "\n")
	if len(lines) != 2 || lines[0] != "CoordinatorId\tTransactionalId\tProducerId\tProducerEpoch\tTransactionState\tTransactionTimeoutMs\tCurrentTransactionStartTimeMs\tTransactionDurationMs\tTopicPartitions\t" {
		t.Fatalf("describe header:\n%q", out)
	}
	cells := strings.Split(lines[1], "\t")
	if len(cells) != 10 || strings.TrimSpace(cells[0]) != fmt.Sprint(id) || strings.TrimSpace(cells[1]) != "tool-txn" ||
		strings.TrimSpace(cells[4]) != "Ongoing" || strings.TrimSpace(cells[5]) != "60000" || strings.TrimSpace(cells[8]) != "tt-0" {
		t.Fatalf("describe row %q", lines[1])
	}
	if err := p.CommitTxn(); err != nil {
		t.Fatal(err)
	}
	brokertest.WaitFor(t, 30*time.Second, func() error {
		out, _, _ = runTool(t, "", "kafka-transactions", "--bootstrap-server", boot, "describe", "--transactional-id", "tool-txn")
		if !strings.Contains(out, "\tCompleteCommit  \t") {
			return fmt.Errorf("describe after commit:\n%s", out)
		}
		return nil
	})
	_, errOut, code = runTool(t, "", "kafka-transactions", "--bootstrap-server", boot, "describe", "--transactional-id", "nope")
	if code == 0 || !strings.Contains(errOut, "nope") {
		t.Fatalf("unknown id: %d %q", code, errOut)
	}
}

// TestToolProducerPerfTransactional: kafka-producer-perf-test
// --transactional-id --transaction-duration-ms produces every record in
// committed transactions (the coordinator ends in CompleteCommit).
func TestToolProducerPerfTransactional(t *testing.T) {
	c := brokertest.NewCluster(t, 1, brokertest.WithInternalTopicPartitions(2))
	c.CreateTopic(t, "perf-txn", 2, 1)
	boot := c.Addr(0)
	out, errOut, code := runTool(t, "", "kafka-producer-perf-test", "--topic", "perf-txn", "--num-records", "2000", "--record-size", "100",
		"--throughput", "-1", "--producer-props", "bootstrap.servers="+boot, "--transactional-id", "perf-txn-id",
		"--transaction-duration-ms", "20")
	if code != 0 || errOut != "" {
		t.Fatalf("producer: exit %d\n%s\nstderr: %s", code, out, errOut)
	}
	if !strings.Contains(out, "2000 records sent") {
		t.Fatalf("no total line:\n%s", out)
	}
	// EndTxn answers once PrepareCommit is written; CompleteCommit follows the markers.
	brokertest.WaitFor(t, 30*time.Second, func() error {
		out, errOut, code = runTool(t, "", "kafka-transactions", "--bootstrap-server", boot, "describe", "--transactional-id", "perf-txn-id")
		if code != 0 || !strings.Contains(out, "\tCompleteCommit  \t") {
			return fmt.Errorf("describe: %d %s\n%s", code, errOut, out)
		}
		return nil
	})
}

// TestToolTransactionsAbortArgs: abort refuses incomplete identifications
// with Kafka's messages before contacting anything.
func TestToolTransactionsAbortArgs(t *testing.T) {
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"--topic", "t", "--partition", "0"}, "The transaction to abort must be identified either with --start-offset"},
		{[]string{"--topic", "t", "--partition", "0", "--producer-id", "5"}, "Missing required argument --producer-epoch"},
		{[]string{"--topic", "t", "--partition", "0", "--producer-id", "5", "--producer-epoch", "1"}, "Missing required argument --coordinator-epoch"},
		{[]string{"--partition", "0", "--start-offset", "3"}, `Missing required argument "[topic]"`},
	} {
		_, errOut, code := runTool(t, "", append([]string{"kafka-transactions", "--bootstrap-server", "127.0.0.1:1", "abort"}, tc.args...)...)
		if code != 1 || !strings.Contains(errOut, tc.want) {
			t.Errorf("%v: exit %d %q, want %q", tc.args, code, errOut, tc.want)
		}
	}
}
