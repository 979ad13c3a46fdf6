package txn

import (
	"fmt"
	"sort"
	"strconv"
	"time"

	"github.com/IBM/sarama"
	"github.com/urfave/cli/v2"

	"samsa/kafka"
	"samsa/tools/internal/tool"
)

// openTxn is a producer with an open transaction on a partition, as
// DescribeProducers reports it.
type openTxn struct {
	topic     string
	partition int32
	p         sarama.ProducerState
}

// runTxnFindHanging is Kafka 3.0's FindHangingTransactionsCommand:
// transactions open on a partition longer than --max-transaction-timeout
// minutes whose producer has no transactional id, no description, or a
// description that does not hold the partition.
func runTxnFindHanging(c *cli.Context, env tool.Env) error {
	topic := c.String("topic")
	brokerS := c.String("broker-id")
	if (topic == "") == (brokerS == "") {
		return tool.Error("Exactly one of --broker-id or --topic must be given")
	}
	if c.String("partition") != "" && topic == "" {
		return tool.Error("The --partition argument requires --topic")
	}
	maxMin, err := strconv.ParseInt(c.String("max-transaction-timeout"), 10, 32)
	if err != nil || maxMin <= 0 {
		return tool.Errorf("argument --max-transaction-timeout: invalid value '%s'", c.String("max-transaction-timeout"))
	}
	client, cfg, err := txnClient(c.Lineage()[1])
	if err != nil {
		return err
	}
	defer client.Close()
	broker := int32(-1)
	var tps []kafka.TopicPartition
	if brokerS != "" {
		n, err := strconv.ParseInt(brokerS, 10, 32)
		if err != nil {
			return tool.Errorf("argument --broker-id: could not convert '%s' to Integer", brokerS)
		}
		broker = int32(n)
		topics, err := client.Topics()
		if err != nil {
			return err
		}
		for _, t := range topics {
			parts, err := client.Partitions(t)
			if err != nil {
				return err
			}
			for _, p := range parts {
				reps, err := client.Replicas(t, p)
				if err != nil {
					return err
				}
				for _, r := range reps {
					if r == broker {
						tps = append(tps, kafka.TopicPartition{Topic: t, Partition: p})
					}
				}
			}
		}
	} else if c.String("partition") != "" {
		p, err := partitionFlag(c)
		if err != nil {
			return err
		}
		tps = []kafka.TopicPartition{{Topic: topic, Partition: p}}
	} else {
		parts, err := client.Partitions(topic)
		if err != nil {
			return err
		}
		for _, p := range parts {
			tps = append(tps, kafka.TopicPartition{Topic: topic, Partition: p})
		}
	}
	nowMs := time.Now().UnixMilli()
	maxMs := maxMin * 60 * 1000
	var candidates []openTxn
	for _, x := range tps {
		p, err := describeProducers(client, cfg, x.Topic, x.Partition, broker)
		if err != nil {
			return txnFailure(fmt.Sprintf("Failed to describe producers for partition %s", x), err)
		}
		for _, s := range p.ActiveProducers {
			if s.CurrentTxnStartOffset >= 0 && nowMs-s.LastTimestamp > maxMs {
				candidates = append(candidates, openTxn{x.Topic, x.Partition, s})
			}
		}
	}
	hanging, err := filterHanging(client, cfg, candidates)
	if err != nil {
		return err
	}
	var rows [][]string
	for _, h := range hanging {
		rows = append(rows, []string{h.topic, strconv.Itoa(int(h.partition)), strconv.FormatInt(h.p.ProducerID, 10),
			strconv.Itoa(int(h.p.ProducerEpoch)), strconv.Itoa(int(h.p.CoordinatorEpoch)), strconv.FormatInt(h.p.CurrentTxnStartOffset, 10),
			strconv.FormatInt(h.p.LastTimestamp, 10), strconv.FormatInt((nowMs-h.p.LastTimestamp)/60000, 10)})
	}
	printTable(env.Stdout, []string{"Topic", "Partition", "ProducerId", "ProducerEpoch", "CoordinatorEpoch",
		"StartOffset", "LastTimestamp", "Duration(min)"}, rows)
	return nil
}

// filterHanging keeps the candidates no coordinator vouches for.
func filterHanging(client sarama.Client, cfg *sarama.Config, candidates []openTxn) ([]openTxn, error) {
	if len(candidates) == 0 {
		return nil, nil
	}
	pids := map[int64]bool{}
	var filter []int64
	for _, o := range candidates {
		if !pids[o.p.ProducerID] {
			pids[o.p.ProducerID] = true
			filter = append(filter, o.p.ProducerID)
		}
	}
	sort.Slice(filter, func(i, j int) bool { return filter[i] < filter[j] })
	idOf := map[int64]string{}
	for _, b := range client.Brokers() {
		if err := openBroker(b, cfg); err != nil {
			return nil, err
		}
		resp, err := b.ListTransactions(&sarama.ListTransactionsRequest{ProducerIDFilters: filter, DurationFilter: -1})
		if err != nil {
			return nil, err
		}
		for _, s := range resp.TransactionStates {
			idOf[s.ProducerID] = s.TransactionalID
		}
	}
	var out []openTxn
	for _, o := range candidates {
		id, ok := idOf[o.p.ProducerID]
		if !ok {
			out = append(out, o)
			continue
		}
		st, _, err := describeTxn(client, cfg, id)
		if err != nil || st.ProducerID != o.p.ProducerID || !txnHolds(st, o.topic, o.partition) {
			out = append(out, o)
		}
	}
	return out, nil
}

// txnHolds reports whether st's partitions include topic-partition.
func txnHolds(st sarama.TransactionState, topic string, partition int32) bool {
	for _, t := range st.Topics {
		if t.Topic != topic {
			continue
		}
		for _, p := range t.Partitions {
			if p == partition {
				return true
			}
		}
	}
	return false
}
