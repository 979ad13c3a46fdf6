package txn

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kgo"

	"samsa/broker/brokertest"
)

// TestToolTransactionsAbort: kafka-transactions abort --start-offset ends a
// hanging transaction (its producer stays open, so only the marker can end
// it before the transaction timeout): describe-producers shows the open
// transaction at offset 0 before, none after, and the last stable offset
// moves from 0 past the record and the marker.
func TestToolTransactionsAbort(t *testing.T) {
	c := brokertest.NewCluster(t, 1, brokertest.WithInternalTopicPartitions(2))
	c.CreateTopic(t, "hang", 1, 1)
	boot := c.Addr(0)
	p, err := kgo.NewClient(kgo.SeedBrokers(boot), kgo.TransactionalID("hanging-txn"), kgo.DefaultProduceTopic("hang"),
		kgo.TransactionTimeout(5*time.Minute))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(p.Close)
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	if err := p.BeginTransaction(); err != nil {
		t.Fatal(err)
	}
	if err := p.ProduceSync(ctx, &kgo.Record{Value: []byte("never committed")}).FirstErr(); err != nil {
		t.Fatal(err)
	}
	describe := func() string {
		t.Helper()
		out, errOut, code := runTool(t, "", "kafka-transactions", "--bootstrap-server", boot, "describe-producers", "--topic", "hang", "--partition", "0")
		if code != 0 {
			t.Fatalf("describe-producers: exit %d %s", code, errOut)
		}
		return out
	}
	adm := kadm.NewClient(p)
	lastStable := func() int64 {
		t.Helper()
		offs, err := adm.ListCommittedOffsets(ctx, "hang")
		if err != nil {
			t.Fatal(err)
		}
		o, ok := offs.Lookup("hang", 0)
		if !ok || o.Err != nil {
			t.Fatalf("read_committed end offset: %v %v", ok, o.Err)
		}
		return o.Offset
	}
	if lso := lastStable(); lso != 0 {
		t.Fatalf("before abort, last stable offset %d, want 0", lso)
	}
	if out := describe(); !strings.HasSuffix(strings.TrimRight(out, "\t\n "), "\t0") {
		t.Fatalf("before abort, want an open transaction at offset 0:\n%s", out)
	}
	out, errOut, code := runTool(t, "", "kafka-transactions", "--bootstrap-server", boot, "abort", "--topic", "hang", "--partition", "0", "--start-offset", "0")
	if code != 0 || errOut != "" {
		t.Fatalf("abort: exit %d\n%s\nstderr: %s", code, out, errOut)
	}
	if out := describe(); !strings.HasSuffix(strings.TrimRight(out, "\t\n "), "\tNone") {
		t.Fatalf("after abort, want no open transaction:\n%s", out)
	}
	// The marker moved the last stable offset past the record and itself.
	brokertest.WaitFor(t, 30*time.Second, func() error {
		if lso := lastStable(); lso != 2 {
			return fmt.Errorf("last stable offset %d, want 2 (the aborted record and its marker)", lso)
		}
		return nil
	})
}
