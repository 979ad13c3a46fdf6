package perf

// kafka-consumer-perf-test: Kafka 2.8's ConsumerPerformance over a Sarama
// consumer group.
//
// Behaviour, as Kafka 2.8:
//   - the CSV header is printed first (unless --hide-header), then the tool
//     joins --group (default perf-consumer-<random>), subscribes to --topic
//     and consumes until --messages records were read or --timeout ms passed
//     without one (then "WARNING: Exiting before consuming the expected
//     number of messages: timeout (N ms) exceeded. ..." on stdout);
//   - records are counted a poll at a time, so the count may pass
//     --messages by the rest of a batch, as in Kafka;
//   - the result row "start, end, MB, MB/s, nMsg, nMsg/s, rebalance.time.ms,
//     fetch.time.ms, fetch MB/s, fetch nMsg/s" (MB = MiB of keys and
//     values; rebalance time = time spent joining the group; fetch time =
//     elapsed − rebalance time); with --show-detailed-stats a row per
//     --reporting-interval instead (time, threadId 0, ...), Kafka's
//     printConsumerProgress;
//   - dates use --date-format (SimpleDateFormat, default
//     yyyy-MM-dd HH:mm:ss:SSS), local time;
//   - offsets are committed (auto commit) as the Java consumer does, so a
//     second run with the same --group starts where the first stopped;
//   - --threads, --num-fetch-threads print Kafka's deprecation warning;
//     --socket-buffer-size is accepted and ignored; --print-metrics prints
//     Sarama's consumer metrics in Kafka's layout.

import (
	"context"
	"fmt"
	"math/rand"
	"sync"
	"time"

	"github.com/IBM/sarama"
	"github.com/urfave/cli/v2"

	"samsa/tools/internal/tool"
)

const (
	consumerPerfHeader = "start.time, end.time, data.consumed.in.MB, MB.sec, data.consumed.in.nMsg, nMsg.sec, rebalance.time.ms, fetch.time.ms, fetch.MB.sec, fetch.nMsg.sec"
	consumerPerfDetail = "time, threadId, data.consumed.in.MB, MB.sec, data.consumed.in.nMsg, nMsg.sec, rebalance.time.ms, fetch.time.ms, fetch.MB.sec, fetch.nMsg.sec"
	// perfPollMs and perfMaxPollRecords are KafkaConsumer.poll(100 ms) and
	// max.poll.records (500).
	perfPollMs         = 100
	perfMaxPollRecords = 500
)

func ConsumerCommand(env tool.Env) *cli.Command {
	return &cli.Command{
		Name:  "kafka-consumer-perf-test",
		Usage: "performance test for the consumer (kafka.tools.ConsumerPerformance)",
		Flags: []cli.Flag{
			&cli.StringFlag{Name: "bootstrap-server", Usage: "REQUIRED unless --broker-list (deprecated) is specified: the server(s) to connect to"},
			&cli.StringFlag{Name: "broker-list", Usage: "DEPRECATED, use --bootstrap-server instead; ignored if --bootstrap-server is specified"},
			&cli.StringFlag{Name: "topic", Usage: "REQUIRED: the topic to consume from"},
			&cli.Int64Flag{Name: "messages", Usage: "REQUIRED: the number of messages to consume"},
			&cli.StringFlag{Name: "group", Usage: "the group id to consume on (default perf-consumer-<random>)"},
			&cli.IntFlag{Name: "fetch-size", Value: 1024 * 1024, Usage: "the amount of data to fetch in a single request"},
			&cli.BoolFlag{Name: "from-latest", Usage: "without a committed offset, start with the latest message rather than the earliest"},
			&cli.IntFlag{Name: "socket-buffer-size", Value: 2 * 1024 * 1024, Usage: "the size of the tcp RECV size (ignored)"},
			&cli.IntFlag{Name: "threads", Value: 10, Usage: "DEPRECATED AND IGNORED"},
			&cli.IntFlag{Name: "num-fetch-threads", Value: 1, Usage: "DEPRECATED AND IGNORED"},
			&cli.StringFlag{Name: "consumer.config", Usage: "consumer config properties file"},
			&cli.BoolFlag{Name: "print-metrics", Usage: "print out the metrics"},
			&cli.BoolFlag{Name: "show-detailed-stats", Usage: "report stats for each reporting interval"},
			&cli.Int64Flag{Name: "timeout", Value: 10000, Usage: "the maximum allowed time in milliseconds between returned records"},
			&cli.Int64Flag{Name: "reporting-interval", Value: 5000, Usage: "interval in milliseconds at which to print progress info"},
			&cli.StringFlag{Name: "date-format", Value: "yyyy-MM-dd HH:mm:ss:SSS", Usage: "the date format (java.text.SimpleDateFormat)"},
			&cli.BoolFlag{Name: "hide-header", Usage: "skip printing the header for the stats"},
		},
		Action: tool.ErrorExitAction(env, runConsumerPerf),
	}
}

type consumerPerfOpts struct {
	servers, topic, group string
	messages              int64
	timeoutMs, intervalMs int64
	detailed, hideHeader  bool
	printMetrics          bool
	date                  tool.JavaDateLayout
}

func parseConsumerPerfOpts(c *cli.Context, env tool.Env) (*consumerPerfOpts, error) {
	if c.IsSet("threads") || c.IsSet("num-fetch-threads") {
		fmt.Fprintln(env.Stdout, "WARNING: option [threads] and [num-fetch-threads] have been deprecated and will be ignored by the test")
	}
	o := &consumerPerfOpts{
		servers: c.String("bootstrap-server"), topic: c.String("topic"), group: c.String("group"),
		messages: c.Int64("messages"), timeoutMs: c.Int64("timeout"), intervalMs: c.Int64("reporting-interval"),
		detailed: c.Bool("show-detailed-stats"), hideHeader: c.Bool("hide-header"), printMetrics: c.Bool("print-metrics"),
	}
	if o.servers == "" {
		o.servers = c.String("broker-list")
	}
	switch {
	case o.servers == "":
		return nil, tool.Error("Missing required option(s) [bootstrap-server]")
	case o.topic == "":
		return nil, tool.Error(`Missing required argument "[topic]"`)
	case !c.IsSet("messages"):
		return nil, tool.Error(`Missing required argument "[messages]"`)
	case o.intervalMs <= 0:
		return nil, tool.JavaException{Class: "java.lang.IllegalArgumentException", Msg: "Reporting interval must be greater than 0."}
	}
	if o.group == "" {
		o.group = fmt.Sprintf("perf-consumer-%d", rand.Intn(100000))
	}
	var err error
	if o.date, err = tool.ParseJavaDate(c.String("date-format")); err != nil {
		return nil, err
	}
	return o, nil
}

// perfGroupHandler forwards claimed records and tracks join time as Kafka's
// rebalance listener does (assigned: add now − joinStart; revoked: restart).
type perfGroupHandler struct {
	records chan<- *sarama.ConsumerMessage
	mu      sync.Mutex
	joinMs  int64 // guarded by mu; total time joining
	roundMs int64 // guarded by mu; join time since the last report
	startMs int64 // guarded by mu; when the current join began
}

func (h *perfGroupHandler) Setup(sarama.ConsumerGroupSession) error {
	h.mu.Lock()
	defer h.mu.Unlock()
	d := tool.NowMs() - h.startMs
	h.joinMs += d
	h.roundMs += d
	return nil
}

func (h *perfGroupHandler) Cleanup(sarama.ConsumerGroupSession) error {
	h.mu.Lock()
	defer h.mu.Unlock()
	h.startMs = tool.NowMs()
	return nil
}

func (h *perfGroupHandler) ConsumeClaim(s sarama.ConsumerGroupSession, claim sarama.ConsumerGroupClaim) error {
	for m := range claim.Messages() {
		select {
		case h.records <- m:
			s.MarkMessage(m, "")
		case <-s.Context().Done():
			return nil
		}
	}
	return nil
}

// takeRound returns the join time since the last report and resets it.
func (h *perfGroupHandler) takeRound() int64 {
	h.mu.Lock()
	defer h.mu.Unlock()
	r := h.roundMs
	h.roundMs = 0
	return r
}

func runConsumerPerf(c *cli.Context, env tool.Env) error {
	o, err := parseConsumerPerfOpts(c, env)
	if err != nil {
		return err
	}
	if !o.hideHeader {
		if o.detailed {
			fmt.Fprintln(env.Stdout, consumerPerfDetail)
		} else {
			fmt.Fprintln(env.Stdout, consumerPerfHeader)
		}
	}
	cfg, err := consumerPerfConfig(c)
	if err != nil {
		return err
	}
	group, err := sarama.NewConsumerGroup(tool.SplitList(o.servers), o.group, cfg)
	if err != nil {
		return err
	}
	records := make(chan *sarama.ConsumerMessage, perfMaxPollRecords)
	h := &perfGroupHandler{records: records}
	parent := env.Context
	if parent == nil {
		parent = context.Background()
	}
	ctx, cancel := context.WithCancel(parent)
	defer cancel()
	var wg sync.WaitGroup
	startMs := tool.NowMs()
	h.startMs = startMs
	wg.Add(2)
	go func() {
		defer wg.Done()
		for ctx.Err() == nil {
			if err := group.Consume(ctx, []string{o.topic}, h); err != nil && ctx.Err() == nil {
				fmt.Fprintf(env.Stderr, "WARN consumer group %s: %v\n", o.group, err)
				select {
				case <-time.After(time.Duration(perfPollMs) * time.Millisecond):
				case <-ctx.Done():
				}
			}
		}
	}()
	go func() {
		defer wg.Done()
		shown := 0
		for err := range group.Errors() {
			if shown++; shown <= perfMaxErrorsShown {
				fmt.Fprintf(env.Stderr, "WARN consumer group %s: %v\n", o.group, err)
			}
		}
	}()
	msgs, bytes := consumePerfLoop(env, o, records, h)
	endMs := tool.NowMs()
	var metricLines []metricLine
	if o.printMetrics {
		metricLines = collectKafkaMetrics(cfg.MetricRegistry, "consumer", cfg.ClientID)
	}
	cancel()
	closeErr := group.Close()
	wg.Wait()
	if closeErr != nil {
		fmt.Fprintf(env.Stderr, "WARN closing consumer group %s: %v\n", o.group, closeErr)
	}
	if !o.detailed {
		h.mu.Lock()
		join := h.joinMs
		h.mu.Unlock()
		printConsumerPerfTotal(env, o, startMs, endMs, join, msgs, bytes)
	}
	if o.printMetrics {
		writeKafkaMetrics(env.Stdout, metricLines)
	}
	return nil
}

// consumerPerfConfig is the Sarama config of a run: --consumer.config,
// --fetch-size, --from-latest.
func consumerPerfConfig(c *cli.Context) (*sarama.Config, error) {
	cfg, err := tool.NewSaramaConfig("perf-consumer-client", c.String("consumer.config"), nil)
	if err != nil {
		return nil, err
	}
	cfg.Consumer.Fetch.Default = int32(c.Int("fetch-size"))
	cfg.Consumer.Offsets.Initial = sarama.OffsetOldest
	if c.Bool("from-latest") {
		cfg.Consumer.Offsets.Initial = sarama.OffsetNewest
	}
	cfg.Consumer.Return.Errors = true
	return cfg, nil
}

// printConsumerPerfTotal prints ConsumerPerformance's summary line: the
// run from startMs to endMs, of which joinMs joining the group.
func printConsumerPerfTotal(env tool.Env, o *consumerPerfOpts, startMs, endMs, joinMs, msgs, bytes int64) {
	elapsedSecs := float64(endMs-startMs) / 1000.0
	fetchMs := endMs - startMs - joinMs
	mb := float64(bytes) / (1024 * 1024)
	fmt.Fprintf(env.Stdout, "%s, %s, %s, %s, %d, %s, %d, %d, %s, %s\n",
		o.date.Format(time.UnixMilli(startMs)), o.date.Format(time.UnixMilli(endMs)),
		javaFixed(mb, 4), javaFixed(mb/elapsedSecs, 4), msgs, javaFixed(float64(msgs)/elapsedSecs, 4),
		joinMs, fetchMs, javaFixed(mb/(float64(fetchMs)/1000.0), 4), javaFixed(float64(msgs)/(float64(fetchMs)/1000.0), 4))
}

// consumePerfLoop is ConsumerPerformance.consume: poll until enough records
// or until timeout ms pass without one. It returns records and bytes read.
func consumePerfLoop(env tool.Env, o *consumerPerfOpts, records <-chan *sarama.ConsumerMessage, h *perfGroupHandler) (int64, int64) {
	var msgs, bytes, lastMsgs, lastBytes int64
	current := tool.NowMs()
	lastReport, lastConsumed := current, current
	poll := time.NewTimer(time.Hour)
	defer poll.Stop()
	batch := make([]*sarama.ConsumerMessage, 0, perfMaxPollRecords)
	for msgs < o.messages && current-lastConsumed <= o.timeoutMs {
		batch = batch[:0]
		poll.Reset(time.Duration(perfPollMs) * time.Millisecond)
		select {
		case m := <-records:
			batch = append(batch, m)
		drain:
			for len(batch) < perfMaxPollRecords {
				select {
				case m := <-records:
					batch = append(batch, m)
				default:
					break drain
				}
			}
			if !poll.Stop() {
				<-poll.C
			}
		case <-poll.C:
		}
		current = tool.NowMs()
		if len(batch) > 0 {
			lastConsumed = current
		}
		for _, m := range batch {
			msgs++
			bytes += int64(len(m.Key)) + int64(len(m.Value))
			if current-lastReport >= o.intervalMs {
				round := h.takeRound()
				if o.detailed {
					printConsumerProgress(env, o, bytes, lastBytes, msgs, lastMsgs, lastReport, current, round)
				}
				lastReport, lastMsgs, lastBytes = current, msgs, bytes
			}
		}
	}
	if msgs < o.messages {
		fmt.Fprintf(env.Stdout, "WARNING: Exiting before consuming the expected number of messages: timeout (%d ms) exceeded. You can use the --timeout option to increase the timeout.\n", o.timeoutMs)
	}
	return msgs, bytes
}

// printConsumerProgress is Kafka's printBasicProgress + printExtendedProgress.
func printConsumerProgress(env tool.Env, o *consumerPerfOpts, bytes, lastBytes, msgs, lastMsgs, startMs, endMs, joinMs int64) {
	elapsed := float64(endMs - startMs)
	totalMB := float64(bytes) / (1024 * 1024)
	intervalMB := float64(bytes-lastBytes) / (1024 * 1024)
	fetchMs := endMs - startMs - joinMs
	fetchMBs, fetchMsgs := 0.0, 0.0
	if fetchMs > 0 {
		fetchMBs, fetchMsgs = 1000.0*intervalMB/float64(fetchMs), 1000.0*float64(msgs-lastMsgs)/float64(fetchMs)
	}
	fmt.Fprintf(env.Stdout, "%s, %d, %s, %s, %d, %s, %d, %d, %s, %s\n",
		o.date.Format(time.UnixMilli(endMs)), 0, javaFixed(totalMB, 4), javaFixed(1000.0*intervalMB/elapsed, 4),
		msgs, javaFixed(float64(msgs-lastMsgs)/elapsed*1000.0, 4), joinMs, fetchMs, javaFixed(fetchMBs, 4), javaFixed(fetchMsgs, 4))
}
