package main

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kmsg"
)

// cluster is a set of broker processes started by this program: Samsa
// brokers (one process each) or one kfakepeer process serving every broker.
type cluster struct {
	system    string // "samsa" or "kfake"
	brokers   int
	bootstrap string
	procs     []*proc
	rss       *rssSampler
}

// proc is a child process and a channel closed when it has exited.
type proc struct {
	cmd  *exec.Cmd
	done chan struct{}
}

// clusterSpec says how to start a cluster.
type clusterSpec struct {
	system   string
	brokers  int
	basePort int
	work     string // directory for configs, log dirs and process output
	samsaBin string
	kfakeBin string
	zk       string // ZooKeeper connect string (Samsa only)
	// pprofPort, when > 0, gives Samsa broker i SAMSA_PPROF_ADDR
	// 127.0.0.1:pprofPort+i (the scale measurements profile idle CPU).
	pprofPort int
}

func startCluster(ctx context.Context, s clusterSpec) (*cluster, error) {
	c := &cluster{system: s.system, brokers: s.brokers}
	var addrs []string
	for i := range s.brokers {
		addrs = append(addrs, fmt.Sprintf("localhost:%d", s.basePort+i))
	}
	c.bootstrap = strings.Join(addrs, ",")
	if err := os.MkdirAll(s.work, 0o755); err != nil {
		return nil, fmt.Errorf("bench: %w", err)
	}
	switch s.system {
	case "samsa":
		chroot := fmt.Sprintf("/samsa-bench-%d", time.Now().UnixNano())
		for i := range s.brokers {
			props := filepath.Join(s.work, fmt.Sprintf("server-%d.properties", i+1))
			cfg := fmt.Sprintf(`broker.id=%d
listeners=PLAINTEXT://localhost:%d
log.dirs=%s
zookeeper.connect=%s%s
num.partitions=6
offsets.topic.replication.factor=%d
transaction.state.log.replication.factor=%d
transaction.state.log.min.isr=1
group.initial.rebalance.delay.ms=0
auto.create.topics.enable=true
log.segment.delete.delay.ms=1000
`, i+1, s.basePort+i, filepath.Join(s.work, fmt.Sprintf("logs-%d", i+1)), s.zk, chroot, s.brokers, s.brokers)
			if err := os.WriteFile(props, []byte(cfg), 0o644); err != nil {
				return nil, fmt.Errorf("bench: %w", err)
			}
			var env []string
			if s.pprofPort > 0 {
				env = append(env, fmt.Sprintf("SAMSA_PPROF_ADDR=127.0.0.1:%d", s.pprofPort+i))
			}
			cmd, err := startProcess(s.samsaBin, filepath.Join(s.work, fmt.Sprintf("server-%d.out", i+1)), env, "kafka-server-start", props)
			if err != nil {
				c.stop()
				return nil, err
			}
			c.procs = append(c.procs, cmd)
		}
	case "kfake":
		var ports []string
		for i := range s.brokers {
			ports = append(ports, strconv.Itoa(s.basePort+i))
		}
		cmd, err := startProcess(s.kfakeBin, filepath.Join(s.work, "kfakepeer.out"), nil, "-ports", strings.Join(ports, ","))
		if err != nil {
			return nil, err
		}
		c.procs = append(c.procs, cmd)
	default:
		return nil, fmt.Errorf("bench: unknown system %q", s.system)
	}
	var pids []int
	for _, p := range c.procs {
		pids = append(pids, p.cmd.Process.Pid)
	}
	c.rss = newRSSSampler(pids)
	if err := c.waitReady(ctx, 90*time.Second); err != nil {
		c.stop()
		return nil, err
	}
	return c, nil
}

// startProcess starts bin with args and this process's environment plus
// env, its output appended to out.
func startProcess(bin, out string, env []string, args ...string) (*proc, error) {
	f, err := os.Create(out)
	if err != nil {
		return nil, fmt.Errorf("bench: %w", err)
	}
	cmd := exec.Command(bin, args...)
	if len(env) > 0 {
		cmd.Env = append(os.Environ(), env...)
	}
	cmd.Stdout, cmd.Stderr = f, f
	if err := cmd.Start(); err != nil {
		f.Close()
		return nil, fmt.Errorf("bench: start %s: %w", bin, err)
	}
	f.Close() // the child keeps its copy
	p := &proc{cmd: cmd, done: make(chan struct{})}
	go func() { _ = cmd.Wait(); close(p.done) }()
	return p, nil
}

// stop sends SIGTERM to every process this cluster started, waits up to
// 30 s each, then kills what is left.
func (c *cluster) stop() {
	if c.rss != nil {
		c.rss.close()
	}
	for _, p := range c.procs {
		_ = p.cmd.Process.Signal(syscall.SIGTERM)
	}
	for _, p := range c.procs {
		select {
		case <-p.done:
		case <-time.After(30 * time.Second):
			_ = p.cmd.Process.Kill()
			<-p.done
		}
	}
	c.procs = nil
}

func (c *cluster) client(opts ...kgo.Opt) (*kgo.Client, error) {
	return kgo.NewClient(append([]kgo.Opt{kgo.SeedBrokers(strings.Split(c.bootstrap, ",")...)}, opts...)...)
}

// waitReady polls Metadata until every broker is listed and a controller
// is known.
func (c *cluster) waitReady(ctx context.Context, limit time.Duration) error {
	cl, err := c.client()
	if err != nil {
		return err
	}
	defer cl.Close()
	deadline := time.Now().Add(limit)
	var last error
	for time.Now().Before(deadline) {
		for _, p := range c.procs {
			select {
			case <-p.done:
				return fmt.Errorf("bench: %s process %s exited", c.system, p.cmd.Path)
			default:
			}
		}
		rctx, cancel := context.WithTimeout(ctx, 2*time.Second)
		resp, err := kmsg.NewPtrMetadataRequest().RequestWith(rctx, cl)
		cancel()
		switch {
		case err != nil:
			last = err
		case len(resp.Brokers) == c.brokers && resp.ControllerID >= 0:
			return nil
		default:
			last = fmt.Errorf("%d of %d brokers, controller %d", len(resp.Brokers), c.brokers, resp.ControllerID)
		}
		time.Sleep(200 * time.Millisecond)
	}
	return fmt.Errorf("bench: %s cluster not ready after %s: %v", c.system, limit, last)
}

// createTopic creates a topic and waits until every partition has a leader
// and a full ISR.
func (c *cluster) createTopic(ctx context.Context, name string, partitions, rf int) error {
	cl, err := c.client()
	if err != nil {
		return err
	}
	defer cl.Close()
	req := kmsg.NewPtrCreateTopicsRequest()
	t := kmsg.NewCreateTopicsRequestTopic()
	t.Topic, t.NumPartitions, t.ReplicationFactor = name, int32(partitions), int16(rf)
	req.Topics = append(req.Topics, t)
	req.TimeoutMillis = 60000
	resp, err := req.RequestWith(ctx, cl)
	if err != nil {
		return fmt.Errorf("bench: create %s: %w", name, err)
	}
	if code := resp.Topics[0].ErrorCode; code != 0 && code != 36 { // 36 TOPIC_ALREADY_EXISTS
		return fmt.Errorf("bench: create %s: error code %d", name, code)
	}
	deadline := time.Now().Add(120 * time.Second)
	for time.Now().Before(deadline) {
		mreq := kmsg.NewPtrMetadataRequest()
		mt := kmsg.NewMetadataRequestTopic()
		mt.Topic = kmsg.StringPtr(name)
		mreq.Topics = append(mreq.Topics, mt)
		mresp, err := mreq.RequestWith(ctx, cl)
		if err == nil && len(mresp.Topics) == 1 && len(mresp.Topics[0].Partitions) == partitions {
			ok := true
			for _, p := range mresp.Topics[0].Partitions {
				if p.ErrorCode != 0 || p.Leader < 0 || len(p.ISR) < rf {
					ok = false
					break
				}
			}
			if ok {
				return nil
			}
		}
		time.Sleep(200 * time.Millisecond)
	}
	return errors.New("bench: topic " + name + " has no leaders or full ISR after 120s")
}

// deleteTopic deletes a topic (freeing kfake's memory and Samsa's log
// dirs between runs); errors are ignored, the topic names are unique.
func (c *cluster) deleteTopic(ctx context.Context, name string) {
	cl, err := c.client()
	if err != nil {
		return
	}
	defer cl.Close()
	req := kmsg.NewPtrDeleteTopicsRequest()
	req.TopicNames = []string{name}
	t := kmsg.NewDeleteTopicsRequestTopic()
	t.Topic = kmsg.StringPtr(name)
	req.Topics = append(req.Topics, t)
	req.TimeoutMillis = 30000
	_, _ = req.RequestWith(ctx, cl)
}

// rssSampler reads VmRSS of a set of processes every 100 ms and keeps each
// one's peak since the last reset.
type rssSampler struct {
	mu    sync.Mutex
	pids  []int
	peak  map[int]int64
	stopc chan struct{}
	done  chan struct{}
}

func newRSSSampler(pids []int) *rssSampler {
	r := &rssSampler{pids: pids, peak: map[int]int64{}, stopc: make(chan struct{}), done: make(chan struct{})}
	go func() {
		defer close(r.done)
		t := time.NewTicker(100 * time.Millisecond)
		defer t.Stop()
		for {
			r.sample()
			select {
			case <-r.stopc:
				return
			case <-t.C:
			}
		}
	}()
	return r
}

func (r *rssSampler) sample() {
	for _, pid := range r.pids {
		v := readRSS(pid)
		r.mu.Lock()
		if v > r.peak[pid] {
			r.peak[pid] = v
		}
		r.mu.Unlock()
	}
}

// reset starts a new peak window.
func (r *rssSampler) reset() {
	r.mu.Lock()
	clear(r.peak)
	r.mu.Unlock()
	r.sample()
}

// maxPeak returns the largest per-process peak (bytes) of the window.
func (r *rssSampler) maxPeak() int64 {
	r.sample()
	r.mu.Lock()
	defer r.mu.Unlock()
	var m int64
	for _, v := range r.peak {
		m = max(m, v)
	}
	return m
}

// current returns the largest current RSS among the processes.
func (r *rssSampler) current() int64 {
	var m int64
	for _, pid := range r.pids {
		m = max(m, readRSS(pid))
	}
	return m
}

func (r *rssSampler) close() {
	close(r.stopc)
	<-r.done
}

// readRSS returns VmRSS of pid in bytes, 0 when unknown.
func readRSS(pid int) int64 {
	f, err := os.Open(fmt.Sprintf("/proc/%d/status", pid))
	if err != nil {
		return 0
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		if rest, ok := strings.CutPrefix(sc.Text(), "VmRSS:"); ok {
			fields := strings.Fields(rest)
			if len(fields) >= 1 {
				kb, _ := strconv.ParseInt(fields[0], 10, 64)
				return kb << 10
			}
		}
	}
	return 0
}

// createTopics creates topics of partitions each at RF rf, perRequest
// topics per CreateTopics request (the scale measurements create 10,000
// partitions as 100 topics), without waiting for leaders: waitLed does.
func (c *cluster) createTopics(ctx context.Context, names []string, partitions, rf, perRequest int) error {
	cl, err := c.client(kgo.RequestTimeoutOverhead(5 * time.Minute))
	if err != nil {
		return err
	}
	defer cl.Close()
	for len(names) > 0 {
		batch := names[:min(perRequest, len(names))]
		names = names[len(batch):]
		req := kmsg.NewPtrCreateTopicsRequest()
		for _, name := range batch {
			t := kmsg.NewCreateTopicsRequestTopic()
			t.Topic, t.NumPartitions, t.ReplicationFactor = name, int32(partitions), int16(rf)
			req.Topics = append(req.Topics, t)
		}
		req.TimeoutMillis = 120000
		resp, err := req.RequestWith(ctx, cl)
		if err != nil {
			return fmt.Errorf("bench: create %d topics: %w", len(batch), err)
		}
		for _, t := range resp.Topics {
			// 7 REQUEST_TIMED_OUT: created in ZooKeeper, not yet all led
			// within the request's timeout; waitLed waits for the rest.
			if t.ErrorCode != 0 && t.ErrorCode != 36 && t.ErrorCode != 7 { // 36 TOPIC_ALREADY_EXISTS
				return fmt.Errorf("bench: create %s: error code %d", t.Topic, t.ErrorCode)
			}
		}
	}
	return nil
}

// waitLed polls one Metadata request for topics every second until every
// one of their want partitions has a leader and rf ISR members, up to
// limit, and returns the replicas each broker id holds.
func (c *cluster) waitLed(ctx context.Context, topics []string, want, rf int, limit time.Duration) (map[int32]int, error) {
	cl, err := c.client(kgo.RequestTimeoutOverhead(time.Minute))
	if err != nil {
		return nil, err
	}
	defer cl.Close()
	deadline := time.Now().Add(limit)
	var last string
	for time.Now().Before(deadline) {
		req := kmsg.NewPtrMetadataRequest()
		for _, name := range topics {
			t := kmsg.NewMetadataRequestTopic()
			t.Topic = kmsg.StringPtr(name)
			req.Topics = append(req.Topics, t)
		}
		resp, err := req.RequestWith(ctx, cl)
		if err != nil {
			last = err.Error()
		} else {
			replicas := map[int32]int{}
			ready, total := 0, 0
			for _, t := range resp.Topics {
				for _, p := range t.Partitions {
					total++
					for _, r := range p.Replicas {
						replicas[r]++
					}
					if p.ErrorCode == 0 && p.Leader >= 0 && len(p.ISR) >= rf {
						ready++
					}
				}
			}
			if ready == want && total == want {
				return replicas, nil
			}
			last = fmt.Sprintf("%d of %d partitions led with ISR %d (%d listed)", ready, want, rf, total)
		}
		if ctx.Err() != nil {
			return nil, ctx.Err()
		}
		time.Sleep(time.Second)
	}
	return nil, fmt.Errorf("bench: not every partition led after %s: %s", limit, last)
}

// apiVersionsFrame is one length-prefixed ApiVersions v0 request (the
// idle-connection measurement sends it once per connection, so that each
// connection has been served like a real client's first request).
func apiVersionsFrame(correlationID int32) []byte {
	f := kmsg.NewRequestFormatter(kmsg.FormatterClientID("samsa-bench-idle"))
	req := kmsg.NewPtrApiVersionsRequest()
	req.Version = 0
	return f.AppendRequest(nil, req, correlationID)
}
