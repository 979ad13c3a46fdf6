package replicaverify

// kafka-replica-verification: Kafka 2.8's kafka.tools.ReplicaVerificationTool.
//
// Behaviour, as Kafka 2.8:
//   - metadata of every topic (internal ones included) whose name fully
//     matches --topic-white-list (a Java regex, ',' meaning '|'); "No topics
//     found" and exit 1 when none does;
//   - initial offsets from the leaders: --time -1 (latest, the default), -2
//     (earliest) or a timestamp;
//   - rounds: every broker holding a replica is fetched (Fetch with replica
//     id -2, the debugging consumer: --fetch-size per partition,
//     --max-wait-ms, min bytes 1) and, when all answered, the batches are
//     compared replica by replica up to each replica's high watermark: equal
//     last offsets advance the verified offset; an unequal offset prints
//     "<time>: partition <tp>: replica <a>'s offset <o> doesn't match replica
//     <b>'s offset <p>" and exits 1; an unequal CRC prints "<time>: partition
//     <tp> has unmatched checksum at offset <o>; replica <a>'s checksum <c>;
//     replica <b>'s checksum <d>";
//   - after a round, once --report-interval-ms has passed since the last
//     report: "<time>: max lag is <n> for partition <tp> at offset <o> among
//     <k> partitions" (lag = highest high watermark - verified offset);
//   - "<time>: verification process is started." when the fetchers start;
//     times are "yyyy-MM-dd HH:mm:ss,SSS" in local time;
//   - it runs until SIGINT/SIGTERM (the context in tests).
//
// Differences: a replica whose fetch fails with an error code is reported
// once per (broker, partition, error) on stderr (Kafka says nothing); a
// --time with no matching offset starts at the log end; a malformed batch
// ends the tool with exit 1 (Kafka's verifying thread dies and the tool
// hangs).

import (
	"context"
	"fmt"
	"os"
	"os/signal"
	"regexp"
	"sort"
	"strings"
	"syscall"
	"time"

	"github.com/IBM/sarama"
	"github.com/urfave/cli/v2"

	"samsa/kafka"
	"samsa/tools/internal/tool"
)

const replicaVerificationClientID = "replicaVerificationTool"

func Command(env tool.Env) *cli.Command {
	return &cli.Command{
		Name:  "kafka-replica-verification",
		Usage: "Validate that all replicas for a set of topics have the same data. (kafka.tools.ReplicaVerificationTool)",
		Flags: []cli.Flag{
			&cli.StringFlag{Name: "broker-list", Usage: "REQUIRED: The list of hostname and port of the server to connect to."},
			&cli.IntFlag{Name: "fetch-size", Value: 1048576, Usage: "The fetch size of each request."},
			&cli.IntFlag{Name: "max-wait-ms", Value: 1000, Usage: "The max amount of time each fetch request waits."},
			&cli.StringFlag{Name: "topic-white-list", Value: ".*", Usage: "White list of topics to verify replica consistency. Defaults to all topics."},
			&cli.Int64Flag{Name: "time", Value: -1, Usage: "Timestamp for getting the initial offsets (timestamp/-1(latest)/-2(earliest))."},
			&cli.Int64Flag{Name: "report-interval-ms", Value: 30000, Usage: "The reporting interval."},
		},
		Action: tool.ErrorExitAction(env, runReplicaVerification),
	}
}

// kafkaIncludeRegex compiles Kafka's IncludeList/Whitelist regex: commas
// mean '|', spaces and surrounding quotes are dropped, and a topic must
// match it as a whole (String.matches).
func kafkaIncludeRegex(raw string) (*regexp.Regexp, error) {
	r := strings.ReplaceAll(strings.ReplaceAll(strings.TrimSpace(raw), ",", "|"), " ", "")
	r = strings.TrimLeft(r, `"'`)
	r = strings.TrimRight(r, `"'`)
	re, err := regexp.Compile("^(?:" + r + ")$")
	if err != nil {
		return nil, tool.JavaException{Class: "java.lang.RuntimeException", Msg: raw + " is an invalid regex."}
	}
	return re, nil
}

// rvPlan is what the metadata says: the partitions to verify, which broker
// holds which, and where each broker listens.
type rvPlan struct {
	partitions []kafka.TopicPartition
	byBroker   map[int32][]kafka.TopicPartition
	addrs      map[int32]string
}

func runReplicaVerification(c *cli.Context, env tool.Env) error {
	if c.NumFlags() == 0 {
		return tool.Error("Validate that all replicas for a set of topics have the same data.")
	}
	brokerList := c.String("broker-list")
	if brokerList == "" {
		return tool.Error(`Missing required argument "[broker-list]"`)
	}
	include, err := kafkaIncludeRegex(c.String("topic-white-list"))
	if err != nil {
		return err
	}
	if err := tool.CheckHostPorts(brokerList); err != nil {
		return err
	}
	client, _, err := tool.NewQueryClient(brokerList, replicaVerificationClientID, "")
	if err != nil {
		return err
	}
	defer client.Close()
	plan, err := replicaVerificationPlan(client, include)
	if err != nil {
		return err
	}
	initial, err := replicaInitialOffsets(client, plan.partitions, c.Int64("time"))
	if err != nil {
		return err
	}
	ctx := env.Context
	if ctx == nil {
		ctx = context.Background()
	}
	ctx, stop := signal.NotifyContext(ctx, os.Interrupt, syscall.SIGTERM)
	defer stop()
	buf := newRVBuffer(env.Stdout, time.Now, time.Duration(c.Int64("report-interval-ms"))*time.Millisecond, initial)
	fetchers := map[int32]*rvFetcher{}
	for id, parts := range plan.byBroker {
		fetchers[id] = &rvFetcher{id: id, addr: plan.addrs[id], partitions: parts,
			fetchSize: int32(c.Int("fetch-size")), maxWaitMs: int32(c.Int("max-wait-ms")), warned: map[string]bool{}, stderr: env.Stderr}
	}
	defer func() {
		for _, f := range fetchers {
			f.close()
		}
	}()
	fmt.Fprintf(env.Stdout, "%s: verification process is started.\n", time.Now().Format(rvDateLayout))
	for ctx.Err() == nil {
		data := fetchRound(ctx, fetchers, buf.fetchOffsets)
		if ctx.Err() != nil {
			break
		}
		if err := buf.verify(data); err != nil {
			if _, ok := err.(rvMismatch); ok {
				return tool.ExitError{Code: 1}
			}
			return err
		}
	}
	return nil
}

// replicaVerificationPlan reads the metadata of the matching topics.
func replicaVerificationPlan(client sarama.Client, include *regexp.Regexp) (*rvPlan, error) {
	topics, err := client.Topics()
	if err != nil {
		return nil, err
	}
	plan := &rvPlan{byBroker: map[int32][]kafka.TopicPartition{}, addrs: map[int32]string{}}
	for _, b := range client.Brokers() {
		plan.addrs[b.ID()] = b.Addr()
	}
	sort.Strings(topics)
	for _, topic := range topics {
		if !include.MatchString(topic) {
			continue
		}
		parts, err := client.Partitions(topic)
		if err != nil {
			return nil, err
		}
		for _, p := range parts {
			replicas, err := client.Replicas(topic, p)
			if err != nil {
				return nil, err
			}
			tp := kafka.TopicPartition{Topic: topic, Partition: p}
			plan.partitions = append(plan.partitions, tp)
			for _, r := range replicas {
				plan.byBroker[r] = append(plan.byBroker[r], tp)
			}
		}
	}
	if len(plan.partitions) == 0 {
		return nil, tool.Error("ERROR No topics found. [topic-white-list] if specified, is either filtering out all topics or there is no topic.")
	}
	for id := range plan.byBroker {
		if plan.addrs[id] == "" {
			return nil, tool.Errorf("ERROR Broker %d holds replicas but is not alive; the tool needs all brokers to be up at startup time.", id)
		}
	}
	return plan, nil
}

// replicaInitialOffsets asks the leaders for the offsets at t (-1 latest,
// -2 earliest, else a timestamp, falling back to the log end).
func replicaInitialOffsets(client sarama.Client, parts []kafka.TopicPartition, t int64) (map[kafka.TopicPartition]int64, error) {
	out := make(map[kafka.TopicPartition]int64, len(parts))
	for _, tp := range parts {
		off, err := client.GetOffset(tp.Topic, tp.Partition, t)
		if err == nil && off < 0 && t >= 0 {
			off, err = client.GetOffset(tp.Topic, tp.Partition, sarama.OffsetNewest)
		}
		if err != nil {
			return nil, fmt.Errorf("tools: initial offset of %s: %w", tp.String(), err)
		}
		out[tp] = off
	}
	return out, nil
}
