package txn

import (
	"context"
	"fmt"
	"net"
	"strconv"
	"time"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kmsg"
	"github.com/urfave/cli/v2"

	"samsa/tools/internal/tool"
)

// txnAbortCommand is Kafka 3.0's AbortTransactionCommand: write an ABORT
// marker for a hanging transaction on one partition (Admin.abortTransaction:
// WriteTxnMarkers to the partition's leader, which needs ClusterAction).
// The transaction is named by --start-offset (looked up with
// DescribeProducers) or by --producer-id, --producer-epoch and
// --coordinator-epoch (a negative coordinator epoch becomes 0, as Kafka).
// Sarama has no WriteTxnMarkers request, so the marker goes through a
// franz-go client (kgo), which sends it to the partition's leader.
func txnAbortCommand(env tool.Env) *cli.Command {
	return &cli.Command{Name: "abort", Usage: "abort a hanging transaction (requires administrative privileges)",
		Flags: []cli.Flag{
			&cli.StringFlag{Name: "topic", Usage: "topic name"},
			&cli.StringFlag{Name: "partition", Usage: "partition number"},
			&cli.StringFlag{Name: "start-offset", Usage: "start offset of the transaction to abort (brokers on 3.0 and above)"},
			&cli.StringFlag{Name: "producer-id", Usage: "producer id (brokers older than 3.0)"},
			&cli.StringFlag{Name: "producer-epoch", Usage: "producer epoch (brokers older than 3.0)"},
			&cli.StringFlag{Name: "coordinator-epoch", Usage: "coordinator epoch (brokers older than 3.0)"},
		},
		Action: tool.ErrorExitAction(env, runTxnAbort)}
}

// abortSpec is Kafka's AbortTransactionSpec.
type abortSpec struct {
	topic            string
	partition        int32
	producerID       int64
	producerEpoch    int16
	coordinatorEpoch int32
}

func (s abortSpec) String() string {
	return fmt.Sprintf("AbortTransactionSpec(topicPartition=%s-%d, producerId=%d, producerEpoch=%d, coordinatorEpoch=%d)",
		s.topic, s.partition, s.producerID, s.producerEpoch, s.coordinatorEpoch)
}

func runTxnAbort(c *cli.Context, env tool.Env) error {
	topic := c.String("topic")
	if topic == "" {
		return tool.Error("Missing required argument \"[topic]\"")
	}
	partition, err := partitionFlag(c)
	if err != nil {
		return err
	}
	spec := abortSpec{topic: topic, partition: partition}
	parse := func(name string, bits int) (int64, bool, error) {
		s := c.String(name)
		if s == "" {
			return 0, false, nil
		}
		n, err := strconv.ParseInt(s, 10, bits)
		if err != nil {
			return 0, false, tool.Errorf("argument --%s: could not convert '%s'", name, s)
		}
		return n, true, nil
	}
	start, hasStart, err := parse("start-offset", 64)
	if err != nil {
		return err
	}
	pid, hasPID, err := parse("producer-id", 64)
	if err != nil {
		return err
	}
	if !hasStart && !hasPID {
		return tool.Error("The transaction to abort must be identified either with --start-offset (for brokers on 3.0 or above) or with --producer-id, --producer-epoch, and --coordinator-epoch (for older brokers)")
	}
	if !hasStart {
		epoch, ok, err := parse("producer-epoch", 16)
		if err != nil {
			return err
		}
		if !ok {
			return tool.Error("Missing required argument --producer-epoch")
		}
		ce, ok, err := parse("coordinator-epoch", 32)
		if err != nil {
			return err
		}
		if !ok {
			return tool.Error("Missing required argument --coordinator-epoch")
		}
		spec.producerID, spec.producerEpoch, spec.coordinatorEpoch = pid, int16(epoch), int32(max(ce, 0))
	}
	client, cfg, err := txnClient(c.Lineage()[1])
	if err != nil {
		return err
	}
	defer client.Close()
	if hasStart {
		p, err := describeProducers(client, cfg, topic, partition, -1)
		if err != nil {
			return tool.Errorf("Failed to validate producer state for partition %s-%d: %s", topic, partition, tool.JavaErrorText(err))
		}
		found := false
		for _, s := range p.ActiveProducers {
			if s.CurrentTxnStartOffset >= 0 && s.CurrentTxnStartOffset == start {
				spec.producerID, spec.producerEpoch, spec.coordinatorEpoch = s.ProducerID, int16(s.ProducerEpoch), max(s.CoordinatorEpoch, 0)
				found = true
				break
			}
		}
		if !found {
			return tool.Errorf("Could not find any open transactions starting at offset %d on partition %s-%d", start, topic, partition)
		}
	}
	leader, err := client.Leader(topic, partition)
	if err != nil {
		return tool.Errorf("Failed to abort transaction %s: %s", spec, tool.JavaErrorText(err))
	}
	if code, err := writeAbortMarker(leader.Addr(), spec); err != nil || code != 0 {
		if err == nil {
			err = kerr.ErrorForCode(code)
		}
		return tool.Errorf("Failed to abort transaction %s: %v", spec, err)
	}
	return nil
}

// writeAbortMarker sends the ABORT marker to the partition's leader (found
// at addr, the leader Sarama's metadata named) and returns the partition's
// error code.
func writeAbortMarker(addr string, spec abortSpec) (int16, error) {
	if _, _, err := net.SplitHostPort(addr); err != nil {
		return 0, err
	}
	cl, err := kgo.NewClient(kgo.SeedBrokers(addr), kgo.ClientID("kafka-transactions"), kgo.DialTimeout(10*time.Second))
	if err != nil {
		return 0, err
	}
	defer cl.Close()
	req := kmsg.NewPtrWriteTxnMarkersRequest()
	m := kmsg.NewWriteTxnMarkersRequestMarker()
	m.ProducerID, m.ProducerEpoch, m.Committed, m.CoordinatorEpoch = spec.producerID, spec.producerEpoch, false, spec.coordinatorEpoch
	t := kmsg.NewWriteTxnMarkersRequestMarkerTopic()
	t.Topic, t.Partitions = spec.topic, []int32{spec.partition}
	m.Topics = append(m.Topics, t)
	req.Markers = append(req.Markers, m)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	kresp, err := cl.Request(ctx, req)
	if err != nil {
		return 0, err
	}
	for _, rm := range kresp.(*kmsg.WriteTxnMarkersResponse).Markers {
		for _, rt := range rm.Topics {
			for _, rp := range rt.Partitions {
				if rt.Topic == spec.topic && rp.Partition == spec.partition {
					return rp.ErrorCode, nil
				}
			}
		}
	}
	return 0, fmt.Errorf("tools: no answer for %s-%d", spec.topic, spec.partition)
}
