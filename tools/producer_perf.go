package tools

// kafka-producer-perf-test: produce N records of a fixed size as fast as
// allowed and report throughput and latency (Kafka 2.8 ProducerPerformance).
//
// Behaviour:
//   - --producer-props takes key=value pairs; as with Kafka they may follow
//     the flag as separate arguments ("--producer-props acks=all
//     bootstrap.servers=h:9092"); bootstrap.servers is required there or in
//     --producer.config (or use --bootstrap-server);
//   - records are random uppercase letters of --record-size bytes, or lines
//     of --payload-file picked at random;
//   - --throughput caps records per second (-1: no cap);
//   - a progress line every 5 s and a final summary, in Kafka's format;
//     latency is measured from hand-over to the producer to the ack.

import (
	"bufio"
	"fmt"
	"io"
	"math/rand"
	"os"
	"sort"
	"strings"
	"sync"
	"time"

	"github.com/IBM/sarama"
	"github.com/urfave/cli/v2"
)

func producerPerfCommand(env Env) *cli.Command {
	return &cli.Command{
		Name:  "kafka-producer-perf-test",
		Usage: "measure producer throughput and latency",
		Flags: []cli.Flag{
			&cli.StringFlag{Name: "topic", Usage: "topic to produce to (required)"},
			&cli.Int64Flag{Name: "num-records", Usage: "records to send (required)"},
			&cli.IntFlag{Name: "record-size", Usage: "bytes per record (this or --payload-file)"},
			&cli.StringFlag{Name: "payload-file", Usage: "file of newline-separated payloads"},
			&cli.Float64Flag{Name: "throughput", Value: -1, Usage: "records per second cap, -1 for none (required by Kafka)"},
			&cli.StringSliceFlag{Name: "producer-props", Usage: "producer properties key=value (more may follow as arguments)"},
			&cli.StringFlag{Name: "producer.config", Usage: "producer properties file"},
			&cli.StringFlag{Name: "bootstrap-server", Usage: "shorthand for --producer-props bootstrap.servers=..."},
		},
		Action: func(c *cli.Context) error {
			if err := runProducerPerf(c, env); err != nil {
				fmt.Fprintln(env.Stderr, err)
				return exitError{1}
			}
			return nil
		},
	}
}

// perfStats accumulates acknowledged records (Kafka's Stats class).
type perfStats struct {
	mu        sync.Mutex
	start     time.Time
	latencies []int64 // guarded by mu; sampled, ms
	sampling  int64
	count     int64 // guarded by mu
	bytes     int64 // guarded by mu
	maxLat    int64 // guarded by mu
	totalLat  int64 // guarded by mu
	window    struct {
		start                      time.Time
		count, bytes, maxLat, tLat int64
	} // guarded by mu
	out io.Writer
}

func newPerfStats(numRecords int64, out io.Writer, now time.Time) *perfStats {
	s := &perfStats{start: now, sampling: numRecords/500000 + 1, out: out}
	s.window.start = now
	return s
}

func (s *perfStats) record(iter int64, latency time.Duration, size int, now time.Time) {
	ms := latency.Milliseconds()
	s.mu.Lock()
	defer s.mu.Unlock()
	s.count++
	s.bytes += int64(size)
	s.totalLat += ms
	if ms > s.maxLat {
		s.maxLat = ms
	}
	s.window.count++
	s.window.bytes += int64(size)
	s.window.tLat += ms
	if ms > s.window.maxLat {
		s.window.maxLat = ms
	}
	if iter%s.sampling == 0 {
		s.latencies = append(s.latencies, ms)
	}
	if now.Sub(s.window.start) >= 5*time.Second {
		el := now.Sub(s.window.start).Seconds()
		fmt.Fprintf(s.out, "%d records sent, %.1f records/sec (%.2f MB/sec), %.1f ms avg latency, %.1f ms max latency.\n",
			s.window.count, float64(s.window.count)/el, float64(s.window.bytes)/el/(1024*1024),
			float64(s.window.tLat)/float64(s.window.count), float64(s.window.maxLat))
		s.window.start, s.window.count, s.window.bytes, s.window.maxLat, s.window.tLat = now, 0, 0, 0, 0
	}
}

func (s *perfStats) summary(now time.Time) string {
	s.mu.Lock()
	defer s.mu.Unlock()
	el := now.Sub(s.start).Seconds()
	if el <= 0 {
		el = 1e-9
	}
	sort.Slice(s.latencies, func(i, j int) bool { return s.latencies[i] < s.latencies[j] })
	pct := func(p float64) int64 {
		if len(s.latencies) == 0 {
			return 0
		}
		return s.latencies[int(p*float64(len(s.latencies)-1))]
	}
	avg := 0.0
	if s.count > 0 {
		avg = float64(s.totalLat) / float64(s.count)
	}
	return fmt.Sprintf("%d records sent, %f records/sec (%.2f MB/sec), %.2f ms avg latency, %.2f ms max latency, %d ms 50th, %d ms 95th, %d ms 99th, %d ms 99.9th.\n",
		s.count, float64(s.count)/el, float64(s.bytes)/el/(1024*1024), avg, float64(s.maxLat), pct(0.5), pct(0.95), pct(0.99), pct(0.999))
}

func runProducerPerf(c *cli.Context, env Env) error {
	topic, n, size := c.String("topic"), c.Int64("num-records"), c.Int("record-size")
	if topic == "" || n <= 0 {
		return toolError("Missing required argument: --topic and a positive --num-records are required")
	}
	if (size > 0) == (c.String("payload-file") != "") {
		return toolError("Either --record-size or --payload-file must be specified but not both.")
	}
	propArgs := append([]string{}, c.StringSlice("producer-props")...)
	propArgs = append(propArgs, c.Args().Slice()...)
	props, err := parsePropertyArgs(propArgs)
	if err != nil {
		return err
	}
	servers := props["bootstrap.servers"]
	if s := c.String("bootstrap-server"); s != "" {
		servers = s
	}
	if cfgFile := c.String("producer.config"); cfgFile != "" && servers == "" {
		return toolError("bootstrap.servers must be given in --producer-props or --bootstrap-server")
	}
	if servers == "" {
		return toolError("Missing required argument: bootstrap.servers in --producer-props")
	}
	cfg, err := newSaramaConfig("perf-producer-client", c.String("producer.config"), props)
	if err != nil {
		return err
	}
	cfg.Producer.Return.Successes = true
	cfg.Producer.Return.Errors = true
	payloads, err := perfPayloads(c.String("payload-file"), size)
	if err != nil {
		return err
	}
	p, err := sarama.NewAsyncProducer(splitServers(servers), cfg)
	if err != nil {
		return err
	}
	stats := newPerfStats(n, env.Stdout, time.Now())
	type sent struct {
		iter int64
		at   time.Time
		size int
	}
	var failed int64
	var wg sync.WaitGroup
	wg.Add(2)
	go func() {
		defer wg.Done()
		for m := range p.Successes() {
			s := m.Metadata.(sent)
			now := time.Now()
			stats.record(s.iter, now.Sub(s.at), s.size, now)
		}
	}()
	go func() {
		defer wg.Done()
		for e := range p.Errors() {
			failed++
			if failed <= 10 {
				fmt.Fprintln(env.Stderr, sendError(e.Msg, e.Err))
			}
		}
	}()
	throughput := c.Float64("throughput")
	throttle := time.NewTimer(time.Hour)
	if !throttle.Stop() {
		<-throttle.C
	}
	start := time.Now()
	rnd := rand.New(rand.NewSource(time.Now().UnixNano()))
	for i := int64(0); i < n; i++ {
		payload := payloads[rnd.Intn(len(payloads))]
		p.Input() <- &sarama.ProducerMessage{Topic: topic, Value: sarama.ByteEncoder(payload), Metadata: sent{iter: i, at: time.Now(), size: len(payload)}}
		if throughput > 0 {
			// Throttle: sleep until the schedule for record i+1.
			due := start.Add(time.Duration(float64(i+1) / throughput * float64(time.Second)))
			if d := time.Until(due); d > 0 {
				throttle.Reset(d)
				<-throttle.C
			}
		}
	}
	p.AsyncClose()
	wg.Wait()
	io.WriteString(env.Stdout, stats.summary(time.Now()))
	if failed > 0 {
		return toolErrorf("%d records failed", failed)
	}
	return nil
}

// perfPayloads returns the payloads to pick from: one random record of size
// bytes (uppercase letters, as Kafka), or the lines of file.
func perfPayloads(file string, size int) ([][]byte, error) {
	if file == "" {
		b := make([]byte, size)
		for i := range b {
			b[i] = byte('A' + rand.Intn(26))
		}
		return [][]byte{b}, nil
	}
	f, err := os.Open(file)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	var out [][]byte
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 64*1024), maxConsoleLine)
	for sc.Scan() {
		if line := strings.TrimSpace(sc.Text()); line != "" {
			out = append(out, []byte(line))
		}
	}
	if err := sc.Err(); err != nil {
		return nil, err
	}
	if len(out) == 0 {
		return nil, toolErrorf("File is empty: %s", file)
	}
	return out, nil
}
