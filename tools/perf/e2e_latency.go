package perf

// kafka-e2e-latency: Kafka 2.8's kafka.tools.EndToEndLatency (run in Kafka as
// "kafka-run-class.sh kafka.tools.EndToEndLatency"): send one message,
// wait until a consumer reads it, repeat; print the round-trip latencies.
//
// Behaviour:
//   - positional arguments as Kafka's: broker_list topic num_messages
//     producer_acks message_size_bytes [properties_file]; acks must be 1 or
//     all; the properties file configures both clients;
//   - a missing topic is created with 1 partition and replication factor 1,
//     announced with Kafka's line;
//   - messages are random uppercase letters from Kafka's seeded generator
//     (java.util.Random(0)), so the payloads equal Kafka's byte for byte;
//   - "i<TAB>elapsed_ms" every 1000 messages, then "Avg latency: X ms", an
//     empty line and "Percentiles: 50th = A, 99th = B, 99.9th = C" (integer
//     ms, as Kafka truncates);
//   - the consumer reads every partition directly from its end (Kafka
//     assigns the partitions to a throw-away group and commits at exit;
//     Samsa creates no group); the fetch wait is 1 ms (Sarama's minimum;
//     Kafka uses 0).

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"sort"
	"strconv"
	"sync"
	"time"

	"github.com/IBM/sarama"
	"github.com/urfave/cli/v2"

	"samsa/tools/internal/tool"
)

// e2ePollTimeout is EndToEndLatency's poll timeout (60 s).
const e2ePollTimeout = 60 * time.Second

const e2eUsage = "USAGE: java kafka.tools.EndToEndLatency$ broker_list topic num_messages producer_acks message_size_bytes [optional] properties_file"

func E2ELatencyCommand(env tool.Env) *cli.Command {
	return &cli.Command{
		Name:      "kafka-e2e-latency",
		Usage:     "measure the end-to-end latency of single messages (kafka.tools.EndToEndLatency)",
		ArgsUsage: "broker_list topic num_messages producer_acks message_size_bytes [properties_file]",
		Action: func(c *cli.Context) error {
			args := c.Args().Slice()
			if len(args) != 5 && len(args) != 6 {
				fmt.Fprintln(env.Stderr, e2eUsage)
				return tool.ExitError{Code: 1}
			}
			if err := runE2ELatency(env, args); err != nil {
				fmt.Fprintln(env.Stderr, err)
				return tool.ExitError{Code: 1}
			}
			return nil
		},
	}
}

type e2eOpts struct {
	servers     []string
	topic       string
	num         int
	acks        string
	size        int
	propsFile   string
	pollTimeout time.Duration
}

func parseE2EArgs(args []string) (*e2eOpts, error) {
	o := &e2eOpts{servers: tool.SplitList(args[0]), topic: args[1], acks: args[3], pollTimeout: e2ePollTimeout}
	var err error
	if o.num, err = strconv.Atoi(args[2]); err != nil || o.num < 0 {
		return nil, tool.JavaException{Class: "java.lang.NumberFormatException", Msg: fmt.Sprintf("For input string: %q", args[2])}
	}
	if o.size, err = strconv.Atoi(args[4]); err != nil || o.size < 0 {
		return nil, tool.JavaException{Class: "java.lang.NumberFormatException", Msg: fmt.Sprintf("For input string: %q", args[4])}
	}
	if len(args) > 5 {
		o.propsFile = args[5]
	}
	if o.acks != "1" && o.acks != "all" {
		return nil, tool.JavaException{Class: "java.lang.IllegalArgumentException", Msg: "Latency testing requires synchronous acknowledgement. Please use 1 or all"}
	}
	return o, nil
}

func runE2ELatency(env tool.Env, args []string) error {
	o, err := parseE2EArgs(args)
	if err != nil {
		return err
	}
	cfg, err := tool.NewSaramaConfig("e2e-latency", o.propsFile, map[string]string{"acks": o.acks})
	if err != nil {
		return err
	}
	cfg.Producer.Return.Successes = true
	cfg.Producer.Flush.Frequency = 0
	cfg.Producer.Flush.Messages = 0
	cfg.Producer.Flush.Bytes = 0
	cfg.Consumer.MaxWaitTime = time.Millisecond
	cfg.Consumer.Return.Errors = true
	client, err := sarama.NewClient(o.servers, cfg)
	if err != nil {
		return err
	}
	defer client.Close()
	if err := ensureE2ETopic(env.Stdout, client, o.topic); err != nil {
		return err
	}
	producer, err := sarama.NewSyncProducerFromClient(client)
	if err != nil {
		return err
	}
	defer producer.Close()
	consumer, err := sarama.NewConsumerFromClient(client)
	if err != nil {
		return err
	}
	defer consumer.Close()
	msgs, stop, err := consumeFromEnd(consumer, client, o.topic)
	if err != nil {
		return err
	}
	defer stop()
	return e2eLoop(env.Stdout, o, producer, msgs)
}

// ensureE2ETopic creates the topic as EndToEndLatency.createTopic does when
// the cluster does not know it.
func ensureE2ETopic(out io.Writer, client sarama.Client, topic string) error {
	topics, err := client.Topics()
	if err != nil {
		return err
	}
	for _, t := range topics {
		if t == topic {
			return nil
		}
	}
	fmt.Fprintf(out, "Topic \"%s\" does not exist. Will create topic with %d partition(s) and replication factor = %d\n", topic, 1, 1)
	admin, err := sarama.NewClusterAdminFromClient(client)
	if err != nil {
		return err
	}
	// Closing the admin would close the shared client; it owns nothing else.
	if err := admin.CreateTopic(topic, &sarama.TopicDetail{NumPartitions: 1, ReplicationFactor: 1}, false); err != nil {
		return tool.JavaException{Class: "java.lang.RuntimeException", Msg: fmt.Sprintf("Failed to create topic %s: %v", topic, err)}
	}
	deadline := time.Now().Add(30 * time.Second)
	for {
		if err := client.RefreshMetadata(topic); err == nil {
			if _, err := client.Leader(topic, 0); err == nil {
				return nil
			}
		}
		if time.Now().After(deadline) {
			return tool.JavaException{Class: "java.lang.RuntimeException", Msg: fmt.Sprintf("Failed to create topic %s: no leader after 30 s", topic)}
		}
		time.Sleep(100 * time.Millisecond)
	}
}

// consumeFromEnd starts a partition consumer at the log end of every
// partition of topic and merges their messages. stop ends them.
func consumeFromEnd(consumer sarama.Consumer, client sarama.Client, topic string) (<-chan *sarama.ConsumerMessage, func(), error) {
	partitions, err := client.Partitions(topic)
	if err != nil {
		return nil, nil, err
	}
	ctx, cancel := context.WithCancel(context.Background())
	var wg sync.WaitGroup
	out := make(chan *sarama.ConsumerMessage, 16)
	var pcs []sarama.PartitionConsumer
	stop := func() {
		cancel()
		for _, pc := range pcs {
			pc.AsyncClose()
		}
		wg.Wait()
	}
	for _, p := range partitions {
		pc, err := consumer.ConsumePartition(topic, p, sarama.OffsetNewest)
		if err != nil {
			stop()
			return nil, nil, err
		}
		pcs = append(pcs, pc)
		wg.Add(1)
		go func() {
			defer wg.Done()
			tool.ForwardPartition(ctx, pc, out, make(chan error))
		}()
	}
	return out, stop, nil
}

func e2eLoop(out io.Writer, o *e2eOpts, producer sarama.SyncProducer, msgs <-chan *sarama.ConsumerMessage) error {
	rnd := newJavaRandom(0)
	latencies := make([]int64, o.num)
	var total float64
	timer := time.NewTimer(o.pollTimeout)
	defer timer.Stop()
	for i := 0; i < o.num; i++ {
		msg := make([]byte, o.size)
		for j := range msg {
			msg[j] = byte(rnd.nextInt(26) + 65)
		}
		begin := time.Now()
		if _, _, err := producer.SendMessage(&sarama.ProducerMessage{Topic: o.topic, Value: sarama.ByteEncoder(msg)}); err != nil {
			return tool.JavaException{Class: "java.util.concurrent.ExecutionException", Msg: err.Error()}
		}
		timer.Reset(o.pollTimeout)
		var got *sarama.ConsumerMessage
		select {
		case got = <-msgs:
		case <-timer.C:
			return tool.JavaException{Class: "java.lang.RuntimeException", Msg: fmt.Sprintf("poll() timed out before finding a result (timeout:[%d])", o.pollTimeout.Milliseconds())}
		}
		elapsed := time.Since(begin)
		if !bytes.Equal(got.Value, msg) {
			return tool.JavaException{Class: "java.lang.RuntimeException", Msg: fmt.Sprintf("The message read [%s] did not match the message sent [%s]", tool.JavaString(got.Value), msg)}
		}
		if extra := len(msgs); extra > 0 {
			return tool.JavaException{Class: "java.lang.RuntimeException", Msg: fmt.Sprintf("Only one result was expected during this test. We found [%d]", 1+extra)}
		}
		if i%1000 == 0 {
			fmt.Fprintf(out, "%d\t%s\n", i, tool.JavaDouble(float64(elapsed.Nanoseconds())/1000.0/1000.0))
		}
		total += float64(elapsed.Nanoseconds())
		latencies[i] = elapsed.Nanoseconds() / 1000 / 1000
	}
	if o.num == 0 {
		return tool.JavaException{Class: "java.lang.ArrayIndexOutOfBoundsException", Msg: "Index 0 out of bounds for length 0"}
	}
	fmt.Fprintf(out, "Avg latency: %.4f ms\n\n", total/float64(o.num)/1000.0/1000.0)
	sort.Slice(latencies, func(a, b int) bool { return latencies[a] < latencies[b] })
	n := float64(len(latencies))
	fmt.Fprintf(out, "Percentiles: 50th = %d, 99th = %d, 99.9th = %d\n",
		latencies[int(n*0.5)], latencies[int(n*0.99)], latencies[int(n*0.999)])
	return nil
}

// javaRandom is java.util.Random (and scala.util.Random, which wraps it):
// Kafka's tools draw their payloads from it with a fixed seed.
type javaRandom struct{ seed int64 }

const (
	javaRandomMultiplier = 0x5DEECE66D
	javaRandomMask       = 1<<48 - 1
)

func newJavaRandom(seed int64) *javaRandom {
	return &javaRandom{seed: (seed ^ javaRandomMultiplier) & javaRandomMask}
}

func (r *javaRandom) next(bits uint) int32 {
	r.seed = (r.seed*javaRandomMultiplier + 0xB) & javaRandomMask
	return int32(r.seed >> (48 - bits))
}

// nextInt is Random.nextInt(bound) for bound > 0.
func (r *javaRandom) nextInt(bound int32) int32 {
	v := r.next(31)
	m := bound - 1
	if bound&m == 0 {
		return int32((int64(bound) * int64(v)) >> 31)
	}
	for u := v; ; u = r.next(31) {
		v = u % bound
		if u-v+m >= 0 { // Java's int overflow test: Go int32 wraps the same way
			return v
		}
	}
}
