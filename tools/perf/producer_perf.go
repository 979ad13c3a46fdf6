package perf

// kafka-producer-perf-test: Kafka 2.8's ProducerPerformance over a Sarama
// AsyncProducer (Return.Successes).
//
// Behaviour, as Kafka 2.8:
//   - options are parsed as argparse4j does, so --producer-props takes one
//     or more k=v arguments (nargs "+"); exactly one of --record-size and
//     --payload-file; --throughput is required (-1: no limit);
//   - --record-size: one payload of random uppercase letters from
//     java.util.Random(0), sent for every record (byte-identical to Kafka's);
//     --payload-file: the file split on --payload-delimiter (a regex, default
//     newline, trailing empty pieces dropped), a random piece per record;
//   - a window line every 5 s, printed from the completion that crosses the
//     mark: "N records sent, X records/sec (Y MB/sec), A ms avg latency, M ms
//     max latency."; then the total line with the 50th/95th/99th/99.9th
//     percentiles (Stats.printTotal); MB = MiB of payload; latency is the
//     integer milliseconds from send to completion, failures included;
//   - throttling is Kafka's ThroughputThrottler (perf_stats.go);
//   - --print-metrics prints Sarama's producer metrics in Kafka's layout;
//   - failed sends are reported on stderr (the first 10, then a count) and,
//     as in Kafka, do not change the exit code.
//
// Samsa extras: --bootstrap-server as a shorthand for bootstrap.servers;
// max.in.flight.requests.per.connection maps to Sarama's Net.MaxOpenRequests.
// Transactions as Kafka 2.8: with --transaction-duration-ms > 0 the
// producer uses --transactional-id (default
// performance-producer-default-transactional-id), begins a transaction
// before the first record of each, and commits once the duration passed
// (checked at each send) and after the last record.

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"sync"

	"github.com/IBM/sarama"
	"github.com/urfave/cli/v2"

	"samsa/config"
	"samsa/tools/internal/tool"
)

const producerPerfUsage = "usage: producer-performance [-h] --topic TOPIC --num-records NUM-RECORDS (--record-size RECORD-SIZE | --payload-file PAYLOAD-FILE) [--payload-delimiter PAYLOAD-DELIMITER] --throughput THROUGHPUT [--producer-props PROP-NAME=PROP-VALUE [PROP-NAME=PROP-VALUE ...]] [--producer.config CONFIG-FILE] [--print-metrics] [--transactional-id TRANSACTIONAL-ID] [--transaction-duration-ms TRANSACTION-DURATION]"

// perfMaxErrorsShown bounds the failed sends printed one by one.
const perfMaxErrorsShown = 10

func ProducerCommand(env tool.Env) *cli.Command {
	return &cli.Command{
		Name:            "kafka-producer-perf-test",
		Usage:           "verify the producer performance (org.apache.kafka.tools.ProducerPerformance)",
		UsageText:       producerPerfUsage,
		SkipFlagParsing: true,
		Action: func(c *cli.Context) error {
			args := c.Args().Slice()
			if len(args) == 0 || args[0] == "-h" || args[0] == "--help" {
				fmt.Fprintln(env.Stdout, producerPerfUsage)
				return nil
			}
			o, err := parseProducerPerfArgs(args)
			if err != nil {
				fmt.Fprintf(env.Stderr, "%s\nproducer-performance: error: %v\n", producerPerfUsage, err)
				return tool.ExitError{Code: 1}
			}
			if err := runProducerPerf(env, o); err != nil {
				fmt.Fprintln(env.Stderr, err)
				return tool.ExitError{Code: 1}
			}
			return nil
		},
	}
}

type producerPerfOpts struct {
	topic           string
	numRecords      int64
	recordSize      int
	hasRecordSize   bool
	payloadFile     string
	delimiter       string
	throughput      int64
	props           []string
	hasProps        bool
	configFile      string
	printMetrics    bool
	txnDurationMs   int64
	transactionalID string
	bootstrapServer string
}

// parseProducerPerfArgs parses args as ProducerPerformance's argparse4j
// parser does.
func parseProducerPerfArgs(args []string) (*producerPerfOpts, error) {
	o := &producerPerfOpts{delimiter: `\n`, transactionalID: perfDefaultTransactionalID}
	seen := map[string]bool{}
	for i := 0; i < len(args); i++ {
		name, inline, hasInline := strings.Cut(args[i], "=")
		if !strings.HasPrefix(name, "--") {
			return nil, tool.Errorf("unrecognized arguments: '%s'", args[i])
		}
		value := func() (string, error) {
			if hasInline {
				return inline, nil
			}
			if i+1 >= len(args) || strings.HasPrefix(args[i+1], "--") {
				return "", tool.Errorf("argument %s: expected one argument", name)
			}
			i++
			return args[i], nil
		}
		number := func(bits int, typ string) (int64, error) {
			v, err := value()
			if err != nil {
				return 0, err
			}
			n, err := strconv.ParseInt(v, 10, bits)
			if err != nil {
				return 0, tool.Errorf("argument %s: could not convert '%s' to %s", name, v, typ)
			}
			return n, nil
		}
		var err error
		var n int64
		switch name {
		case "--topic":
			o.topic, err = value()
		case "--num-records":
			o.numRecords, err = number(64, "Long")
		case "--record-size":
			n, err = number(32, "Integer")
			o.recordSize, o.hasRecordSize = int(n), true
		case "--payload-file":
			o.payloadFile, err = value()
		case "--payload-delimiter":
			o.delimiter, err = value()
		case "--throughput":
			n, err = number(32, "Integer")
			o.throughput = n
		case "--producer-props":
			if hasInline {
				o.props = append(o.props, inline)
			}
			for i+1 < len(args) && !strings.HasPrefix(args[i+1], "--") {
				i++
				o.props = append(o.props, args[i])
			}
			if len(o.props) == 0 {
				return nil, tool.Errorf("argument --producer-props: expected at least one argument")
			}
			o.hasProps = true
		case "--producer.config":
			o.configFile, err = value()
		case "--print-metrics":
			o.printMetrics = true
		case "--transactional-id":
			o.transactionalID, err = value()
		case "--transaction-duration-ms":
			o.txnDurationMs, err = number(64, "Long")
		case "--bootstrap-server":
			o.bootstrapServer, err = value()
		default:
			return nil, tool.Errorf("unrecognized arguments: '%s'", args[i])
		}
		if err != nil {
			return nil, err
		}
		seen[name] = true
	}
	if err := checkProducerPerfOpts(o, seen); err != nil {
		return nil, err
	}
	return o, nil
}

// checkProducerPerfOpts checks what argparse4j and ProducerPerformance
// require of the options once parsed (seen: the options given).
func checkProducerPerfOpts(o *producerPerfOpts, seen map[string]bool) error {
	switch {
	case seen["--record-size"] && seen["--payload-file"]:
		return tool.Errorf("argument --payload-file: not allowed with argument --record-size")
	case !seen["--record-size"] && !seen["--payload-file"]:
		return tool.Errorf("one of the arguments --record-size --payload-file is required")
	}
	for _, req := range []string{"--topic", "--num-records", "--throughput"} {
		if !seen[req] {
			return tool.Errorf("argument %s is required", req)
		}
	}
	if !o.hasProps && o.configFile == "" && o.bootstrapServer == "" {
		return tool.Errorf("Either --producer-props or --producer.config must be specified.")
	}
	if o.numRecords <= 0 {
		return tool.Errorf("argument --num-records: must be positive")
	}
	return nil
}

// producerPerfConfig merges --producer.config and --producer-props (which
// win) into a Sarama config and the bootstrap servers.
func producerPerfConfig(o *producerPerfOpts) (*sarama.Config, []string, error) {
	props := map[string]string{}
	if o.configFile != "" {
		fileProps, err := config.ReadPropertiesFile(o.configFile)
		if err != nil {
			return nil, nil, err
		}
		props = fileProps
	}
	for _, p := range o.props {
		pieces := strings.Split(p, "=")
		if len(pieces) != 2 {
			return nil, nil, tool.JavaException{Class: "java.lang.IllegalArgumentException", Msg: "Invalid property: " + p}
		}
		props[pieces[0]] = pieces[1]
	}
	if o.bootstrapServer != "" {
		props["bootstrap.servers"] = o.bootstrapServer
	}
	servers := tool.SplitList(props["bootstrap.servers"])
	if len(servers) == 0 {
		return nil, nil, tool.JavaException{Class: "org.apache.kafka.common.config.ConfigException", Msg: `Missing required configuration "bootstrap.servers" which has no default value.`}
	}
	cfg, err := tool.NewSaramaConfig("perf-producer-client", "", props)
	if err != nil {
		return nil, nil, err
	}
	if v, ok := props["max.in.flight.requests.per.connection"]; ok {
		n, err := strconv.Atoi(strings.TrimSpace(v))
		if err != nil || n < 1 {
			return nil, nil, tool.JavaException{Class: "org.apache.kafka.common.config.ConfigException", Msg: fmt.Sprintf("Invalid value %s for configuration max.in.flight.requests.per.connection", v)}
		}
		if !cfg.Producer.Idempotent {
			cfg.Net.MaxOpenRequests = n
		}
	}
	cfg.Producer.Return.Successes = true
	cfg.Producer.Return.Errors = true
	return cfg, servers, nil
}

// perfPayloads reads --payload-file as Kafka does: the whole file split on
// the delimiter regex, trailing empty pieces dropped (Java's String.split).
func perfPayloads(env tool.Env, file, delimiter string) ([][]byte, error) {
	abs, _ := filepath.Abs(file)
	fmt.Fprintf(env.Stdout, "Reading payloads from: %s\n", abs)
	data, err := os.ReadFile(file)
	if err != nil || len(data) == 0 {
		return nil, tool.JavaException{Class: "java.lang.IllegalArgumentException", Msg: "File does not exist or empty file provided."}
	}
	if delimiter == `\n` {
		delimiter = "\n"
	}
	re, err := regexp.Compile(delimiter)
	if err != nil {
		return nil, tool.JavaException{Class: "java.util.regex.PatternSyntaxException", Msg: err.Error()}
	}
	pieces := re.Split(string(data), -1)
	for len(pieces) > 1 && pieces[len(pieces)-1] == "" {
		pieces = pieces[:len(pieces)-1]
	}
	fmt.Fprintf(env.Stdout, "Number of messages read: %d\n", len(pieces))
	out := make([][]byte, len(pieces))
	for i, p := range pieces {
		out[i] = []byte(p)
	}
	return out, nil
}

// perfSend is the Metadata of each message: Kafka's PerfCallback fields.
type perfSend struct {
	iter        int64
	sendStartMs int64
	bytes       int
}

// perfDefaultTransactionalID is Kafka 2.8's default --transactional-id.
const perfDefaultTransactionalID = "performance-producer-default-transactional-id"

func runProducerPerf(env tool.Env, o *producerPerfOpts) error {
	cfg, servers, err := producerPerfConfig(o)
	if err != nil {
		return err
	}
	if o.txnDurationMs > 0 {
		// What Kafka's producer requires of a transactional producer.
		cfg.Producer.Transaction.ID = o.transactionalID
		cfg.Producer.Idempotent = true
		cfg.Producer.RequiredAcks = sarama.WaitForAll
		cfg.Net.MaxOpenRequests = 1
	}
	var payloads [][]byte
	if o.payloadFile != "" {
		if payloads, err = perfPayloads(env, o.payloadFile, o.delimiter); err != nil {
			return err
		}
	}
	p, err := sarama.NewAsyncProducer(servers, cfg)
	if err != nil {
		return err
	}
	ctx := env.Context
	if ctx == nil {
		ctx = context.Background()
	}
	r := &producerPerfRun{env: env, o: o, p: p, rnd: newJavaRandom(0), payloads: payloads}
	if o.hasRecordSize {
		r.payload = make([]byte, max(o.recordSize, 0))
		for i := range r.payload {
			r.payload[i] = byte(r.rnd.nextInt(26) + 65)
		}
	}
	r.stats = newProducerStats(o.numRecords, perfReportingInterval, env.Stdout, tool.NowMs)
	r.wg.Add(2)
	go r.successes()
	go r.errors()
	if err := r.sendAll(ctx); err != nil {
		// A failed transaction ends the run, as Kafka's exception.
		p.AsyncClose()
		r.wg.Wait()
		return err
	}
	// Every record completes (acked or failed after Sarama's bounded
	// retries) before the totals, as Kafka's producer.flush(); the metrics
	// are read before Close, which unregisters them.
	r.inflight.Wait()
	r.stats.printTotal()
	if o.printMetrics {
		printKafkaMetrics(env.Stdout, cfg.MetricRegistry, "producer", cfg.ClientID)
	}
	p.AsyncClose()
	r.wg.Wait()
	if r.failed > perfMaxErrorsShown {
		fmt.Fprintf(env.Stderr, "%d records failed in all\n", r.failed)
	}
	return nil
}

// producerPerfRun is one run of kafka-producer-perf-test: the sending loop
// and the two goroutines that record each completion in stats.
type producerPerfRun struct {
	env      tool.Env
	o        *producerPerfOpts
	p        sarama.AsyncProducer
	rnd      *javaRandom
	payload  []byte   // --record-size: sent for every record
	payloads [][]byte // --payload-file: a random one per record
	stats    *producerStats
	// wg waits for the completion goroutines; inflight for every record
	// handed to the producer.
	wg, inflight sync.WaitGroup

	failedMu sync.Mutex
	failed   int // records that failed; the first perfMaxErrorsShown are printed

	inTxn    int64 // records in the open transaction (0: none open)
	txnStart int64 // when the open transaction began (ms)
}

// successes records each acknowledged record.
func (r *producerPerfRun) successes() {
	defer r.wg.Done()
	for m := range r.p.Successes() {
		s := m.Metadata.(perfSend)
		now := tool.NowMs()
		r.stats.record(s.iter, int32(now-s.sendStartMs), s.bytes, now)
		r.inflight.Done()
	}
}

// errors records each failed record (its latency too, as Kafka) and
// prints the first perfMaxErrorsShown.
func (r *producerPerfRun) errors() {
	defer r.wg.Done()
	for e := range r.p.Errors() {
		s := e.Msg.Metadata.(perfSend)
		now := tool.NowMs()
		r.stats.record(s.iter, int32(now-s.sendStartMs), s.bytes, now)
		r.failedMu.Lock()
		r.failed++
		if r.failed <= perfMaxErrorsShown {
			fmt.Fprintln(r.env.Stderr, tool.SendError(e.Msg, e.Err))
		}
		r.failedMu.Unlock()
		r.inflight.Done()
	}
}

// sendAll sends --num-records records at the throttled rate (until ctx is
// done), in transactions of --transaction-duration-ms when set, and
// commits the last one. It returns a transaction's error.
func (r *producerPerfRun) sendAll(ctx context.Context) error {
	o := r.o
	txns := o.txnDurationMs > 0
	throttler := tool.NewThroughputThrottler(o.throughput, r.stats.start)
	payload := r.payload
	for i := int64(0); i < o.numRecords; i++ {
		if txns && r.inTxn == 0 {
			if err := r.p.BeginTxn(); err != nil {
				return fmt.Errorf("tools: begin transaction: %w", err)
			}
			r.txnStart = tool.NowMs()
		}
		if r.payloads != nil {
			payload = r.payloads[r.rnd.nextInt(int32(len(r.payloads)))]
		}
		sendStartMs := tool.NowMs()
		msg := &sarama.ProducerMessage{Topic: o.topic, Value: sarama.ByteEncoder(payload), Metadata: perfSend{i, sendStartMs, len(payload)}}
		r.inflight.Add(1)
		select {
		case r.p.Input() <- msg:
		case <-ctx.Done():
			r.inflight.Done()
			return r.commitLast()
		}
		r.inTxn++
		if txns && o.txnDurationMs <= sendStartMs-r.txnStart {
			if err := r.commit(); err != nil {
				return err
			}
		}
		if throttler.ShouldThrottle(i, sendStartMs) {
			throttler.Throttle(ctx)
		}
	}
	return r.commitLast()
}

// commitLast commits the open transaction, if any, at the end of the run.
func (r *producerPerfRun) commitLast() error {
	if r.o.txnDurationMs > 0 && r.inTxn > 0 {
		return r.commit()
	}
	return nil
}

func (r *producerPerfRun) commit() error {
	r.inTxn = 0
	if err := r.p.CommitTxn(); err != nil {
		return fmt.Errorf("tools: commit transaction: %w", err)
	}
	return nil
}
