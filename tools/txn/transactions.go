package txn

// kafka-transactions: Kafka 3.0's TransactionsCommand (KIP-664) against a
// Samsa (Kafka 2.8 + DescribeTransactions/ListTransactions) cluster:
//
//	kafka-transactions.sh --bootstrap-server HOST:PORT [--command-config F] list
//	kafka-transactions.sh --bootstrap-server ... describe --transactional-id ID
//	kafka-transactions.sh --bootstrap-server ... describe-producers --topic T --partition P [--broker-id B]
//	kafka-transactions.sh --bootstrap-server ... abort --topic T --partition P (--start-offset O | --producer-id I --producer-epoch E --coordinator-epoch C)
//	kafka-transactions.sh --bootstrap-server ... find-hanging (--broker-id B | --topic T [--partition P]) [--max-transaction-timeout MIN]
//
// Output is Kafka's table: a header row then one row per item, every cell
// left-aligned and padded to its column's widest value, each followed by a
// TAB.
//
// Behaviour:
//   - list asks every broker (ListTransactions) and prints TransactionalId,
//     Coordinator (the broker that listed it), ProducerId,
//     TransactionState, in broker then id order.
//   - describe asks the id's coordinator (FindCoordinator key type 1).
//   - describe-producers and find-hanging need DescribeProducers (API 61)
//     from the partition leader (or --broker-id); a broker without it
//     makes the command fail with Kafka's UnsupportedVersionException text.
//   - abort writes an ABORT marker with WriteTxnMarkers through a franz-go client
//     (transactions_abort.go); the --start-offset form needs
//     DescribeProducers, and both need a leader that offers WriteTxnMarkers.

import (
	"errors"
	"fmt"
	"io"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/IBM/sarama"
	"github.com/urfave/cli/v2"

	"samsa/tools/internal/tool"
)

func Command(env tool.Env) *cli.Command {
	global := []cli.Flag{
		&cli.StringFlag{Name: "bootstrap-server", Usage: "REQUIRED: hostname and port for the broker to connect to, in the form `host:port`  (multiple comma-separated entries can be given)"},
		&cli.StringFlag{Name: "command-config", Usage: "property file containing configs to be passed to admin client"},
	}
	return &cli.Command{
		Name:  "kafka-transactions",
		Usage: "This tool is used to analyze the transactional state of producers in the cluster. It can be used to detect and recover from hanging transactions.",
		Flags: global,
		Subcommands: []*cli.Command{
			{Name: "list", Usage: "list transactions", Action: tool.ErrorExitAction(env, runTxnList)},
			{Name: "describe", Usage: "describe the state of an active transactional-id",
				Flags:  []cli.Flag{&cli.StringFlag{Name: "transactional-id", Usage: "transactional id"}},
				Action: tool.ErrorExitAction(env, runTxnDescribe)},
			{Name: "describe-producers", Usage: "describe the states of active producers for a topic partition",
				Flags: []cli.Flag{
					&cli.StringFlag{Name: "topic", Usage: "topic name"},
					&cli.StringFlag{Name: "partition", Usage: "partition number"},
					&cli.StringFlag{Name: "broker-id", Usage: "the id of the broker to query (default: the partition leader)"},
				},
				Action: tool.ErrorExitAction(env, runTxnDescribeProducers)},
			{Name: "find-hanging", Usage: "find hanging transactions",
				Flags: []cli.Flag{
					&cli.StringFlag{Name: "broker-id", Usage: "broker id to search for hanging transactions"},
					&cli.StringFlag{Name: "topic", Usage: "topic name to search for hanging transactions"},
					&cli.StringFlag{Name: "partition", Usage: "partition number (requires --topic)"},
					&cli.StringFlag{Name: "max-transaction-timeout", Value: "15", Usage: "maximum transaction timeout in minutes to limit the scope of the search"},
				},
				Action: tool.ErrorExitAction(env, runTxnFindHanging)},
			txnAbortCommand(env),
		},
	}
}

// txnClient connects a Sarama client from the parent command's flags.
func txnClient(c *cli.Context) (sarama.Client, *sarama.Config, error) {
	servers := c.String("bootstrap-server")
	if servers == "" {
		return nil, nil, tool.Error("Missing required argument \"[bootstrap-server]\"")
	}
	cfg, err := tool.NewSaramaConfig("kafka-transactions", c.String("command-config"), nil)
	if err != nil {
		return nil, nil, err
	}
	// Sarama sends DescribeTransactions/ListTransactions only to 3.0+; it
	// clamps every request to the versions the broker advertises anyway.
	cfg.Version = sarama.V3_0_0_0
	cfg.Metadata.AllowAutoTopicCreation = false
	client, err := sarama.NewClient(tool.SplitList(servers), cfg)
	if err != nil {
		return nil, nil, err
	}
	return client, cfg, nil
}

// openBroker connects b if needed.
func openBroker(b *sarama.Broker, cfg *sarama.Config) error {
	if ok, _ := b.Connected(); ok {
		return nil
	}
	if err := b.Open(cfg); err != nil && !errors.Is(err, sarama.ErrAlreadyConnected) {
		return err
	}
	return nil
}

// txnFailure is TransactionsCommand.printErrorAndExit(message, cause):
// the message, the cause's message and Kafka's hint.
func txnFailure(msg string, err error) error {
	cause := err.Error()
	var ke sarama.KError
	if errors.As(err, &ke) {
		if e, ok := tool.Kafka28Errors[int16(ke)]; ok {
			cause = e.Message
		}
	}
	return tool.Errorf("%s: %s. Enable debug logging for additional detail.", msg, cause)
}

// printTable is TransactionsCommand.prettyPrintTable.
func printTable(w io.Writer, headers []string, rows [][]string) {
	widths := make([]int, len(headers))
	for i, h := range headers {
		widths[i] = len(h)
	}
	for _, r := range rows {
		for i, v := range r {
			widths[i] = max(widths[i], len(v))
		}
	}
	line := func(r []string) {
		var sb strings.Builder
		for i, v := range r {
			sb.WriteString(v)
			sb.WriteString(strings.Repeat(" ", widths[i]-len(v)))
			sb.WriteByte('\t')
		}
		fmt.Fprintln(w, sb.String())
	}
	line(headers)
	for _, r := range rows {
		line(r)
	}
}

func runTxnList(c *cli.Context, env tool.Env) error {
	client, cfg, err := txnClient(c)
	if err != nil {
		return err
	}
	defer client.Close()
	brokers := client.Brokers()
	sort.Slice(brokers, func(i, j int) bool { return brokers[i].ID() < brokers[j].ID() })
	var rows [][]string
	for _, b := range brokers {
		if err := openBroker(b, cfg); err != nil {
			return err
		}
		resp, err := b.ListTransactions(&sarama.ListTransactionsRequest{DurationFilter: -1})
		if err != nil {
			return err
		}
		if resp.ErrorCode != sarama.ErrNoError {
			return txnFailure("Failed to list transactions", resp.ErrorCode)
		}
		states := append([]sarama.ListTransactionsResponseTransactionState(nil), resp.TransactionStates...)
		sort.Slice(states, func(i, j int) bool { return states[i].TransactionalID < states[j].TransactionalID })
		for _, s := range states {
			rows = append(rows, []string{s.TransactionalID, strconv.Itoa(int(b.ID())), strconv.FormatInt(s.ProducerID, 10), s.TransactionState})
		}
	}
	printTable(env.Stdout, []string{"TransactionalId", "Coordinator", "ProducerId", "TransactionState"}, rows)
	return nil
}

// describeTxn returns id's state from its coordinator and the coordinator's id.
func describeTxn(client sarama.Client, cfg *sarama.Config, id string) (sarama.TransactionState, int32, error) {
	var last error
	for attempt := 0; attempt < 20; attempt++ {
		if attempt > 0 {
			_ = client.RefreshTransactionCoordinator(id)
			time.Sleep(200 * time.Millisecond) // retry backoff
		}
		b, err := client.TransactionCoordinator(id)
		if err != nil {
			last = err
			continue
		}
		if err := openBroker(b, cfg); err != nil {
			last = err
			continue
		}
		resp, err := b.DescribeTransactions(&sarama.DescribeTransactionsRequest{TransactionalIDs: []string{id}})
		if err != nil {
			last = err
			continue
		}
		if len(resp.TransactionStates) != 1 {
			return sarama.TransactionState{}, 0, tool.Errorf("the coordinator answered %d states", len(resp.TransactionStates))
		}
		st := resp.TransactionStates[0]
		switch st.ErrorCode {
		case sarama.ErrNoError:
			return st, b.ID(), nil
		case sarama.ErrNotCoordinatorForConsumer, sarama.ErrOffsetsLoadInProgress, sarama.ErrConsumerCoordinatorNotAvailable:
			last = st.ErrorCode
			continue
		}
		return st, b.ID(), st.ErrorCode
	}
	return sarama.TransactionState{}, 0, last
}

func runTxnDescribe(c *cli.Context, env tool.Env) error {
	id := c.String("transactional-id")
	if id == "" {
		return tool.Error("Missing required argument \"[transactional-id]\"")
	}
	client, cfg, err := txnClient(c.Lineage()[1])
	if err != nil {
		return err
	}
	defer client.Close()
	st, coord, err := describeTxn(client, cfg, id)
	if err != nil {
		return txnFailure(fmt.Sprintf("Failed to describe transaction state of transactional-id `%s`", id), err)
	}
	start, duration := "None", "None"
	if st.TransactionStartTime >= 0 {
		start = strconv.FormatInt(st.TransactionStartTime, 10)
		duration = strconv.FormatInt(time.Now().UnixMilli()-st.TransactionStartTime, 10)
	}
	var tps []string
	for _, t := range st.Topics {
		for _, p := range t.Partitions {
			tps = append(tps, fmt.Sprintf("%s-%d", t.Topic, p))
		}
	}
	printTable(env.Stdout, []string{"CoordinatorId", "TransactionalId", "ProducerId", "ProducerEpoch", "TransactionState",
		"TransactionTimeoutMs", "CurrentTransactionStartTimeMs", "TransactionDurationMs", "TopicPartitions"},
		[][]string{{strconv.Itoa(int(coord)), id, strconv.FormatInt(st.ProducerID, 10), strconv.Itoa(int(st.ProducerEpoch)),
			st.TransactionState, strconv.FormatInt(st.TransactionTimeout.Milliseconds(), 10), start, duration, strings.Join(tps, ",")}})
	return nil
}

// partitionFlag parses a required --partition.
func partitionFlag(c *cli.Context) (int32, error) {
	s := c.String("partition")
	if s == "" {
		return 0, tool.Error("Missing required argument \"[partition]\"")
	}
	n, err := strconv.ParseInt(s, 10, 32)
	if err != nil {
		return 0, tool.Errorf("argument --partition: could not convert '%s' to Integer", s)
	}
	return int32(n), nil
}

// describeProducers asks broker (or the leader when broker < 0) for the
// producers of topic-partition.
func describeProducers(client sarama.Client, cfg *sarama.Config, topic string, partition, broker int32) (sarama.DescribeProducersResponsePartition, error) {
	var b *sarama.Broker
	var err error
	if broker >= 0 {
		b, err = client.Broker(broker)
	} else {
		b, err = client.Leader(topic, partition)
	}
	if err != nil {
		return sarama.DescribeProducersResponsePartition{}, err
	}
	if err := openBroker(b, cfg); err != nil {
		return sarama.DescribeProducersResponsePartition{}, err
	}
	resp, err := b.DescribeProducers(&sarama.DescribeProducersRequest{Topics: []sarama.DescribeProducersRequestTopic{{Name: topic, PartitionIndexes: []int32{partition}}}})
	if err != nil {
		return sarama.DescribeProducersResponsePartition{}, err
	}
	for _, t := range resp.Topics {
		for _, p := range t.Partitions {
			if t.Name == topic && p.PartitionIndex == partition {
				if p.ErrorCode != sarama.ErrNoError {
					return p, p.ErrorCode
				}
				return p, nil
			}
		}
	}
	return sarama.DescribeProducersResponsePartition{}, tool.Errorf("no answer for %s-%d", topic, partition)
}

func optional(v int64) string {
	if v < 0 {
		return "None"
	}
	return strconv.FormatInt(v, 10)
}

func runTxnDescribeProducers(c *cli.Context, env tool.Env) error {
	topic := c.String("topic")
	if topic == "" {
		return tool.Error("Missing required argument \"[topic]\"")
	}
	partition, err := partitionFlag(c)
	if err != nil {
		return err
	}
	broker := int32(-1)
	if s := c.String("broker-id"); s != "" {
		n, err := strconv.ParseInt(s, 10, 32)
		if err != nil {
			return tool.Errorf("argument --broker-id: could not convert '%s' to Integer", s)
		}
		broker = int32(n)
	}
	client, cfg, err := txnClient(c.Lineage()[1])
	if err != nil {
		return err
	}
	defer client.Close()
	p, err := describeProducers(client, cfg, topic, partition, broker)
	if err != nil {
		on := "leader"
		if broker >= 0 {
			on = fmt.Sprintf("broker %d", broker)
		}
		return txnFailure(fmt.Sprintf("Failed to describe producers for partition %s-%d on %s", topic, partition, on), err)
	}
	var rows [][]string
	for _, s := range p.ActiveProducers {
		rows = append(rows, []string{strconv.FormatInt(s.ProducerID, 10), strconv.Itoa(int(s.ProducerEpoch)),
			strconv.Itoa(int(s.CoordinatorEpoch)), strconv.Itoa(int(s.LastSequence)), strconv.FormatInt(s.LastTimestamp, 10),
			optional(s.CurrentTxnStartOffset)})
	}
	printTable(env.Stdout, []string{"ProducerId", "ProducerEpoch", "LatestCoordinatorEpoch", "LastSequence",
		"LastTimestamp", "CurrentTransactionStartOffset"}, rows)
	return nil
}
