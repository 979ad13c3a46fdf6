package console

// kafka-console-producer: read lines from stdin and produce each one as a
// message (Kafka 2.8 ConsoleProducer with LineMessageReader).
//
// Behaviour:
//   - one message per line, without the line terminator; with
//     parse.key=true the key is the text before key.separator (default TAB);
//     a line without the separator is an error ("No key found on line N: ...")
//     unless ignore.error=true, which sends the whole line as the value;
//   - asynchronous by default with linger --timeout (1000 ms), --sync sends
//     one message at a time;
//   - send failures are reported on stderr as Kafka's ErrorLoggingCallback
//     does; unlike Kafka, the exit code is then 1.

import (
	"bufio"
	"fmt"
	"io"
	"strconv"
	"strings"
	"time"

	"github.com/IBM/sarama"
	"github.com/urfave/cli/v2"

	"samsa/tools/internal/tool"
)

// maxConsoleLine bounds one input line (a message), matching the broker's
// default message.max.bytes ceiling with room to spare.
const maxConsoleLine = 16 << 20

func ProducerCommand(env tool.Env) *cli.Command {
	return &cli.Command{
		Name:  "kafka-console-producer",
		Usage: "read lines from standard input and publish them to a topic",
		Flags: []cli.Flag{
			&cli.StringFlag{Name: "bootstrap-server", Usage: "broker(s) to connect to, host:port[,host:port]"},
			&cli.StringFlag{Name: "broker-list", Usage: "DEPRECATED, use --bootstrap-server"},
			&cli.StringFlag{Name: "topic", Usage: "topic to produce to (required)"},
			&cli.BoolFlag{Name: "sync", Usage: "send each message synchronously"},
			&cli.StringFlag{Name: "compression-codec", Usage: "none, gzip, snappy, lz4 or zstd"},
			&cli.StringFlag{Name: "request-required-acks", Value: "1", Usage: "acks of produce requests: all, -1, 0 or 1"},
			&cli.IntFlag{Name: "request-timeout-ms", Value: 1500, Usage: "ack timeout of produce requests"},
			&cli.IntFlag{Name: "message-send-max-retries", Value: 3, Usage: "retries before giving up on a message"},
			&cli.IntFlag{Name: "retry-backoff-ms", Value: 100, Usage: "wait before a retry"},
			&cli.IntFlag{Name: "timeout", Value: 1000, Usage: "linger: longest a message waits to be batched, in ms"},
			&cli.IntFlag{Name: "max-memory-bytes", Value: 32 * 1024 * 1024, Usage: "accepted for compatibility"},
			&cli.IntFlag{Name: "batch-size", Value: 16384, Usage: "bytes per batch before it is sent"},
			&cli.StringSliceFlag{Name: "property", Usage: "message reader property: parse.key, key.separator, ignore.error"},
			&cli.StringSliceFlag{Name: "producer-property", Usage: "producer property name=value (repeatable)"},
			&cli.StringFlag{Name: "producer.config", Usage: "producer properties file"},
		},
		Action: tool.ErrorExitAction(env, runConsoleProducer),
	}
}

type lineReader struct {
	parseKey    bool
	separator   string
	ignoreError bool
}

// message turns line number n into a message, as LineMessageReader.
func (r lineReader) message(topic, line string, n int) (*sarama.ProducerMessage, error) {
	msg := &sarama.ProducerMessage{Topic: topic}
	if !r.parseKey {
		msg.Value = sarama.ByteEncoder(line)
		return msg, nil
	}
	k, v, ok := strings.Cut(line, r.separator)
	if !ok {
		if r.ignoreError {
			msg.Value = sarama.ByteEncoder(line)
			return msg, nil
		}
		return nil, tool.Errorf("No key found on line %d: %s", n, line)
	}
	msg.Key, msg.Value = sarama.ByteEncoder(k), sarama.ByteEncoder(v)
	return msg, nil
}

func runConsoleProducer(c *cli.Context, env tool.Env) error {
	servers := c.String("bootstrap-server")
	if servers == "" {
		servers = c.String("broker-list")
	}
	if servers == "" {
		return tool.Error("Missing required argument \"[bootstrap-server]\"")
	}
	topic := c.String("topic")
	if topic == "" {
		return tool.Error("Missing required argument \"[topic]\"")
	}
	readerProps, err := tool.ParsePropertyArgs(c.StringSlice("property"))
	if err != nil {
		return err
	}
	reader := lineReader{
		parseKey:    strings.EqualFold(readerProps["parse.key"], "true"),
		separator:   "\t",
		ignoreError: strings.EqualFold(readerProps["ignore.error"], "true"),
	}
	if s, ok := readerProps["key.separator"]; ok {
		reader.separator = s
	}
	producerProps, err := tool.ParsePropertyArgs(c.StringSlice("producer-property"))
	if err != nil {
		return err
	}
	// Options first, then --producer-property and --producer.config on top
	// (Kafka 2.8 getNewProducerProps applies the explicit properties last).
	base := map[string]string{
		"acks":               c.String("request-required-acks"),
		"linger.ms":          strconv.Itoa(c.Int("timeout")),
		"request.timeout.ms": strconv.Itoa(c.Int("request-timeout-ms")),
		"retries":            strconv.Itoa(c.Int("message-send-max-retries")),
		"retry.backoff.ms":   strconv.Itoa(c.Int("retry-backoff-ms")),
		"batch.size":         strconv.Itoa(c.Int("batch-size")),
	}
	if codec := c.String("compression-codec"); codec != "" {
		base["compression.type"] = codec
	}
	cfg, err := tool.NewSaramaConfig("console-producer", c.String("producer.config"), mergeProps(base, producerProps))
	if err != nil {
		return err
	}
	cfg.Producer.Return.Errors = true
	cfg.Producer.Return.Successes = c.Bool("sync")
	if c.Bool("sync") {
		return produceSync(servers, cfg, topic, reader, env)
	}
	return produceAsync(servers, cfg, topic, reader, env)
}

func mergeProps(a, b map[string]string) map[string]string {
	out := make(map[string]string, len(a)+len(b))
	for k, v := range a {
		out[k] = v
	}
	for k, v := range b {
		out[k] = v
	}
	return out
}

// readLines calls fn for each input line (1-based n) until EOF or an error.
func readLines(in io.Reader, fn func(line string, n int) error) error {
	sc := bufio.NewScanner(in)
	sc.Buffer(make([]byte, 64*1024), maxConsoleLine)
	for n := 1; sc.Scan(); n++ {
		if err := fn(strings.TrimSuffix(sc.Text(), "\r"), n); err != nil {
			return err
		}
	}
	return sc.Err()
}

func produceSync(servers string, cfg *sarama.Config, topic string, r lineReader, env tool.Env) error {
	p, err := sarama.NewSyncProducer(tool.SplitList(servers), cfg)
	if err != nil {
		return err
	}
	defer p.Close()
	return readLines(env.Stdin, func(line string, n int) error {
		msg, err := r.message(topic, line, n)
		if err != nil {
			return err
		}
		if _, _, err := p.SendMessage(msg); err != nil {
			return tool.SendError(msg, err)
		}
		return nil
	})
}

func produceAsync(servers string, cfg *sarama.Config, topic string, r lineReader, env tool.Env) error {
	p, err := sarama.NewAsyncProducer(tool.SplitList(servers), cfg)
	if err != nil {
		return err
	}
	failed := make(chan int, 1)
	go func() {
		count := 0
		for pe := range p.Errors() {
			count++
			fmt.Fprintln(env.Stderr, tool.SendError(pe.Msg, pe.Err))
		}
		failed <- count
	}()
	readErr := readLines(env.Stdin, func(line string, n int) error {
		msg, err := r.message(topic, line, n)
		if err != nil {
			return err
		}
		p.Input() <- msg
		return nil
	})
	p.AsyncClose()
	select {
	case n := <-failed:
		if readErr != nil {
			return readErr
		}
		if n > 0 {
			return tool.Errorf("%d message(s) could not be sent", n)
		}
	case <-time.After(cfg.Producer.Timeout + cfg.Net.WriteTimeout + 30*time.Second):
		return tool.Error("timed out flushing messages")
	}
	return nil
}
