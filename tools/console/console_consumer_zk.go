package console

// kafka-console-consumer --zookeeper: Kafka's old (≤ 1.x) console consumer
// on the ZooKeeper-coordinated high-level consumer (tools/zkconsumer):
// offsets.storage=zookeeper, --from-beginning is auto.offset.reset=smallest,
// the default group is console-consumer-<random 0..99999> and, as Kafka
// does, a generated group's /consumers/<group> tree is deleted at exit;
// --from-beginning with a group that has offsets needs
// --delete-consumer-offsets.

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"os"
	"os/signal"
	"syscall"
	"time"

	"github.com/IBM/sarama"
	"github.com/urfave/cli/v2"

	"samsa/tools/internal/tool"
	"samsa/tools/zkconsumer"
	"samsa/zkutil"
)

func runConsoleConsumerZK(c *cli.Context, env tool.Env) error {
	topic := c.String("topic")
	if topic == "" {
		return tool.Error("Exactly one of whitelist/topic is required.")
	}
	if c.IsSet("bootstrap-server") {
		return tool.Error("Option [zookeeper] cannot be used with option [bootstrap-server]")
	}
	if c.IsSet("partition") || c.IsSet("offset") {
		return tool.Error("Options partition and offset need --bootstrap-server (the new consumer).")
	}
	fmtProps, err := tool.ParsePropertyArgs(c.StringSlice("property"))
	if err != nil {
		return err
	}
	consumerProps, err := tool.ParsePropertyArgs(c.StringSlice("consumer-property"))
	if err != nil {
		return err
	}
	group, generated := c.String("group"), false
	if group == "" {
		group, generated = fmt.Sprintf("console-consumer-%d", rand.IntN(100000)), true
	}
	if err := checkZKGroupOffsets(env, c, group); err != nil {
		return err
	}
	props := map[string]string{
		"group.id":          group,
		"zookeeper.connect": c.String("zookeeper"),
		"offsets.storage":   zkconsumer.StorageZooKeeper,
		"auto.offset.reset": zkconsumer.ResetLargest,
	}
	if c.Bool("from-beginning") {
		props["auto.offset.reset"] = zkconsumer.ResetSmallest
	}
	cfg, _, err := zkconsumer.ParseProperties(mergeProps(props, consumerProps))
	if err != nil {
		return err
	}
	cfg.Logger = tool.Logger(env, "kafka-console-consumer")
	cfg.Sarama = sarama.NewConfig()
	cfg.Sarama.Version = tool.ClientVersion
	cfg.Sarama.ClientID = group
	if ms := c.Int("timeout-ms"); ms > 0 {
		cfg.ConsumerTimeout = time.Duration(ms) * time.Millisecond
	}

	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	setup, cancel := context.WithTimeout(ctx, tool.ZKTimeout)
	defer cancel()
	conn, err := zkconsumer.NewConnector(setup, cfg)
	if err != nil {
		return err
	}
	streams, err := conn.CreateMessageStreams(setup, map[string]int{topic: 1})
	if err != nil {
		conn.Close()
		return err
	}
	count, loopErr := printZKStream(ctx, env, newFormatter(fmtProps), streams[topic][0], c.Int("max-messages"))
	if err := conn.Close(); err != nil && loopErr == nil {
		loopErr = err
	}
	if generated {
		deleteConsumerGroupZK(env, c.String("zookeeper"), group)
	}
	fmt.Fprintf(env.Stderr, "Processed a total of %d messages\n", count)
	return loopErr
}

// printZKStream prints messages of s until maxMessages (if > 0), the
// consumer timeout or ctx's end; the last printed message is marked done
// so that the commit at Close includes it.
func printZKStream(ctx context.Context, env tool.Env, f formatter, s *zkconsumer.Stream, maxMessages int) (int, error) {
	count := 0
	for maxMessages <= 0 || count < maxMessages {
		m, err := s.Next(ctx)
		switch {
		case errors.Is(err, zkconsumer.ErrConsumerTimeout):
			fmt.Fprintln(env.Stderr, "ERROR Error processing message, terminating consumer process: kafka.consumer.ConsumerTimeoutException")
			return count, nil
		case errors.Is(err, context.Canceled), errors.Is(err, zkconsumer.ErrClosed):
			return count, nil
		case err != nil:
			return count, err
		}
		fmt.Fprint(env.Stdout, f.format(&sarama.ConsumerMessage{Topic: m.Topic, Partition: m.Partition, Offset: m.Offset,
			Key: m.Key, Value: m.Value, Timestamp: m.Timestamp}))
		count++
	}
	s.MarkDone()
	return count, nil
}

// checkZKGroupOffsets is the old console consumer's start-up check:
// --delete-consumer-offsets deletes /consumers/<group>; otherwise
// --from-beginning is refused when the group already has offsets (they
// would win over auto.offset.reset).
func checkZKGroupOffsets(env tool.Env, c *cli.Context, group string) error {
	if c.Bool("delete-consumer-offsets") {
		deleteConsumerGroupZK(env, c.String("zookeeper"), group)
		return nil
	}
	if !c.Bool("from-beginning") {
		return nil
	}
	ctx, cancel := context.WithTimeout(context.Background(), tool.ZKTimeout)
	defer cancel()
	zk, err := zkutil.Connect(ctx, zkutil.Config{Connect: c.String("zookeeper"), SessionTimeout: tool.ZKTimeout,
		ConnectionTimeout: tool.ZKTimeout, Logger: tool.Logger(env, "kafka-console-consumer")})
	if err != nil {
		return err
	}
	defer zk.Close()
	ok, _, err := zk.Exists(tool.GroupOffsetsDir(group))
	if err != nil {
		return err
	}
	if ok {
		return tool.Errorf("Found previous offset information for this group %s. Please use --delete-consumer-offsets to delete previous offsets metadata", group)
	}
	return nil
}

// deleteConsumerGroupZK removes a generated group's /consumers/<group>, as
// Kafka's old console consumer does; failures are only reported.
func deleteConsumerGroupZK(env tool.Env, connect, group string) {
	ctx, cancel := context.WithTimeout(context.Background(), tool.ZKTimeout)
	defer cancel()
	zk, err := zkutil.Connect(ctx, zkutil.Config{Connect: connect, SessionTimeout: tool.ZKTimeout,
		ConnectionTimeout: tool.ZKTimeout, Logger: tool.Logger(env, "kafka-console-consumer")})
	if err != nil {
		fmt.Fprintf(env.Stderr, "WARN could not delete /consumers/%s: %v\n", group, err)
		return
	}
	defer zk.Close()
	if err := zk.DeleteRecursive(zkutil.ConsumerGroupPath(group)); err != nil && !errors.Is(err, zkutil.ErrNoNode) {
		fmt.Fprintf(env.Stderr, "WARN could not delete /consumers/%s: %v\n", group, err)
	}
}
