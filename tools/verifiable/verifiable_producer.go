package verifiable

// kafka-verifiable-producer: Kafka 2.8's org.apache.kafka.tools.VerifiableProducer
// over a Sarama AsyncProducer (Return.Successes and Return.Errors).
//
// Behaviour, as Kafka 2.8:
//   - values are the integers 0, 1, ... as strings ("<prefix>.<i>" with
//     --value-prefix); keys are null, or with --repeating-keys K the strings
//     "0" … "K-1" over and over;
//   - --max-messages -1 (the default) produces until SIGINT/SIGTERM;
//     --throughput is Kafka's ThroughputThrottler (messages/s, -1 none);
//   - producer properties: bootstrap.servers, acks (--acks, default -1),
//     retries=0, then --producer.config, which overrides them;
//   - stdout is JSON, one event per line: startup_complete, one
//     producer_send_success or producer_send_error per message as its
//     completion arrives, then at shutdown shutdown_complete and tool_data
//     (sent, acked, target_throughput, avg_throughput = 1000 × acked / run ms);
//   - --message-create-time T sets the record timestamps, advanced after
//     each send by the time elapsed since start (Kafka's arithmetic);
//   - keys are partitioned with Kafka's murmur2 (toPositive(h) % n).
//
// Differences: null-key records are spread by Sarama's random partitioner
// (Kafka 2.8: sticky partitioner); producer_send_error names Kafka's
// exception class for broker error codes and
// org.apache.kafka.common.KafkaException for client-side failures.

import (
	"context"
	"errors"
	"hash"
	"os"
	"os/signal"
	"strconv"
	"sync"
	"syscall"
	"time"

	"github.com/IBM/sarama"
	"github.com/urfave/cli/v2"

	"samsa/config"
	"samsa/tools/internal/tool"
)

const verifiableProducerUsage = "usage: verifiable-producer [-h] --topic TOPIC (--bootstrap-server HOST1:PORT1[,HOST2:PORT2[...]] | --broker-list HOST1:PORT1[,HOST2:PORT2[...]]) [--max-messages MAX-MESSAGES] [--throughput THROUGHPUT] [--acks ACKS] [--producer.config CONFIG_FILE] [--message-create-time CREATE-TIME] [--value-prefix VALUE-PREFIX] [--repeating-keys REPEATING-KEYS]"

var verifiableProducerArgs = []argSpec{
	{name: "--topic"},
	{name: "--bootstrap-server"},
	{name: "--broker-list"},
	{name: "--max-messages", kind: argInt},
	{name: "--throughput", kind: argInt},
	{name: "--acks", kind: argInt, choices: []string{"0", "1", "-1"}},
	{name: "--producer.config"},
	{name: "--message-create-time", kind: argLong},
	{name: "--value-prefix", kind: argInt},
	{name: "--repeating-keys", kind: argInt},
}

func ProducerCommand(env tool.Env) *cli.Command {
	return &cli.Command{
		Name:            "kafka-verifiable-producer",
		Usage:           "produce increasing integers and print JSON for every send (org.apache.kafka.tools.VerifiableProducer)",
		UsageText:       verifiableProducerUsage,
		SkipFlagParsing: true,
		Action: func(c *cli.Context) error {
			args := c.Args().Slice()
			if len(args) == 0 || args[0] == "-h" || args[0] == "--help" {
				env.Stdout.Write([]byte(verifiableProducerUsage + "\n"))
				return nil
			}
			a, err := parseArgparse(args, verifiableProducerArgs, []string{"--topic"}, []string{"--bootstrap-server", "--broker-list"})
			if err != nil {
				env.Stderr.Write([]byte(verifiableProducerUsage + "\nverifiable-producer: error: " + err.Error() + "\n"))
				return tool.ExitError{Code: 1}
			}
			if err := runVerifiableProducer(env, a); err != nil {
				env.Stderr.Write([]byte(err.Error() + "\n"))
				return tool.ExitError{Code: 1}
			}
			return nil
		},
	}
}

// verifiableProducer is one run of the tool.
type verifiableProducer struct {
	topic        string
	maxMessages  int64
	throughput   int64
	valuePrefix  *int64
	repeatKeys   *int64 // nil: null keys
	keyCounter   int64
	createTime   int64 // -1: none
	startMs      int64
	events       *jsonEvents
	mu           sync.Mutex
	numSent      int64
	numAcked     int64 // guarded by mu
	inflight     sync.WaitGroup
	completionWG sync.WaitGroup
}

// value is Kafka's getValue: "<prefix>.<i>" or "<i>".
func (p *verifiableProducer) value(i int64) string {
	if p.valuePrefix != nil {
		return strconv.FormatInt(*p.valuePrefix, 10) + "." + strconv.FormatInt(i, 10)
	}
	return strconv.FormatInt(i, 10)
}

// key is Kafka's getKey: null, or the repeating counter.
func (p *verifiableProducer) key() *string {
	if p.repeatKeys == nil {
		return nil
	}
	k := strconv.FormatInt(p.keyCounter, 10)
	p.keyCounter++
	if p.keyCounter == *p.repeatKeys {
		p.keyCounter = 0
	}
	return &k
}

// sendMeta travels with each message to its completion.
type sendMeta struct {
	key   *string
	value string
}

func verifiableProducerConfig(a parsedArgs) (*sarama.Config, []string, error) {
	servers := a.str("--bootstrap-server", a.str("--broker-list", ""))
	props := map[string]string{
		"bootstrap.servers": servers,
		"acks":              a.str("--acks", "-1"),
		"retries":           "0",
	}
	if f := a.str("--producer.config", ""); f != "" {
		fileProps, err := config.ReadPropertiesFile(f)
		if err != nil {
			return nil, nil, tool.Errorf("verifiable-producer: error: %v", err)
		}
		props = config.Merge(props, fileProps)
	}
	cfg, err := tool.NewSaramaConfig("producer-1", "", props)
	if err != nil {
		return nil, nil, err
	}
	cfg.Producer.Return.Successes = true
	cfg.Producer.Return.Errors = true
	cfg.Producer.Partitioner = sarama.NewCustomPartitioner(sarama.WithAbsFirst(), sarama.WithCustomHashFunction(newMurmur2))
	return cfg, tool.SplitList(props["bootstrap.servers"]), nil
}

func runVerifiableProducer(env tool.Env, a parsedArgs) error {
	cfg, servers, err := verifiableProducerConfig(a)
	if err != nil {
		return err
	}
	p := &verifiableProducer{
		topic:       a.str("--topic", ""),
		maxMessages: a.num("--max-messages", -1),
		throughput:  a.num("--throughput", -1),
		createTime:  a.num("--message-create-time", -1),
		startMs:     tool.NowMs(),
		events:      &jsonEvents{out: env.Stdout, now: time.Now},
	}
	if a.has("--repeating-keys") {
		v := a.num("--repeating-keys", 0)
		p.repeatKeys = &v
	}
	if a.has("--value-prefix") {
		v := a.num("--value-prefix", 0)
		p.valuePrefix = &v
	}
	producer, err := sarama.NewAsyncProducer(servers, cfg)
	if err != nil {
		return err
	}
	ctx := env.Context
	if ctx == nil {
		ctx = context.Background()
	}
	ctx, stop := signal.NotifyContext(ctx, os.Interrupt, syscall.SIGTERM)
	defer stop()
	p.completionWG.Add(2)
	go p.drainSuccesses(producer)
	go p.drainErrors(producer)
	startMs := tool.NowMs()
	p.run(ctx, producer, tool.NewThroughputThrottler(p.throughput, startMs))
	// Kafka's shutdown hook: close (flush every outstanding send), then
	// shutdown_complete and the summary.
	p.inflight.Wait()
	producer.AsyncClose()
	p.completionWG.Wait()
	p.events.print(p.events.event("shutdown_complete"))
	stopMs := tool.NowMs()
	p.mu.Lock()
	acked := p.numAcked
	p.mu.Unlock()
	elapsed := float64(stopMs - startMs)
	avg := 1000 * (float64(acked) / elapsed)
	p.events.print(p.events.event("tool_data").num("sent", p.numSent).num("acked", acked).
		num("target_throughput", p.throughput).double("avg_throughput", avg))
	return nil
}

// run is VerifiableProducer.run: startup_complete, then the sends.
func (p *verifiableProducer) run(ctx context.Context, producer sarama.AsyncProducer, throttler *tool.ThroughputThrottler) {
	p.events.print(p.events.event("startup_complete"))
	limit := p.maxMessages
	if limit < 0 {
		limit = 1<<63 - 1
	}
	for i := int64(0); i < limit && ctx.Err() == nil; i++ {
		sendStartMs := tool.NowMs()
		meta := sendMeta{key: p.key(), value: p.value(i)}
		msg := &sarama.ProducerMessage{Topic: p.topic, Value: sarama.StringEncoder(meta.value), Metadata: meta}
		if meta.key != nil {
			msg.Key = sarama.StringEncoder(*meta.key)
		}
		if p.createTime >= 0 {
			msg.Timestamp = time.UnixMilli(p.createTime)
			p.createTime += tool.NowMs() - p.startMs
		}
		p.numSent++
		p.inflight.Add(1)
		select {
		case producer.Input() <- msg:
		case <-ctx.Done():
			p.inflight.Done()
			p.numSent--
			return
		}
		if throttler.ShouldThrottle(i, sendStartMs) {
			throttler.Throttle(ctx)
		}
	}
}

func (p *verifiableProducer) drainSuccesses(producer sarama.AsyncProducer) {
	defer p.completionWG.Done()
	for m := range producer.Successes() {
		meta := m.Metadata.(sendMeta)
		p.mu.Lock()
		p.numAcked++
		p.mu.Unlock()
		p.events.print(p.events.event("producer_send_success").nullableStr("key", meta.key).
			str("value", meta.value).str("topic", m.Topic).num("partition", int64(m.Partition)).num("offset", m.Offset))
		p.inflight.Done()
	}
}

func (p *verifiableProducer) drainErrors(producer sarama.AsyncProducer) {
	defer p.completionWG.Done()
	for e := range producer.Errors() {
		meta := e.Msg.Metadata.(sendMeta)
		class, message := javaExceptionOf(e.Err)
		// Jackson lists FailedSend's fields (topic, key, value, exception)
		// in declaration order, then the getter-only message.
		p.events.print(p.events.event("producer_send_error").str("topic", e.Msg.Topic).nullableStr("key", meta.key).
			str("value", meta.value).str("exception", "class "+class).str("message", message))
		p.inflight.Done()
	}
}

// javaExceptionOf names the Java exception class and message a Kafka
// client would report for err.
func javaExceptionOf(err error) (class, message string) {
	var ke sarama.KError
	if errors.As(err, &ke) {
		text, ok := tool.Kafka28Errors[int16(ke)]
		if !ok {
			text = tool.Kafka28Errors[-1]
		}
		return tool.JavaExceptionClass(int16(ke)), text.Message
	}
	return "org.apache.kafka.common.KafkaException", err.Error()
}

// murmur2 is Kafka's Utils.murmur2 (seed 0x9747b28c) as a hash.Hash32, for
// Sarama's custom hash partitioner.
type murmur2 struct{ data []byte }

func newMurmur2() hash.Hash32 { return &murmur2{} }

func (m *murmur2) Write(p []byte) (int, error) { m.data = append(m.data, p...); return len(p), nil }
func (m *murmur2) Reset()                      { m.data = m.data[:0] }
func (m *murmur2) Size() int                   { return 4 }
func (m *murmur2) BlockSize() int              { return 4 }
func (m *murmur2) Sum(b []byte) []byte {
	s := m.Sum32()
	return append(b, byte(s>>24), byte(s>>16), byte(s>>8), byte(s))
}

func (m *murmur2) Sum32() uint32 {
	const (
		seed = 0x9747b28c
		mul  = 0x5bd1e995
		r    = 24
	)
	data := m.data
	n := len(data)
	h := uint32(seed) ^ uint32(n)
	for i := 0; i+4 <= n; i += 4 {
		k := uint32(data[i]) | uint32(data[i+1])<<8 | uint32(data[i+2])<<16 | uint32(data[i+3])<<24
		k *= mul
		k ^= k >> r
		k *= mul
		h *= mul
		h ^= k
	}
	tail := n &^ 3
	switch n % 4 {
	case 3:
		h ^= uint32(data[tail+2]) << 16
		fallthrough
	case 2:
		h ^= uint32(data[tail+1]) << 8
		fallthrough
	case 1:
		h ^= uint32(data[tail])
		h *= mul
	}
	h ^= h >> 13
	h *= mul
	h ^= h >> 15
	return h
}
