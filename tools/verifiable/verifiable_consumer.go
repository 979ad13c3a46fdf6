package verifiable

// kafka-verifiable-consumer: Kafka 2.8's org.apache.kafka.tools.VerifiableConsumer
// over a Sarama consumer group.
//
// Behaviour, as Kafka 2.8:
//   - one "poll" is what the group's claims have ready (at most
//     max.poll.records = 500 records): it prints records_consumed (count =
//     records in the poll; per partition count, minOffset, maxOffset, the
//     last poll trimmed to --max-messages) and, with --verbose, record_data
//     for each record;
//   - without --enable-autocommit every poll is committed synchronously
//     (OffsetCommit with the group's generation and member id, offset =
//     maxOffset+1 per partition) and printed as offsets_committed
//     (success, or success false with Kafka's exception message in error);
//   - partitions_assigned after each join; partitions_revoked before each
//     rejoin (not before the first, as Kafka's eager protocol) and at close
//     when partitions are owned;
//   - startup_complete first, shutdown_complete last; --max-messages -1
//     consumes until SIGINT/SIGTERM;
//   - consumer properties: group.id, group.instance.id, bootstrap.servers,
//     enable.auto.commit, auto.offset.reset (--reset-policy earliest,
//     latest or none), session.timeout.ms, the assignor, over
//     --consumer.config.
//
// Differences: assignors are Sarama's range, roundrobin and sticky (same
// protocol names as Kafka's); CooperativeStickyAssignor is refused.

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/signal"
	"sort"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/IBM/sarama"
	"github.com/sirupsen/logrus"
	"github.com/urfave/cli/v2"

	"samsa/kafka"
	"samsa/tools/internal/tool"
)

const verifiableConsumerUsage = "usage: verifiable-consumer [-h] (--bootstrap-server HOST1:PORT1[,HOST2:PORT2[...]] | --broker-list HOST1:PORT1[,HOST2:PORT2[...]]) --topic TOPIC --group-id GROUP_ID [--group-instance-id GROUP_INSTANCE_ID] [--max-messages MAX-MESSAGES] [--session-timeout TIMEOUT_MS] [--verbose] [--enable-autocommit] [--reset-policy RESETPOLICY] [--assignment-strategy ASSIGNMENTSTRATEGY] [--consumer.config CONFIG_FILE]"

var verifiableConsumerArgs = []argSpec{
	{name: "--bootstrap-server"},
	{name: "--broker-list"},
	{name: "--topic"},
	{name: "--group-id"},
	{name: "--group-instance-id"},
	{name: "--max-messages", kind: argInt},
	{name: "--session-timeout", kind: argInt},
	{name: "--verbose", kind: argFlag},
	{name: "--enable-autocommit", kind: argFlag},
	{name: "--reset-policy"},
	{name: "--assignment-strategy"},
	{name: "--consumer.config"},
}

// maxPollRecords is Kafka's max.poll.records default.
const maxPollRecords = 500

// consumerRejoinBackoff is the pause after a failed join before the next.
const consumerRejoinBackoff = time.Second

func ConsumerCommand(env tool.Env) *cli.Command {
	return &cli.Command{
		Name:            "kafka-verifiable-consumer",
		Usage:           "consume a topic in a group and print JSON consumer events (org.apache.kafka.tools.VerifiableConsumer)",
		UsageText:       verifiableConsumerUsage,
		SkipFlagParsing: true,
		Action: func(c *cli.Context) error {
			args := c.Args().Slice()
			if len(args) == 0 || args[0] == "-h" || args[0] == "--help" {
				env.Stdout.Write([]byte(verifiableConsumerUsage + "\n"))
				return nil
			}
			a, err := parseArgparse(args, verifiableConsumerArgs, []string{"--topic", "--group-id"}, []string{"--bootstrap-server", "--broker-list"})
			if err == nil {
				err = checkConsumerChoices(a)
			}
			if err != nil {
				env.Stderr.Write([]byte(verifiableConsumerUsage + "\nverifiable-consumer: error: " + err.Error() + "\n"))
				return tool.ExitError{Code: 1}
			}
			if err := runVerifiableConsumer(env, a); err != nil {
				env.Stderr.Write([]byte(err.Error() + "\n"))
				return tool.ExitError{Code: 1}
			}
			return nil
		},
	}
}

func checkConsumerChoices(a parsedArgs) error {
	switch p := a.str("--reset-policy", "earliest"); p {
	case "earliest", "latest", "none":
	default:
		return tool.Errorf("Invalid value %s for configuration auto.offset.reset: String must be one of: latest, earliest, none", p)
	}
	_, err := saramaAssignors(a.str("--assignment-strategy", "org.apache.kafka.clients.consumer.RangeAssignor"))
	return err
}

// saramaAssignors maps Kafka's partition.assignment.strategy class list
// onto Sarama's balance strategies.
func saramaAssignors(list string) ([]sarama.BalanceStrategy, error) {
	var out []sarama.BalanceStrategy
	for _, name := range tool.SplitList(list) {
		switch strings.TrimPrefix(name, "org.apache.kafka.clients.consumer.") {
		case "RangeAssignor":
			out = append(out, sarama.NewBalanceStrategyRange())
		case "RoundRobinAssignor":
			out = append(out, sarama.NewBalanceStrategyRoundRobin())
		case "StickyAssignor":
			out = append(out, sarama.NewBalanceStrategySticky())
		default:
			return nil, tool.Errorf("Invalid value %s for configuration partition.assignment.strategy: Class %s cannot be found (Samsa's verifiable consumer supports RangeAssignor, RoundRobinAssignor and StickyAssignor)", name, name)
		}
	}
	if len(out) == 0 {
		return nil, tool.Errorf("Invalid value %s for configuration partition.assignment.strategy", list)
	}
	return out, nil
}

func verifiableConsumerConfig(a parsedArgs) (*sarama.Config, []string, error) {
	servers := a.str("--bootstrap-server", a.str("--broker-list", ""))
	props := map[string]string{
		"bootstrap.servers":  servers,
		"enable.auto.commit": "false",
		"session.timeout.ms": a.str("--session-timeout", "30000"),
	}
	if a.flag("--enable-autocommit") {
		props["enable.auto.commit"] = "true"
	}
	if p := a.str("--reset-policy", "earliest"); p != "none" {
		props["auto.offset.reset"] = p
	}
	cfg, err := tool.NewSaramaConfig("consumer-"+a.str("--group-id", "")+"-1", a.str("--consumer.config", ""), props)
	if err != nil {
		return nil, nil, err
	}
	if cfg.Consumer.Group.Heartbeat.Interval >= cfg.Consumer.Group.Session.Timeout {
		cfg.Consumer.Group.Heartbeat.Interval = cfg.Consumer.Group.Session.Timeout / 3
	}
	cfg.Consumer.Group.Rebalance.GroupStrategies, _ = saramaAssignors(a.str("--assignment-strategy", "org.apache.kafka.clients.consumer.RangeAssignor"))
	cfg.Consumer.Group.InstanceId = a.str("--group-instance-id", "")
	cfg.Consumer.Return.Errors = true
	return cfg, tool.SplitList(servers), nil
}

// verifiableConsumer is one run of the tool. Claim goroutines hand
// batches to the poll loop (one goroutine, the only one printing record
// and commit events), so events come out in Kafka's order.
type verifiableConsumer struct {
	topic       string
	group       string
	instanceID  string
	maxMessages int64
	autoCommit  bool
	verbose     bool
	noReset     bool
	events      *jsonEvents
	client      sarama.Client
	cancel      context.CancelFunc
	items       chan pollItem
	finished    chan struct{} // closed when --max-messages is reached
	finishOnce  sync.Once
	consumed    int64 // poll loop only
	failure     error // set once by Setup (reset policy none)
	failureOnce sync.Once
}

// pollItem is a batch of one partition, or a barrier: a session's end,
// answered once everything handed over before it is processed.
type pollItem struct {
	sess    sarama.ConsumerGroupSession
	msgs    []*sarama.ConsumerMessage
	barrier *pollBarrier
}

type pollBarrier struct {
	parts   []kafka.TopicPartition
	closing bool
	done    chan struct{}
}

func runVerifiableConsumer(env tool.Env, a parsedArgs) error {
	cfg, servers, err := verifiableConsumerConfig(a)
	if err != nil {
		return err
	}
	client, err := sarama.NewClient(servers, cfg)
	if err != nil {
		return err
	}
	defer client.Close()
	group, err := sarama.NewConsumerGroupFromClient(a.str("--group-id", ""), client)
	if err != nil {
		return err
	}
	v := &verifiableConsumer{
		topic:       a.str("--topic", ""),
		group:       a.str("--group-id", ""),
		instanceID:  cfg.Consumer.Group.InstanceId,
		maxMessages: a.num("--max-messages", -1),
		autoCommit:  a.flag("--enable-autocommit"),
		verbose:     a.flag("--verbose"),
		noReset:     a.str("--reset-policy", "earliest") == "none",
		events:      &jsonEvents{out: env.Stdout, now: time.Now},
		client:      client,
		items:       make(chan pollItem),
		finished:    make(chan struct{}),
	}
	ctx := env.Context
	if ctx == nil {
		ctx = context.Background()
	}
	ctx, stop := signal.NotifyContext(ctx, os.Interrupt, syscall.SIGTERM)
	defer stop()
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	v.cancel = cancel
	v.events.print(v.events.event("startup_complete"))

	pollDone, stopPoll := make(chan struct{}), make(chan struct{})
	go func() {
		defer close(pollDone)
		v.pollLoop(stopPoll)
	}()
	go func() {
		select {
		case <-v.finished:
			cancel()
		case <-ctx.Done():
		}
	}()
	errLog := tool.Logger(env, "verifiable-consumer")
	errsDone := make(chan struct{})
	go func() {
		defer close(errsDone)
		for err := range group.Errors() {
			errLog.WithError(err).Error("consumer group error")
		}
	}()
	consumeUntilDone(ctx, env, group, &verifiableHandler{v: v, ctx: ctx}, v.topic, errLog)
	// Close leaves the group; Consume has returned, so no claim or
	// Cleanup is left to hand the poll loop anything.
	cancel()
	group.Close()
	<-errsDone
	close(stopPoll)
	<-pollDone
	if v.failure != nil {
		fmt.Fprintf(env.Stderr, "ERROR Error during processing, terminating consumer process: %v\n", v.failure)
	}
	v.events.print(v.events.event("shutdown_complete"))
	return nil
}

// consumeUntilDone runs the group's consume sessions until ctx ends, the
// group closes, or a join error the Java consumer does not retry (printed
// as Kafka's tool does); other join or sync failures are retried after
// consumerRejoinBackoff.
func consumeUntilDone(ctx context.Context, env tool.Env, group sarama.ConsumerGroup, h sarama.ConsumerGroupHandler, topic string, errLog logrus.FieldLogger) {
	for ctx.Err() == nil {
		err := group.Consume(ctx, []string{topic}, h)
		if err == nil || ctx.Err() != nil {
			continue
		}
		if errors.Is(err, sarama.ErrClosedConsumerGroup) {
			break
		}
		if code, fatal := fatalJoinError(err); fatal {
			// The Java consumer's poll throws; the tool logs and closes.
			class, msg := javaExceptionOf(code)
			fmt.Fprintf(env.Stderr, "ERROR Error during processing, terminating consumer process: %s: %s\n", class, msg)
			break
		}
		// A failed join or sync: the Java consumer keeps trying, so do we.
		errLog.WithError(err).Error("joining the group failed; retrying")
		t := time.NewTimer(consumerRejoinBackoff)
		select {
		case <-t.C:
		case <-ctx.Done():
		}
		t.Stop()
	}
}

// fatalJoinError reports whether err holds a group error the Java
// consumer does not retry (it throws from poll).
func fatalJoinError(err error) (sarama.KError, bool) {
	var ke sarama.KError
	if !errors.As(err, &ke) {
		return 0, false
	}
	switch ke {
	case sarama.ErrInvalidSessionTimeout, sarama.ErrInconsistentGroupProtocol, sarama.ErrInvalidGroupId,
		sarama.ErrGroupAuthorizationFailed, sarama.ErrFencedInstancedId, sarama.ErrGroupMaxSizeReached:
		return ke, true
	}
	return 0, false
}

// pollLoop is the Kafka tool's run loop: each iteration takes what is
// ready, prints it and commits it.
func (v *verifiableConsumer) pollLoop(stop <-chan struct{}) {
	for {
		var first pollItem
		select {
		case first = <-v.items:
		case <-stop:
			return
		}
		batch := []pollItem{first}
		n := len(first.msgs)
	drain:
		for n < maxPollRecords && first.barrier == nil {
			select {
			case it := <-v.items:
				batch = append(batch, it)
				n += len(it.msgs)
				if it.barrier != nil {
					break drain
				}
			default:
				break drain
			}
		}
		var records []pollItem
		var barrier *pollItem
		for i := range batch {
			if batch[i].barrier != nil {
				barrier = &batch[i]
				continue
			}
			records = append(records, batch[i])
		}
		if len(records) > 0 {
			v.onPoll(records)
		}
		if barrier != nil {
			v.handleBarrier(*barrier)
		}
	}
}

func (v *verifiableConsumer) handleBarrier(it pollItem) {
	b := it.barrier
	if !b.closing || len(b.parts) > 0 {
		v.events.print(v.events.event("partitions_revoked").array("partitions", len(b.parts), func(i int, o *jsonLine) {
			o.str("topic", b.parts[i].Topic).num("partition", int64(b.parts[i].Partition))
		}))
	}
	close(b.done)
}

func (v *verifiableConsumer) isFinished() bool {
	return v.maxMessages >= 0 && v.consumed >= v.maxMessages
}

// onPoll is onRecordsReceived followed by the manual commit.
func (v *verifiableConsumer) onPoll(items []pollItem) {
	if v.isFinished() {
		return
	}
	byTP := map[kafka.TopicPartition][]*sarama.ConsumerMessage{}
	var order []kafka.TopicPartition
	total := 0
	for _, it := range items {
		for _, m := range it.msgs {
			k := kafka.TopicPartition{Topic: m.Topic, Partition: m.Partition}
			if _, ok := byTP[k]; !ok {
				order = append(order, k)
			}
			byTP[k] = append(byTP[k], m)
			total++
		}
	}
	sort.Slice(order, func(i, j int) bool {
		return order[i].Topic < order[j].Topic || order[i].Topic == order[j].Topic && order[i].Partition < order[j].Partition
	})
	type summary struct {
		tp       kafka.TopicPartition
		count    int64
		min, max int64
	}
	var sums []summary
	offsets := map[kafka.TopicPartition]int64{}
	for _, tp := range order {
		recs := byTP[tp]
		if v.maxMessages >= 0 && v.consumed+int64(len(recs)) > v.maxMessages {
			recs = recs[:v.maxMessages-v.consumed]
		}
		if len(recs) == 0 {
			continue
		}
		minOff, maxOff := recs[0].Offset, recs[len(recs)-1].Offset
		offsets[tp] = maxOff + 1
		sums = append(sums, summary{tp, int64(len(recs)), minOff, maxOff})
		if v.verbose {
			for _, r := range recs {
				var key *string
				if r.Key != nil {
					k := string(r.Key)
					key = &k
				}
				v.events.print(v.events.event("record_data").nullableStr("key", key).str("value", string(r.Value)).
					str("topic", r.Topic).num("partition", int64(r.Partition)).num("offset", r.Offset))
			}
		}
		v.consumed += int64(len(recs))
		if v.isFinished() {
			break
		}
	}
	v.events.print(v.events.event("records_consumed").num("count", int64(total)).array("partitions", len(sums), func(i int, o *jsonLine) {
		s := sums[i]
		o.str("topic", s.tp.Topic).num("partition", int64(s.tp.Partition)).num("count", s.count).
			num("minOffset", s.min).num("maxOffset", s.max)
	}))
	if !v.autoCommit {
		v.commitSync(items[0].sess, offsets)
	} else {
		for tp, off := range offsets {
			items[0].sess.MarkOffset(tp.Topic, tp.Partition, off, "")
		}
	}
	if v.isFinished() {
		v.finishOnce.Do(func() { close(v.finished) })
	}
}
