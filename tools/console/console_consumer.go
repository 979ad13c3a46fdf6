package console

// kafka-console-consumer: print messages of a topic (Kafka 2.8
// ConsoleConsumer with DefaultMessageFormatter).
//
// Behaviour:
//   - without --group, Samsa reads every partition (or --partition) directly
//     instead of joining a random console-consumer-NNNNN group: the output is
//     the same, no group is created;
//   - with --group, it joins the group (Sarama consumer group) and commits
//     the offsets of printed messages;
//   - start: --offset (earliest, latest or a number; needs --partition), else
//     earliest with --from-beginning, else latest;
//   - stops after --max-messages, after --timeout-ms without a message (an
//     ERROR line on stderr, exit code 0, as Kafka), or on SIGINT/SIGTERM;
//     then prints "Processed a total of N messages" on stderr;
//   - print.timestamp always says CreateTime: Sarama does not expose a
//     batch's timestamp type.

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"os"
	"os/signal"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/IBM/sarama"
	"github.com/urfave/cli/v2"

	"samsa/tools/internal/tool"
)

func ConsumerCommand(env tool.Env) *cli.Command {
	return &cli.Command{
		Name:  "kafka-console-consumer",
		Usage: "print messages of a topic to standard output",
		Flags: []cli.Flag{
			&cli.StringFlag{Name: "bootstrap-server", Usage: "broker(s) to connect to, host:port[,host:port] (required)"},
			&cli.StringFlag{Name: "zookeeper", Usage: "old consumer: ZooKeeper connect string host:port[/chroot] (see console_consumer_zk.go)"},
			&cli.BoolFlag{Name: "delete-consumer-offsets", Usage: "old consumer (--zookeeper): delete the group's offsets in ZooKeeper first"},
			&cli.StringFlag{Name: "topic", Usage: "topic to consume (required)"},
			&cli.BoolFlag{Name: "from-beginning", Usage: "start with the earliest message when there is no committed offset"},
			&cli.IntFlag{Name: "max-messages", Usage: "exit after this many messages"},
			&cli.StringFlag{Name: "partition", Usage: "consume only this partition"},
			&cli.StringFlag{Name: "offset", Value: "latest", Usage: "earliest, latest or an offset (needs --partition)"},
			&cli.StringFlag{Name: "group", Usage: "consumer group id"},
			&cli.IntFlag{Name: "timeout-ms", Usage: "exit when no message arrives for this long"},
			&cli.StringFlag{Name: "isolation-level", Value: "read_uncommitted", Usage: "read_uncommitted or read_committed"},
			&cli.StringSliceFlag{Name: "property", Usage: "formatter property: print.key, print.value, print.timestamp, print.partition, print.offset, key.separator, line.separator"},
			&cli.StringSliceFlag{Name: "consumer-property", Usage: "consumer property name=value (repeatable)"},
			&cli.StringFlag{Name: "consumer.config", Usage: "consumer properties file"},
			&cli.BoolFlag{Name: "skip-message-on-error", Usage: "accepted for compatibility"},
		},
		Action: tool.ErrorExitAction(env, runConsoleConsumer),
	}
}

// formatter is Kafka's DefaultMessageFormatter.
type formatter struct {
	printTimestamp, printPartition, printOffset, printKey, printValue bool
	keySeparator, lineSeparator                                       string
}

func newFormatter(props map[string]string) formatter {
	f := formatter{printValue: true, keySeparator: "\t", lineSeparator: "\n"}
	is := func(k string) bool { return strings.EqualFold(strings.TrimSpace(props[k]), "true") }
	f.printTimestamp, f.printPartition, f.printOffset, f.printKey = is("print.timestamp"), is("print.partition"), is("print.offset"), is("print.key")
	if v, ok := props["print.value"]; ok {
		f.printValue = strings.EqualFold(strings.TrimSpace(v), "true")
	}
	if v, ok := props["key.separator"]; ok {
		f.keySeparator = v
	}
	if v, ok := props["line.separator"]; ok {
		f.lineSeparator = v
	}
	return f
}

func (f formatter) format(m *sarama.ConsumerMessage) string {
	var b strings.Builder
	sep := func(more bool) {
		if more {
			b.WriteString(f.keySeparator)
		}
	}
	bytesOrNull := func(p []byte) string {
		if p == nil {
			return "null"
		}
		return string(p)
	}
	if f.printTimestamp {
		fmt.Fprintf(&b, "CreateTime:%d", m.Timestamp.UnixMilli())
		sep(f.printPartition || f.printOffset || f.printKey || f.printValue)
	}
	if f.printPartition {
		fmt.Fprintf(&b, "Partition:%d", m.Partition)
		sep(f.printOffset || f.printKey || f.printValue)
	}
	if f.printOffset {
		fmt.Fprintf(&b, "Offset:%d", m.Offset)
		sep(f.printKey || f.printValue)
	}
	if f.printKey {
		b.WriteString(bytesOrNull(m.Key))
		sep(f.printValue)
	}
	if f.printValue {
		b.WriteString(bytesOrNull(m.Value))
	}
	b.WriteString(f.lineSeparator)
	return b.String()
}

type consumerOpts struct {
	servers, topic, group string
	partition             int32
	hasPartition          bool
	start                 int64
	maxMessages           int
	timeout               time.Duration
}

func runConsoleConsumer(c *cli.Context, env tool.Env) error {
	if c.IsSet("zookeeper") {
		return runConsoleConsumerZK(c, env)
	}
	o := consumerOpts{servers: c.String("bootstrap-server"), topic: c.String("topic"), group: c.String("group"),
		maxMessages: c.Int("max-messages"), timeout: time.Duration(c.Int("timeout-ms")) * time.Millisecond}
	if o.servers == "" {
		return tool.Error("Missing required argument \"[bootstrap-server]\"")
	}
	if o.topic == "" {
		return tool.Error("Exactly one of whitelist/topic is required.")
	}
	if c.IsSet("partition") {
		p, err := strconv.ParseInt(c.String("partition"), 10, 32)
		if err != nil || p < 0 {
			return tool.Errorf("Invalid partition %q", c.String("partition"))
		}
		o.partition, o.hasPartition = int32(p), true
	}
	if c.IsSet("offset") && !o.hasPartition {
		return tool.Error("The partition is required when offset is specified.")
	}
	if c.IsSet("offset") && c.Bool("from-beginning") {
		return tool.Error("Options from-beginning and offset cannot be specified together.")
	}
	o.start = sarama.OffsetNewest
	if c.Bool("from-beginning") {
		o.start = sarama.OffsetOldest
	}
	switch off := strings.ToLower(c.String("offset")); {
	case !c.IsSet("offset"):
	case off == "earliest":
		o.start = sarama.OffsetOldest
	case off == "latest":
		o.start = sarama.OffsetNewest
	default:
		n, err := strconv.ParseInt(off, 10, 64)
		if err != nil || n < 0 {
			return tool.Error("The provided offset value is incorrect. Valid values are 'earliest', 'latest', or a non-negative long.")
		}
		o.start = n
	}
	fmtProps, err := tool.ParsePropertyArgs(c.StringSlice("property"))
	if err != nil {
		return err
	}
	consumerProps, err := tool.ParsePropertyArgs(c.StringSlice("consumer-property"))
	if err != nil {
		return err
	}
	base := map[string]string{"isolation.level": c.String("isolation-level")}
	cfg, err := tool.NewSaramaConfig("console-consumer", c.String("consumer.config"), mergeProps(base, consumerProps))
	if err != nil {
		return err
	}
	cfg.Consumer.Return.Errors = true
	cfg.Consumer.Offsets.Initial = o.start
	if o.start >= 0 {
		cfg.Consumer.Offsets.Initial = sarama.OffsetOldest
	}

	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	msgs := make(chan *sarama.ConsumerMessage, 256)
	errs := make(chan error, 1)
	var wg sync.WaitGroup
	var mark func(*sarama.ConsumerMessage)
	if o.group != "" && !o.hasPartition {
		mark, err = consumeGroup(ctx, &wg, cfg, o, msgs, errs)
	} else {
		err = consumePartitions(ctx, &wg, cfg, o, msgs, errs)
	}
	if err != nil {
		return err
	}
	count, loopErr := printMessages(ctx, env, newFormatter(fmtProps), o, msgs, errs, mark)
	cancel()
	wg.Wait()
	fmt.Fprintf(env.Stderr, "Processed a total of %d messages\n", count)
	return loopErr
}

// printMessages prints until max-messages, the idle timeout, a consumer
// error or ctx's end, and returns how many messages it printed.
func printMessages(ctx context.Context, env tool.Env, f formatter, o consumerOpts, msgs <-chan *sarama.ConsumerMessage,
	errs <-chan error, mark func(*sarama.ConsumerMessage)) (int, error) {
	w := bufio.NewWriter(env.Stdout)
	defer w.Flush()
	var idle <-chan time.Time
	var timer *time.Timer
	if o.timeout > 0 {
		timer = time.NewTimer(o.timeout)
		defer timer.Stop()
		idle = timer.C
	}
	count := 0
	for o.maxMessages <= 0 || count < o.maxMessages {
		select {
		case m := <-msgs:
			w.WriteString(f.format(m))
			w.Flush()
			count++
			if mark != nil {
				mark(m)
			}
			if timer != nil {
				timer.Reset(o.timeout)
			}
		case <-idle:
			fmt.Fprintln(env.Stderr, "ERROR Error processing message, terminating consumer process: org.apache.kafka.common.errors.TimeoutException")
			return count, nil
		case err := <-errs:
			return count, err
		case <-ctx.Done():
			return count, nil
		}
	}
	return count, nil
}

// consumePartitions reads the chosen partitions directly (no group).
func consumePartitions(ctx context.Context, wg *sync.WaitGroup, cfg *sarama.Config, o consumerOpts,
	msgs chan<- *sarama.ConsumerMessage, errs chan<- error) error {
	client, err := sarama.NewClient(tool.SplitList(o.servers), cfg)
	if err != nil {
		return err
	}
	consumer, err := sarama.NewConsumerFromClient(client)
	if err != nil {
		client.Close()
		return err
	}
	partitions := []int32{o.partition}
	if !o.hasPartition {
		if partitions, err = client.Partitions(o.topic); err != nil {
			consumer.Close()
			client.Close()
			return err
		}
	}
	var pcs []sarama.PartitionConsumer
	for _, p := range partitions {
		pc, err := consumer.ConsumePartition(o.topic, p, o.start)
		if err != nil {
			for _, pc := range pcs {
				pc.AsyncClose()
			}
			consumer.Close()
			client.Close()
			return err
		}
		pcs = append(pcs, pc)
	}
	for _, pc := range pcs {
		pc := pc
		wg.Add(1)
		go func() {
			defer wg.Done()
			tool.ForwardPartition(ctx, pc, msgs, errs)
		}()
	}
	wg.Add(1)
	go func() {
		defer wg.Done()
		<-ctx.Done()
		for _, pc := range pcs {
			pc.AsyncClose()
		}
		consumer.Close()
		client.Close()
	}()
	return nil
}

// groupHandler forwards claimed messages and marks printed ones.
type groupHandler struct {
	ctx  context.Context
	msgs chan<- *sarama.ConsumerMessage
	mu   sync.Mutex
	sess sarama.ConsumerGroupSession // guarded by mu
}

func (h *groupHandler) Setup(s sarama.ConsumerGroupSession) error {
	h.mu.Lock()
	h.sess = s
	h.mu.Unlock()
	return nil
}

func (h *groupHandler) Cleanup(sarama.ConsumerGroupSession) error { return nil }

func (h *groupHandler) ConsumeClaim(s sarama.ConsumerGroupSession, claim sarama.ConsumerGroupClaim) error {
	for m := range claim.Messages() {
		select {
		case h.msgs <- m:
		case <-s.Context().Done():
			return nil
		case <-h.ctx.Done():
			return nil
		}
	}
	return nil
}

func (h *groupHandler) mark(m *sarama.ConsumerMessage) {
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.sess != nil {
		h.sess.MarkMessage(m, "")
	}
}

// consumeGroup joins o.group and forwards its claims until ctx ends.
func consumeGroup(ctx context.Context, wg *sync.WaitGroup, cfg *sarama.Config, o consumerOpts,
	msgs chan<- *sarama.ConsumerMessage, errs chan<- error) (func(*sarama.ConsumerMessage), error) {
	group, err := sarama.NewConsumerGroup(tool.SplitList(o.servers), o.group, cfg)
	if err != nil {
		return nil, err
	}
	h := &groupHandler{ctx: ctx, msgs: msgs}
	wg.Add(1)
	go func() {
		defer wg.Done()
		defer group.Close()
		for ctx.Err() == nil {
			if err := group.Consume(ctx, []string{o.topic}, h); err != nil && !errors.Is(err, sarama.ErrClosedConsumerGroup) {
				select {
				case errs <- err:
				default:
				}
				return
			}
		}
	}()
	wg.Add(1)
	go func() {
		defer wg.Done()
		for {
			select {
			case e, ok := <-group.Errors():
				if !ok {
					return
				}
				select {
				case errs <- e:
				default:
				}
			case <-ctx.Done():
				return
			}
		}
	}()
	return h.mark, nil
}
