package tools

// kafka-consumer-perf-test: consume N messages and report throughput (Kafka
// 2.8 ConsumerPerformance).
//
// Behaviour:
//   - reads every partition of --topic directly from the earliest offset
//     (--from-latest: from the end), without a consumer group, so
//     rebalance.time.ms is always 0; --group is accepted and ignored;
//   - stops after --messages or after --timeout ms without a message;
//   - prints Kafka's CSV header (unless --hide-header) and one result line:
//     start.time, end.time, data.consumed.in.MB, MB.sec,
//     data.consumed.in.nMsg, nMsg.sec, rebalance.time.ms, fetch.time.ms,
//     fetch.MB.sec, fetch.nMsg.sec.

import (
	"context"
	"fmt"
	"sync"
	"time"

	"github.com/IBM/sarama"
	"github.com/urfave/cli/v2"
)

// perfTime formats t as Kafka's perf tools do: "2006-01-02 15:04:05:000".
func perfTime(t time.Time) string {
	s := t.Format("2006-01-02 15:04:05.000")
	return s[:len(s)-4] + ":" + s[len(s)-3:]
}

func consumerPerfCommand(env Env) *cli.Command {
	return &cli.Command{
		Name:  "kafka-consumer-perf-test",
		Usage: "measure consumer throughput",
		Flags: []cli.Flag{
			&cli.StringFlag{Name: "bootstrap-server", Usage: "broker(s) to connect to (required)"},
			&cli.StringFlag{Name: "broker-list", Usage: "DEPRECATED, use --bootstrap-server"},
			&cli.StringFlag{Name: "topic", Usage: "topic to consume (required)"},
			&cli.Int64Flag{Name: "messages", Usage: "messages to consume (required)"},
			&cli.StringFlag{Name: "group", Usage: "accepted for compatibility; Samsa's tool uses no group"},
			&cli.IntFlag{Name: "fetch-size", Value: 1024 * 1024, Usage: "bytes per partition per fetch"},
			&cli.BoolFlag{Name: "from-latest", Usage: "start at the end of the log"},
			&cli.IntFlag{Name: "timeout", Value: 10000, Usage: "ms without a message before giving up"},
			&cli.BoolFlag{Name: "hide-header", Usage: "omit the CSV header"},
			&cli.BoolFlag{Name: "show-detailed-stats", Usage: "accepted for compatibility"},
			&cli.StringFlag{Name: "consumer.config", Usage: "consumer properties file"},
		},
		Action: func(c *cli.Context) error {
			if err := runConsumerPerf(c, env); err != nil {
				fmt.Fprintln(env.Stderr, err)
				return exitError{1}
			}
			return nil
		},
	}
}

func runConsumerPerf(c *cli.Context, env Env) error {
	servers := c.String("bootstrap-server")
	if servers == "" {
		servers = c.String("broker-list")
	}
	topic, want := c.String("topic"), c.Int64("messages")
	if servers == "" || topic == "" || want <= 0 {
		return toolError("Missing required argument: --bootstrap-server, --topic and a positive --messages are required")
	}
	cfg, err := newSaramaConfig("perf-consumer-client", c.String("consumer.config"), nil)
	if err != nil {
		return err
	}
	cfg.Consumer.Fetch.Default = int32(c.Int("fetch-size"))
	start := sarama.OffsetOldest
	if c.Bool("from-latest") {
		start = sarama.OffsetNewest
	}
	o := consumerOpts{servers: servers, topic: topic, start: start}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	msgs := make(chan *sarama.ConsumerMessage, 4096)
	errs := make(chan error, 1)
	var wg sync.WaitGroup
	startTime := time.Now()
	if err := consumePartitions(ctx, &wg, cfg, o, msgs, errs); err != nil {
		return err
	}
	timeout := time.Duration(c.Int("timeout")) * time.Millisecond
	idle := time.NewTimer(timeout)
	defer idle.Stop()
	var count, bytes int64
	var loopErr error
	fetchStart := time.Now()
loop:
	for count < want {
		select {
		case m := <-msgs:
			count++
			bytes += int64(len(m.Value)) + int64(len(m.Key))
			if !idle.Stop() {
				<-idle.C
			}
			idle.Reset(timeout)
		case <-idle.C:
			fmt.Fprintf(env.Stderr, "WARNING: Exiting before consuming the expected number of messages: timeout (%d ms) exceeded. You can use the --timeout option to increase the timeout.\n", timeout.Milliseconds())
			break loop
		case loopErr = <-errs:
			break loop
		}
	}
	end := time.Now()
	cancel()
	wg.Wait()
	if loopErr != nil {
		return loopErr
	}
	mb := float64(bytes) / (1024 * 1024)
	total := end.Sub(startTime).Seconds()
	fetch := end.Sub(fetchStart).Seconds()
	if total <= 0 {
		total = 1e-9
	}
	if fetch <= 0 {
		fetch = 1e-9
	}
	if !c.Bool("hide-header") {
		fmt.Fprintln(env.Stdout, "start.time, end.time, data.consumed.in.MB, MB.sec, data.consumed.in.nMsg, nMsg.sec, rebalance.time.ms, fetch.time.ms, fetch.MB.sec, fetch.nMsg.sec")
	}
	fmt.Fprintf(env.Stdout, "%s, %s, %.4f, %.4f, %d, %.4f, %d, %d, %.4f, %.4f\n",
		perfTime(startTime), perfTime(end), mb, mb/total, count, float64(count)/total,
		0, end.Sub(fetchStart).Milliseconds(), mb/fetch, float64(count)/fetch)
	return nil
}
