package console

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kmsg"

	"samsa/broker/brokertest"
	"samsa/broker/record"
)

// txnRequest sends req to broker id and fails the test on a transport error.
func txnRequest(t *testing.T, cl *kgo.Client, id int32, req kmsg.Request) kmsg.Response {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	resp, err := cl.Broker(int(id)).Request(ctx, req)
	if err != nil {
		t.Fatal(err)
	}
	return resp
}

// Kafka's kafka-console-consumer.sh --isolation-level read_committed skips
// aborted transactions; read_uncommitted shows them.
func TestToolConsoleConsumerReadCommitted(t *testing.T) {
	// The test writes transactional batches and markers itself, with no transaction
	// coordinator behind its transactional ids: the KIP-890 check would refuse them.
	c := brokertest.NewCluster(t, 1, brokertest.WithProperty("transaction.partition.verification.enable", "false"))
	c.CreateTopic(t, "rc", 1, 1)
	c.WaitForLeader(t, "rc", 0)
	cl, err := kgo.NewClient(kgo.SeedBrokers(c.Addrs()...))
	if err != nil {
		t.Fatal(err)
	}
	defer cl.Close()
	id := c.Broker(0).ID()
	for _, tx := range []struct {
		pid    int64
		value  string
		commit bool
	}{{10, "aborted", false}, {11, "committed", true}} {
		h := record.NewBuildHeader(0, time.Now().UnixMilli())
		h.ProducerID, h.ProducerEpoch, h.BaseSequence, h.Transactional = tx.pid, 0, 0, true
		b, err := record.Build(h, []record.Record{{Value: []byte(tx.value)}}, record.CodecNone)
		if err != nil {
			t.Fatal(err)
		}
		pr := kmsg.NewPtrProduceRequest()
		pr.Version, pr.Acks, pr.TimeoutMillis = 8, -1, 10000
		txnID := tx.value
		pr.TransactionID = &txnID
		pt := kmsg.NewProduceRequestTopic()
		pt.Topic = "rc"
		pp := kmsg.NewProduceRequestTopicPartition()
		pp.Records = b
		pt.Partitions = append(pt.Partitions, pp)
		pr.Topics = append(pr.Topics, pt)
		if code := txnRequest(t, cl, id, pr).(*kmsg.ProduceResponse).Topics[0].Partitions[0].ErrorCode; code != 0 {
			t.Fatalf("produce: %d", code)
		}
		mr := kmsg.NewPtrWriteTxnMarkersRequest()
		m := kmsg.NewWriteTxnMarkersRequestMarker()
		m.ProducerID, m.Committed = tx.pid, tx.commit
		mt := kmsg.NewWriteTxnMarkersRequestMarkerTopic()
		mt.Topic, mt.Partitions = "rc", []int32{0}
		m.Topics = append(m.Topics, mt)
		mr.Markers = append(mr.Markers, m)
		if code := txnRequest(t, cl, id, mr).(*kmsg.WriteTxnMarkersResponse).Markers[0].Topics[0].Partitions[0].ErrorCode; code != 0 {
			t.Fatalf("marker: %d", code)
		}
	}
	for iso, want := range map[string]string{"read_committed": "committed", "read_uncommitted": "aborted\ncommitted"} {
		n := "1"
		if iso == "read_uncommitted" {
			n = "2"
		}
		out, errOut, code := runTool(t, "", "kafka-console-consumer", "--bootstrap-server", c.Addr(0), "--topic", "rc",
			"--from-beginning", "--max-messages", n, "--timeout-ms", "15000", "--isolation-level", iso)
		if code != 0 || strings.TrimSpace(out) != want {
			t.Fatalf("%s: exit %d out %q (want %q) stderr %q", iso, code, out, want, errOut)
		}
	}
}
