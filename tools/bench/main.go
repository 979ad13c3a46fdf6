package main

import (
	"context"
	"flag"
	"fmt"
	"os"
	"os/signal"
	"path/filepath"
	"strings"
	"syscall"
	"time"

	"github.com/twmb/franz-go/pkg/kgo"
)

// options of a run.
type options struct {
	samsaBin, kfakeBin, zk, work string
	out, svg                     string
	quick                        bool
	repeats                      int
	basePort                     int
	systems                      []string
	records100, records1k        int
	e2eSecs                      float64
	widePartitions               int
	txn                          bool // the transaction cells (txn.go)
	txnOnly                      bool // only those (no memory test either)
}

func main() {
	if len(os.Args) < 2 {
		fmt.Fprintln(os.Stderr, "usage: samsa-bench probe|run|rtt|e2e|produce|scale-idle|scale-series [flags]")
		os.Exit(2)
	}
	ctx, stop := signal.NotifyContext(context.Background(), syscall.SIGINT, syscall.SIGTERM)
	defer stop()
	cmd, args := os.Args[1], os.Args[2:]
	var err error
	switch cmd {
	case "probe":
		err = cmdProbe(args)
	case "rtt":
		err = cmdRTT(ctx, args)
	case "produce":
		err = cmdProduce(ctx, args)
	case "e2e":
		err = cmdE2E(ctx, args)
	case "scale-idle", "scale-series":
		// Issue 18 point 3 (docs/benchmarks.md "Cost per partition"):
		// bin/samsa-scale-benchmark.sh starts ZooKeeper and runs these.
		o := parseScaleFlags(cmd, args)
		if cmd == "scale-series" {
			err = runScaleSeries(ctx, o)
		} else {
			err = runScaleIdle(ctx, o)
		}
	case "run":
		err = run(ctx, parseRunFlags(args))
	default:
		fmt.Fprintf(os.Stderr, "samsa-bench: unknown command %q\n", cmd)
		os.Exit(2)
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
}

// cmdProbe measures and prints this machine's limits:
// samsa-bench probe [-dir d] [-secs 1] [-repeats 3].
func cmdProbe(args []string) error {
	fs := flag.NewFlagSet("probe", flag.ExitOnError)
	dir := fs.String("dir", os.TempDir(), "directory for the write probes (use the log dir's file system)")
	secs := fs.Float64("secs", 1, "seconds per probe")
	repeats := fs.Int("repeats", 3, "runs per probe (median)")
	_ = fs.Parse(args)
	l, err := probeLimits(*dir, *secs, *repeats)
	if err != nil {
		return err
	}
	fmt.Printf("loopback TCP: %.0f MiB/s\nsequential write, no fdatasync: %.0f MiB/s (recycled pages), %.0f MiB/s (new pages)\n"+
		"sequential 16 KiB writes + fdatasync each: %.1f MiB/s (%.0f syncs/s)\n",
		l.LoopbackTCP, l.WriteNoSync, l.WriteNewPage, l.WriteSync16K, l.Syncs16K)
	return nil
}

// cmdRTT measures sequential acks=all produce round trips against running
// brokers: samsa-bench rtt -bootstrap h:p -topic t [-n 2000].
func cmdRTT(ctx context.Context, args []string) error {
	fs := flag.NewFlagSet("rtt", flag.ExitOnError)
	bootstrap := fs.String("bootstrap", "localhost:23092", "brokers")
	topic := fs.String("topic", "rtt", "existing topic")
	acks := fs.String("acks", "all", "1 or all")
	n := fs.Int("n", 2000, "round trips")
	_ = fs.Parse(args)
	c := &cluster{bootstrap: *bootstrap}
	l, err := kgoRoundTrips(ctx, c, *topic, *acks, *n)
	if err != nil {
		return err
	}
	fmt.Printf("produce round trip acks=%s: p50 %.3f ms, p99 %.3f ms, p99.9 %.3f ms (%d)\n", *acks, l.P50, l.P99, l.P999, *n)
	return nil
}

// cmdProduce measures producer throughput against running brokers (for
// profiling a broker under one workload): samsa-bench produce -bootstrap
// h:p -topic t [-acks all] [-n 200000] [-size 1024].
func cmdProduce(ctx context.Context, args []string) error {
	fs := flag.NewFlagSet("produce", flag.ExitOnError)
	bootstrap := fs.String("bootstrap", "localhost:23092", "brokers")
	topic := fs.String("topic", "produce", "existing topic")
	acks := fs.String("acks", "all", "1 or all")
	n := fs.Int("n", 200000, "records")
	size := fs.Int("size", 1024, "record value bytes")
	_ = fs.Parse(args)
	c := &cluster{bootstrap: *bootstrap}
	tp, err := kgoProduce(ctx, c, *topic, *n, *size, *acks, 5*time.Minute)
	if err != nil {
		return err
	}
	fmt.Printf("produce acks=%s size=%d: %.0f records/s, %.1f MiB/s (%d)\n", *acks, *size, tp.Records, tp.MiB, *n)
	return nil
}

// cmdE2E measures end-to-end latency at a fixed rate against running
// brokers: samsa-bench e2e -bootstrap h:p -topic t [-rate 10000] [-secs 5]
// [-inflight 5].
func cmdE2E(ctx context.Context, args []string) error {
	fs := flag.NewFlagSet("e2e", flag.ExitOnError)
	bootstrap := fs.String("bootstrap", "localhost:23092", "brokers")
	topic := fs.String("topic", "e2e", "existing topic")
	acks := fs.String("acks", "all", "1 or all")
	rate := fs.Int("rate", 10000, "records per second")
	secs := fs.Float64("secs", 5, "seconds")
	inflight := fs.Int("inflight", 5, "produce requests in flight per broker")
	_ = fs.Parse(args)
	c := &cluster{bootstrap: *bootstrap}
	l, err := kgoE2E(ctx, c, *topic, *acks, *rate, time.Duration(*secs*float64(time.Second)),
		kgo.MaxProduceRequestsInflightPerBroker(*inflight))
	if err != nil {
		return err
	}
	fmt.Printf("e2e acks=%s at %d/s: p50 %.3f ms, p99 %.3f ms, p99.9 %.3f ms (%d of %d)\n", *acks, *rate, l.P50, l.P99, l.P999, l.Received, l.Sent)
	return nil
}

// parseRunFlags reads the flags of samsa-bench run (the whole side-by-side
// benchmark of bin/samsa-benchmark.sh) and fills in the defaults.
func parseRunFlags(args []string) options {
	var o options
	fs := flag.NewFlagSet("run", flag.ExitOnError)
	fs.StringVar(&o.samsaBin, "samsa", ".build/samsa", "samsa binary")
	fs.StringVar(&o.kfakeBin, "kfakepeer", ".build/kfakepeer", "kfakepeer binary")
	fs.StringVar(&o.zk, "zk", "localhost:23181", "ZooKeeper for the Samsa brokers")
	fs.StringVar(&o.work, "work", "/tmp/samsa-benchmark", "work directory (configs, log dirs, output)")
	fs.StringVar(&o.out, "out", "docs/benchmarks.md", "markdown file whose generated section is replaced")
	fs.StringVar(&o.svg, "svg", "docs/benchmarks.svg", "chart to write")
	fs.BoolVar(&o.quick, "quick", false, "one run per figure and fewer records (~3 minutes)")
	fs.IntVar(&o.repeats, "repeats", 0, "runs per figure (default 5, 1 with -quick)")
	fs.IntVar(&o.basePort, "port", 23092, "first broker port (Samsa uses 3 from here, kfake 3 from here+100)")
	systems := fs.String("systems", "samsa,kfake", "systems to measure")
	fs.IntVar(&o.records100, "records-100", 0, "records per 100-byte producer run (default 1000000, 300000 with -quick)")
	fs.IntVar(&o.records1k, "records-1k", 0, "records per 1 KiB producer run (default 200000, 60000 with -quick)")
	fs.Float64Var(&o.e2eSecs, "e2e-secs", 0, "seconds per e2e latency run (default 4, 3 with -quick)")
	fs.IntVar(&o.widePartitions, "wide-partitions", 1000, "partitions of the memory test topic")
	fs.BoolVar(&o.txn, "txn", true, "measure transactions (transactional vs idempotent produce, read_committed vs read_uncommitted)")
	fs.BoolVar(&o.txnOnly, "txn-only", false, "measure only the transactions (use with -out elsewhere: the other tables stay empty)")
	_ = fs.Parse(args)
	o.systems = strings.Split(*systems, ",")
	o.defaults()
	return o
}

func (o *options) defaults() {
	def := func(v *int, full, quick int) {
		if *v == 0 {
			*v = full
			if o.quick {
				*v = quick
			}
		}
	}
	def(&o.repeats, 5, 1)
	def(&o.records100, 1000000, 300000)
	def(&o.records1k, 200000, 60000)
	if o.e2eSecs == 0 {
		o.e2eSecs = 4
		if o.quick {
			o.e2eSecs = 3
		}
	}
}

func logf(format string, args ...any) {
	fmt.Fprintf(os.Stderr, "%s "+format+"\n", append([]any{time.Now().Format("15:04:05")}, args...)...)
}

func run(ctx context.Context, o options) error {
	res := &results{Start: time.Now(), Opts: o, LoadBefore: loadAvg(), Host: hostInfo()}
	if err := os.MkdirAll(o.work, 0o755); err != nil {
		return fmt.Errorf("bench: %w", err)
	}
	logf("probing limits")
	secs, reps := 1.0, 3
	if o.quick {
		secs, reps = 0.5, 1
	}
	l, err := probeLimits(o.work, secs, reps)
	if err != nil {
		return err
	}
	res.Limits = l
	logf("limits: loopback %.0f MiB/s, write %.0f MiB/s (new pages %.0f MiB/s), write+fdatasync/16KiB %.1f MiB/s",
		l.LoopbackTCP, l.WriteNoSync, l.WriteNewPage, l.WriteSync16K)
	for _, topo := range []topology{{1, 1}, {3, 3}} {
		if err := runTopology(ctx, o, res, topo); err != nil {
			return err
		}
	}
	for si, sys := range o.systems {
		if o.txnOnly {
			break
		}
		if err := runWide(ctx, o, res, sys, o.basePort+100*si); err != nil {
			return err
		}
	}
	res.End = time.Now()
	res.LoadAfter = loadAvg()
	if err := writeReport(o.out, res); err != nil {
		return err
	}
	if err := os.WriteFile(o.svg, []byte(renderSVG(res)), 0o644); err != nil {
		return fmt.Errorf("bench: %w", err)
	}
	logf("wrote %s and %s in %s", o.out, o.svg, res.End.Sub(res.Start).Round(time.Second))
	return nil
}

// topology is a cluster shape: broker count and replication factor.
type topology struct{ Brokers, RF int }

func (t topology) String() string { return fmt.Sprintf("%d broker(s), RF=%d", t.Brokers, t.RF) }

func spec(o options, sys string, brokers, port int, name string) clusterSpec {
	return clusterSpec{system: sys, brokers: brokers, basePort: port, samsaBin: o.samsaBin, kfakeBin: o.kfakeBin,
		zk: o.zk, work: filepath.Join(o.work, name)}
}

// benchTimeout bounds one producer or consumer run.
const benchTimeout = 120 * time.Second

// recordsPerRun is the record count of a producer or consumer run of
// records of size bytes.
func recordsPerRun(o options, size int) int {
	if size == 1024 {
		return o.records1k
	}
	return o.records100
}

// addCell logs a measured cell and adds it to the results.
func (r *results) addCell(c *cell) {
	logf("%s %s: %s", c.System, c.label(), c.summary())
	r.Cells = append(r.Cells, c)
}

// failRun records a failed run of the cell (left out of the medians).
func (c *cell) failRun(err error) {
	c.Errs = append(c.Errs, err.Error())
	logf("%s %s: %v", c.System, c.label(), err)
}

// runE2ECells measures end-to-end latency: acks=1 on RF=1; acks=all on
// RF=3 with the producer's default 5 requests in flight per broker and, to
// show what queueing behind them costs, with 1.
func runE2ECells(ctx context.Context, o options, res *results, c *cluster, sys string, topo topology) error {
	type e2eCase struct {
		acks     string
		inflight int
	}
	cases := []e2eCase{{"1", 5}}
	if topo.RF > 1 {
		cases = []e2eCase{{"all", 5}, {"all", 1}}
	}
	for _, ec := range cases {
		cell := &cell{Kind: "e2e", System: sys, Topo: topo, Size: 100, Acks: ec.acks, Client: "kgo", Inflight: ec.inflight}
		topic := fmt.Sprintf("e2e-acks%s-%d", ec.acks, ec.inflight)
		if err := c.createTopic(ctx, topic, 6, topo.RF); err != nil {
			return err
		}
		c.rss.reset()
		for range o.repeats {
			lat, err := kgoE2E(ctx, c, topic, ec.acks, 10000, time.Duration(o.e2eSecs*float64(time.Second)),
				kgo.MaxProduceRequestsInflightPerBroker(ec.inflight))
			if err != nil {
				cell.failRun(err)
				continue
			}
			cell.Lat = append(cell.Lat, lat)
		}
		cell.RSS = c.rss.maxPeak()
		res.addCell(cell)
	}
	return nil
}

// runRTTCell measures produce round trips one at a time (acks=all): the
// replication latency without any queueing.
func runRTTCell(ctx context.Context, o options, res *results, c *cluster, sys string, topo topology) error {
	cell := &cell{Kind: "rtt", System: sys, Topo: topo, Size: 100, Acks: "all", Client: "kgo", Inflight: 1}
	if err := c.createTopic(ctx, "rtt", 1, topo.RF); err != nil {
		return err
	}
	for range o.repeats {
		lat, err := kgoRoundTrips(ctx, c, "rtt", "all", 1000)
		if err != nil {
			cell.Errs = append(cell.Errs, err.Error())
			continue
		}
		cell.Lat = append(cell.Lat, lat)
	}
	res.addCell(cell)
	return nil
}

// runWide measures one broker's resident memory with a topic of
// o.widePartitions partitions: idle, then under a producer and a consumer.
func runWide(ctx context.Context, o options, res *results, sys string, port int) error {
	logf("%s: memory with %d partitions", sys, o.widePartitions)
	c, err := startCluster(ctx, spec(o, sys, 1, port, sys+"-wide"))
	if err != nil {
		return err
	}
	defer c.stop()
	m := &memCell{System: sys, Partitions: o.widePartitions, Empty: c.rss.current()}
	start := time.Now()
	if err := c.createTopic(ctx, "wide", o.widePartitions, 1); err != nil {
		return err
	}
	m.CreateSecs = time.Since(start).Seconds()
	// Idle: let the broker settle, then take the current figure.
	deadline := time.Now().Add(5 * time.Second)
	for time.Now().Before(deadline) && ctx.Err() == nil {
		time.Sleep(100 * time.Millisecond)
	}
	m.Idle = c.rss.current()
	c.rss.reset()
	n := o.records100
	t, err := kgoProduce(ctx, c, "wide", n, 100, "1", 120*time.Second, roundRobin())
	if err != nil {
		m.Errs = append(m.Errs, err.Error())
	} else {
		m.Produce = t
	}
	if t, err := kgoConsume(ctx, c, "wide", n, 120*time.Second); err != nil {
		m.Errs = append(m.Errs, err.Error())
	} else {
		m.Consume = t
	}
	m.Load = c.rss.maxPeak()
	logf("%s wide: empty %d MiB, idle %d MiB, load %d MiB", sys, m.Empty>>20, m.Idle>>20, m.Load>>20)
	res.Mem = append(res.Mem, m)
	return nil
}
