package main

import (
	"context"
	"encoding/binary"
	"errors"
	"flag"
	"fmt"
	"io"
	"net"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/twmb/franz-go/pkg/kgo"
)

// scaleOptions are the flags of the scale-idle and scale-series
// measurements (issue 18 point 3, docs/benchmarks.md "Cost per partition").
type scaleOptions struct {
	samsaBin, zk, work string
	// system is "samsa" (three broker processes) or "kfake" (one
	// kfakepeer process serving three brokers, which replicates and
	// writes nothing): the same client against kfake shows what the
	// client alone allows at a partition count.
	system, kfakeBin    string
	basePort, pprofPort int
	// scale-idle
	partitions, perTopic int
	settle, window       time.Duration
	conns                int
	profile              time.Duration
	// scale-series
	counts      []int
	totalMiB    int
	size        int
	partitioner string
	// batchMax caps the client's batch bytes (0: franz-go's 1 MB), so a
	// run at few partitions can make the batches a run at many makes.
	batchMax int
	warm     bool
	// acks cycles over the runs (run i uses acks[i%len(acks)]), so one
	// invocation can interleave acks=1 and acks=all at the same count.
	acks []string
	// keep leaves each run's log dirs on disk; by default a run's dir is
	// removed once it ends, so a long series needs one run's bytes of disk.
	keep bool
}

func parseScaleFlags(name string, args []string) scaleOptions {
	var o scaleOptions
	fs := flag.NewFlagSet(name, flag.ExitOnError)
	fs.StringVar(&o.samsaBin, "samsa", ".build/samsa", "samsa binary")
	fs.StringVar(&o.system, "system", "samsa", "scale-series: samsa, or kfake (one kfakepeer process, no replication and no disk: the client's own bound at each count)")
	fs.StringVar(&o.kfakeBin, "kfakepeer", ".build/kfakepeer", "kfakepeer binary (-system kfake)")
	fs.StringVar(&o.zk, "zk", "localhost:23281", "ZooKeeper for the Samsa brokers")
	fs.StringVar(&o.work, "work", "/tmp/samsa-scale-benchmark", "work directory (configs, log dirs, output)")
	fs.IntVar(&o.basePort, "port", 23392, "first broker port (3 brokers from here)")
	fs.IntVar(&o.pprofPort, "pprof-port", 0, "serve each broker's /debug/pprof on 127.0.0.1 from this port (0: off)")
	fs.IntVar(&o.partitions, "partitions", 10000, "scale-idle: partitions at RF 3")
	fs.IntVar(&o.perTopic, "per-topic", 100, "scale-idle: partitions per topic")
	fs.DurationVar(&o.settle, "settle", 20*time.Second, "scale-idle: wait after every partition is led, before measuring")
	fs.DurationVar(&o.window, "window", 20*time.Second, "scale-idle: CPU measurement window")
	fs.IntVar(&o.conns, "conns", 10000, "scale-idle: idle client connections held by one broker (0: skip)")
	fs.DurationVar(&o.profile, "profile", 0, "scale-idle: after the window, take a CPU profile of this length from the first broker; scale-series: a CPU profile of this length from the start of each produce and consume, and goroutine dumps each second of them (needs -pprof-port)")
	counts := fs.String("counts", "6,600,6000,12000,6", "scale-series: partition counts, one fresh cluster each, in this order")
	fs.IntVar(&o.totalMiB, "total-mib", 64, "scale-series: MiB of record values produced and consumed per run")
	fs.IntVar(&o.size, "size", 1024, "scale-series: record value bytes")
	fs.IntVar(&o.batchMax, "batch-max-bytes", 0, "scale-series: the producer's batch size cap (0: franz-go's default 1 MB); 65536 makes the batches at 6 partitions what the uniform partitioner makes at 12,000")
	fs.BoolVar(&o.warm, "warm", false, "scale-series: before the timed run, produce one record to every partition (untimed), so that no partition's first append falls in the timed run (before issue 18 it wrote and fsynced the leader-epoch-checkpoint, on the leader and each follower)")
	fs.StringVar(&o.partitioner, "partitioner", "uniform", "scale-series: uniform (franz-go's default for unkeyed records, KIP-794: switch partition every 64 KiB, so at 12,000 partitions every batch is 64 KiB), sticky (Kafka 2.8's KIP-480 default: switch when the partition's batch is sent, so batches grow as at few partitions) or roundrobin")
	acks := fs.String("acks", "all", "scale-series: producer acks, a comma list cycled over the runs (-counts 6,6,6,6 -acks 1,all interleaves them); ratios are against the runs at the smallest count with the first acks")
	fs.BoolVar(&o.keep, "keep", false, "scale-series: keep each run's log dirs (by default removed when the run ends, unless -profile wrote its profiles there)")
	_ = fs.Parse(args)
	for _, a := range strings.Split(*acks, ",") {
		if a = strings.TrimSpace(a); a != "all" && a != "1" {
			fmt.Fprintf(os.Stderr, "samsa-bench %s: -acks takes all or 1, not %q\n", name, a)
			os.Exit(2)
		}
		o.acks = append(o.acks, strings.TrimSpace(a))
	}
	for _, s := range strings.Split(*counts, ",") {
		n, err := strconv.Atoi(strings.TrimSpace(s))
		if err != nil || n <= 0 {
			fmt.Fprintf(os.Stderr, "samsa-bench %s: bad partition count %q\n", name, s)
			os.Exit(2)
		}
		o.counts = append(o.counts, n)
	}
	return o
}

func (o scaleOptions) spec(name string) clusterSpec {
	return clusterSpec{system: o.system, brokers: 3, basePort: o.basePort, samsaBin: o.samsaBin, kfakeBin: o.kfakeBin, zk: o.zk,
		work: filepath.Join(o.work, name), pprofPort: o.pprofPort}
}

// runScaleIdle measures, on three fresh broker processes: the resident
// memory of one broker holding o.conns idle client connections (each has
// sent one ApiVersions); then, with o.partitions partitions at RF 3 and no
// traffic, each broker's CPU over o.window, its RSS and open files per
// replica.
func runScaleIdle(ctx context.Context, o scaleOptions) error {
	limit, err := raiseNofile()
	if err != nil {
		return err
	}
	logf("open-file limit %d; load average %s", limit, loadAvg())
	if err := os.RemoveAll(filepath.Join(o.work, "idle")); err != nil {
		return fmt.Errorf("bench: %w", err)
	}
	c, err := startCluster(ctx, o.spec("idle"))
	if err != nil {
		return err
	}
	defer c.stop()
	first := c.procs[0].cmd.Process.Pid

	if o.conns > 0 {
		rss0, fd0 := readRSS(first), must(openFiles(first))
		start := time.Now()
		conns, err := holdConns(ctx, fmt.Sprintf("127.0.0.1:%d", o.basePort), o.conns)
		defer func() {
			for _, cn := range conns {
				cn.Close()
			}
		}()
		if err != nil {
			return err
		}
		opened := time.Since(start)
		cpu0 := must(cpuSeconds(first))
		t0 := time.Now()
		sleepCtx(ctx, 10*time.Second)
		cpu := (must(cpuSeconds(first)) - cpu0) / time.Since(t0).Seconds()
		rss1, fd1 := readRSS(first), must(openFiles(first))
		fmt.Printf("idle connections: %d opened in %s from 127.0.0.2-251; broker 1 RSS %s before, %s holding them (%.1f KiB per connection); "+
			"open files %d before, %d holding them; CPU %.2f %% of a core over 10 s\n",
			len(conns), opened.Round(time.Millisecond), humanMiB(rss0), humanMiB(rss1), float64(rss1-rss0)/1024/float64(len(conns)), fd0, fd1, 100*cpu)
		for _, cn := range conns {
			cn.Close()
		}
		conns = nil
	}

	var names []string
	for i := range (o.partitions + o.perTopic - 1) / o.perTopic {
		names = append(names, fmt.Sprintf("idle%04d", i))
	}
	total := len(names) * o.perTopic
	start := time.Now()
	if err := c.createTopics(ctx, names, o.perTopic, 3, 10); err != nil {
		return err
	}
	replicas, err := c.waitLed(ctx, names, total, 3, 15*time.Minute)
	if err != nil {
		return err
	}
	logf("%d partitions (RF 3) led with ISR 3 in %s; settling %s", total, time.Since(start).Round(100*time.Millisecond), o.settle)
	sleepCtx(ctx, o.settle)
	cpu0 := make([]float64, len(c.procs))
	for i, p := range c.procs {
		cpu0[i] = must(cpuSeconds(p.cmd.Process.Pid))
	}
	t0 := time.Now()
	sleepCtx(ctx, o.window)
	secs := time.Since(t0).Seconds()
	fmt.Printf("idle with %d partitions, RF 3 (load average %s):\n", total, loadAvg())
	for i, p := range c.procs {
		pid := p.cmd.Process.Pid
		cpu := (must(cpuSeconds(pid)) - cpu0[i]) / secs
		rss, fds := readRSS(pid), must(openFiles(pid))
		n := replicas[int32(i+1)]
		fmt.Printf("  broker %d: CPU %.2f %% of a core over %.0f s; RSS %s (%.1f KiB per replica); %d open files for %d replicas (%.3f per replica)\n",
			i+1, 100*cpu, secs, humanMiB(rss), float64(rss)/1024/float64(max(n, 1)), fds, n, float64(fds)/float64(max(n, 1)))
	}
	if o.profile > 0 && o.pprofPort > 0 {
		path := filepath.Join(o.work, "idle", "broker-1-cpu.pprof")
		if err := fetchProfile(ctx, fmt.Sprintf("http://127.0.0.1:%d/debug/pprof/profile?seconds=%d", o.pprofPort, int(o.profile.Seconds())), path); err != nil {
			return err
		}
		fmt.Printf("CPU profile of broker 1 over %s: %s (go tool pprof -top %s %s)\n", o.profile, path, o.samsaBin, path)
	}
	return nil
}

// holdConns opens n TCP connections to addr from local addresses
// 127.0.0.2-251 (so no one source address runs out of ephemeral ports),
// each sending one ApiVersions and reading its answer, on 16 workers.
func holdConns(ctx context.Context, addr string, n int) ([]net.Conn, error) {
	conns := make([]net.Conn, n)
	var wg sync.WaitGroup
	var mu sync.Mutex
	var firstErr error
	next := make(chan int)
	for range 16 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range next {
				cn, err := openIdleConn(ctx, addr, i)
				mu.Lock()
				if err != nil && firstErr == nil {
					firstErr = fmt.Errorf("bench: connection %d: %w", i, err)
				}
				conns[i] = cn
				mu.Unlock()
			}
		}()
	}
	for i := range n {
		mu.Lock()
		failed := firstErr != nil
		mu.Unlock()
		if failed || ctx.Err() != nil {
			break
		}
		next <- i
	}
	close(next)
	wg.Wait()
	var held []net.Conn
	for _, cn := range conns {
		if cn != nil {
			held = append(held, cn)
		}
	}
	if firstErr == nil && ctx.Err() != nil {
		firstErr = ctx.Err()
	}
	return held, firstErr
}

func openIdleConn(ctx context.Context, addr string, i int) (net.Conn, error) {
	d := net.Dialer{Timeout: 30 * time.Second, LocalAddr: &net.TCPAddr{IP: net.IPv4(127, 0, 0, byte(2+i%250))}}
	cn, err := d.DialContext(ctx, "tcp", addr)
	if err != nil {
		return nil, err
	}
	_ = cn.SetDeadline(time.Now().Add(30 * time.Second))
	corr := int32(i)
	if _, err := cn.Write(apiVersionsFrame(corr)); err != nil {
		cn.Close()
		return nil, err
	}
	var hdr [8]byte
	if _, err := io.ReadFull(cn, hdr[:]); err != nil {
		cn.Close()
		return nil, err
	}
	size := int32(binary.BigEndian.Uint32(hdr[:4]))
	if got := int32(binary.BigEndian.Uint32(hdr[4:])); got != corr || size < 4 || size > 1<<20 {
		cn.Close()
		return nil, fmt.Errorf("ApiVersions answer with size %d, correlation id %d (want %d)", size, got, corr)
	}
	if _, err := io.CopyN(io.Discard, cn, int64(size-4)); err != nil {
		cn.Close()
		return nil, err
	}
	_ = cn.SetDeadline(time.Time{})
	return cn, nil
}

func fetchProfile(ctx context.Context, url, path string) error {
	f, err := os.Create(path)
	if err != nil {
		return fmt.Errorf("bench: %w", err)
	}
	if err := copyURL(ctx, url, f); err != nil {
		f.Close()
		return fmt.Errorf("bench: profile: %w", err)
	}
	return f.Close()
}

// seriesRun is one partition count of the throughput series.
type seriesRun struct {
	partitions       int
	acks             string
	create           time.Duration
	produce, consume throughput
	// produceCPU and consumeCPU are the three brokers' CPU during each
	// phase, in cores; produceClient is the producing client's (this
	// process's), which shares the machine's cores with them.
	produceCPU, consumeCPU, produceClient float64
	peakRSS                               int64
}

// runScaleSeries produces and then consumes the same o.totalMiB of
// o.size-byte records, with the acks of o.acks, to one topic of N partitions at RF 3, for
// each N of o.counts, each on three fresh broker processes, and prints each
// run's throughput against the mean of the runs at the smallest count.
func runScaleSeries(ctx context.Context, o scaleOptions) error {
	if _, err := raiseNofile(); err != nil {
		return err
	}
	n := (o.totalMiB << 20) / o.size
	var extra []kgo.Opt
	switch o.partitioner {
	case "uniform":
	case "sticky":
		extra = append(extra, kgo.RecordPartitioner(kgo.StickyPartitioner()))
	case "roundrobin":
		extra = append(extra, roundRobin())
	default:
		return errors.New("bench: -partitioner is uniform, sticky or roundrobin")
	}
	if o.batchMax > 0 {
		extra = append(extra, kgo.ProducerBatchMaxBytes(int32(o.batchMax)))
	}
	logf("series: %d records of %d B (%d MiB) per run, acks %s, RF 3, %s partitioner, batch cap %d B (0: 1 MB), warm-up %v; load average %s",
		n, o.size, o.totalMiB, strings.Join(o.acks, ","), o.partitioner, o.batchMax, o.warm, loadAvg())
	var runs []seriesRun
	for i, count := range o.counts {
		name := fmt.Sprintf("series-%d-%d", i, count)
		if err := os.RemoveAll(filepath.Join(o.work, name)); err != nil {
			return fmt.Errorf("bench: %w", err)
		}
		r, err := seriesOne(ctx, o, name, count, o.acks[i%len(o.acks)], n, extra)
		if err != nil {
			return err
		}
		if !o.keep && o.profile == 0 {
			if err := os.RemoveAll(filepath.Join(o.work, name)); err != nil {
				return fmt.Errorf("bench: %w", err)
			}
		}
		runs = append(runs, r)
		logf("%d partitions, acks=%s: created in %s; produce %.1f MiB/s (brokers %.2f cores, client %.2f), consume %.1f MiB/s (brokers %.2f cores); peak broker RSS %s (load average %s)",
			count, r.acks, r.create.Round(100*time.Millisecond), r.produce.MiB, r.produceCPU, r.produceClient, r.consume.MiB, r.consumeCPU, humanMiB(r.peakRSS), loadAvg())
	}
	smallest := o.counts[0]
	for _, c := range o.counts {
		smallest = min(smallest, c)
	}
	var baseP, baseC float64
	var nb int
	for _, r := range runs {
		if r.partitions == smallest && r.acks == o.acks[0] {
			baseP += r.produce.MiB
			baseC += r.consume.MiB
			nb++
		}
	}
	baseP, baseC = baseP/float64(nb), baseC/float64(nb)
	fmt.Printf("| partitions | acks | create until led, ISR 3 | produce MiB/s | × %d acks=%s | consume MiB/s | × %d acks=%s | broker CPU, produce / consume (cores) | client CPU, produce (cores) | broker ms·core per produced MiB | peak broker RSS |\n|---|---|---|---|---|---|---|---|---|---|---|\n", smallest, o.acks[0], smallest, o.acks[0])
	for _, r := range runs {
		fmt.Printf("| %d | %s | %.1f s | %.1f | %.2f | %.1f | %.2f | %.2f / %.2f | %.2f | %.1f | %s |\n", r.partitions, r.acks, r.create.Seconds(),
			r.produce.MiB, r.produce.MiB/baseP, r.consume.MiB, r.consume.MiB/baseC, r.produceCPU, r.consumeCPU, r.produceClient,
			1000*r.produceCPU/r.produce.MiB, humanMiB(r.peakRSS))
	}
	return nil
}

func seriesOne(ctx context.Context, o scaleOptions, name string, count int, acks string, n int, extra []kgo.Opt) (seriesRun, error) {
	r := seriesRun{partitions: count, acks: acks}
	c, err := startCluster(ctx, o.spec(name))
	if err != nil {
		return r, err
	}
	defer c.stop()
	start := time.Now()
	if err := c.createTopics(ctx, []string{"series"}, count, 3, 1); err != nil {
		return r, err
	}
	if _, err := c.waitLed(ctx, []string{"series"}, count, 3, 15*time.Minute); err != nil {
		return r, err
	}
	r.create = time.Since(start)
	if o.warm {
		if _, err := kgoProduce(ctx, c, "series", count, o.size, "all", 10*time.Minute, roundRobin()); err != nil {
			return r, err
		}
	}
	c.rss.reset()
	dir := filepath.Join(o.work, name)
	w := watchPhase(ctx, o, c, dir, "produce")
	if r.produce, err = kgoProduce(ctx, c, "series", n, o.size, acks, 10*time.Minute, extra...); err != nil {
		return r, err
	}
	if r.produceCPU, r.produceClient, err = w.end(); err != nil {
		return r, err
	}
	// The consumer reads from the start: with -warm it reads the warm-up
	// records too, then stops at n (the same total as without).
	w = watchPhase(ctx, o, c, dir, "consume")
	if r.consume, err = kgoConsume(ctx, c, "series", n, 10*time.Minute); err != nil {
		return r, err
	}
	if r.consumeCPU, _, err = w.end(); err != nil {
		return r, err
	}
	r.peakRSS = c.rss.maxPeak()
	return r, nil
}

// sleepCtx waits d or until ctx ends. The scale measurements use it only
// for their measurement windows (a window is a span of time, not a
// condition to wait for).
func sleepCtx(ctx context.Context, d time.Duration) {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-ctx.Done():
	case <-t.C:
	}
}

func humanMiB(b int64) string { return fmt.Sprintf("%.0f MiB", float64(b)/(1<<20)) }

// must returns v, or panics on err: the scale measurements read /proc of
// their own children, which fails only when a broker died (and then the
// run is void). A panic still runs the deferred cluster stop.
func must[T any](v T, err error) T {
	if err != nil {
		panic(err)
	}
	return v
}
