package runner

import (
	"context"
	"fmt"
	"math/rand"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"syscall"
	"time"

	"samsa/chaos/checker"
	"samsa/chaos/cluster"
	"samsa/chaos/history"
	"samsa/chaos/nemesis"
	"samsa/chaos/workload"
)

// Options configures a run.
type Options struct {
	Seed       int64
	Cycles     int
	Nemeses    []string // names for nemesis.Lookup
	Brokers    int
	Partitions int32
	Rate       int           // records/s per producer
	HoldMin    time.Duration // fault hold time drawn in [HoldMin, HoldMax]
	HoldMax    time.Duration
	Quiet      time.Duration // healthy time between cycles
	Recover    time.Duration // bound on the wait for recovery
	Unclean    bool
	Work       string
	SamsaBin   string
	Prefix     string
	Workload   string
	Log        func(format string, args ...any)
}

// Summary is the outcome of a run.
type Summary struct {
	Seed        int64
	Cycles      int
	Unrecovered int
	Restarts    int // processes found exited after a heal and started again
	Result      checker.Result
	Txn         checker.TxnResult // when TxnChecked: the transactional workload ran
	TxnChecked  bool
	PerFault    []FaultStats
	Elapsed     time.Duration
}

// FaultStats aggregates one nemesis's cycles.
type FaultStats struct {
	Fault                  string
	Cycles                 int
	Acked, Lost            int
	SendGapP50, SendGapMax time.Duration
	PollGapP50, PollGapMax time.Duration
	// CommitGapP50 and CommitGapMax are over the cycles' CommitGap (the
	// longest time one transactional producer could not commit); Commits
	// is how many cycles had one (0: the transactional workload did not run).
	CommitGapP50, CommitGapMax time.Duration
	Commits                    int
}

// OK reports whether the run met the bar.
func (s Summary) OK() bool { return len(s.Failures()) == 0 && s.Unrecovered == 0 }

// Failures lists the queue's and the transactions' broken invariants.
func (s Summary) Failures() []string {
	return append(s.Result.Failures(), s.Txn.Failures()...)
}

// Line is the one summary line.
func (s Summary) Line() string {
	r := s.Result
	res := "ok"
	if f := s.Failures(); len(f) > 0 || s.Unrecovered > 0 {
		if s.Unrecovered > 0 {
			f = append(f, fmt.Sprintf("unrecovered=%d", s.Unrecovered))
		}
		res = "FAIL(" + strings.Join(f, ",") + ")"
	}
	txn := ""
	if t := s.Txn; s.TxnChecked {
		txn = fmt.Sprintf(" txn-committed=%d txn-aborted=%d txn-indeterminate=%d txn-reads=%d aborted-reads=%d torn-txns=%d "+
			"lost-commits=%d eos-duplicates=%d", t.Committed, t.Aborted, t.Indeterminate, t.Reads, len(t.AbortedReads),
			len(t.TornTxns), len(t.LostCommits), len(t.DuplicateOutputs))
	}
	return fmt.Sprintf("samsa-chaos: seed=%d cycles=%d acked=%d lost=%d duplicates=%d order=%d indeterminate=%d "+
		"duplicates-nonidempotent=%d reorders-nonidempotent=%d polled=%d unseen=%d resumed-indeterminate=%d%s restarts=%d elapsed=%s result=%s",
		s.Seed, s.Cycles, r.Acked, len(r.Lost), r.Duplicates(), len(r.Order), r.Indeterminate,
		len(r.DuplicatesOther), len(r.OrderOther), r.Polled, r.Unseen, r.ResumedIndeterminate, txn, s.Restarts, s.Elapsed.Round(time.Second), res)
}

const topic = "samsa-chaos"

// Run does one run: set up, warm up, the fault cycles, then stop, read
// the final log and check the history.
func Run(ctx context.Context, o Options) (sum Summary, err error) {
	start := time.Now()
	if o.Log == nil {
		o.Log = func(string, ...any) {}
	}
	ns, wl, err := lookup(o)
	if err != nil {
		return sum, err
	}
	h, err := openWork(o)
	if err != nil {
		return sum, err
	}
	defer h.Close()
	c, err := startCluster(ctx, o, &sum)
	if err != nil {
		return sum, err
	}
	defer c.Close()
	o.Log("cluster up; starting workload %s", wl.Name())
	if err := wl.Start(ctx, workload.Env{Bootstrap: c.Bootstrap(), Topic: topic, History: h, Rate: o.Rate, Unclean: o.Unclean}); err != nil {
		return sum, err
	}
	stopped := false
	defer func() {
		if !stopped {
			sctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
			_ = wl.Stop(sctx)
			cancel()
		}
	}()
	warmUp(ctx, h)
	env := &nemesis.Env{C: c, Topic: topic, Rng: rand.New(rand.NewSource(o.Seed))}
	runCycles(ctx, o, c, env, h, ns, &sum)
	stopped = true
	finish(o, c, wl, h, &sum)
	sum.Seed = o.Seed
	sum.Result = checker.Check(h.Ops())
	sum.Txn, sum.TxnChecked = checker.CheckTxnOps(h.Ops())
	sum.PerFault = perFault(h.Ops(), sum.Result)
	if len(sum.Failures()) > 0 {
		if err := c.SaveDisks(); err != nil {
			o.Log("saving the log dirs: %v", err)
		} else {
			o.Log("log dirs saved to %s/b*/data", o.Work)
		}
	}
	sum.Elapsed = time.Since(start)
	if err := os.WriteFile(filepath.Join(o.Work, "report.md"), []byte(Report(sum)), 0o644); err != nil {
		o.Log("report: %v", err)
	}
	return sum, ctx.Err()
}

// lookup resolves the options' nemeses and workload.
func lookup(o Options) ([]nemesis.Nemesis, workload.Workload, error) {
	ns, err := nemesis.Lookup(o.Nemeses)
	if err != nil {
		return nil, nil, err
	}
	if len(ns) == 0 {
		return nil, nil, fmt.Errorf("runner: no nemesis")
	}
	wl, err := workload.ByName(o.Workload)
	return ns, wl, err
}

// openWork empties the work dir, removes a crashed run's leftovers and
// creates the history.
func openWork(o Options) (*history.Writer, error) {
	if err := os.RemoveAll(o.Work); err != nil {
		return nil, err
	}
	if err := os.MkdirAll(o.Work, 0o755); err != nil {
		return nil, err
	}
	cluster.Cleanup(o.Prefix)
	return history.Create(filepath.Join(o.Work, "history.jsonl"))
}

// startCluster starts the ensemble and the brokers, creates the queue
// topic and waits until the cluster is whole.
func startCluster(ctx context.Context, o Options, sum *Summary) (*cluster.Cluster, error) {
	o.Log("starting ZooKeeper ensemble and %d brokers in network namespaces", o.Brokers)
	c, err := cluster.Start(ctx, cluster.Options{Prefix: o.Prefix, Work: o.Work, SamsaBin: o.SamsaBin,
		Brokers: o.Brokers, DiskBytes: 256 << 20, Unclean: o.Unclean, LoopDisks: nemesis.NeedsLoopDisks(o.Nemeses)})
	if err != nil {
		return nil, err
	}
	if err := cluster.WaitFor(ctx, 60*time.Second, func() error {
		cctx, cancel := context.WithTimeout(ctx, 15*time.Second)
		defer cancel()
		err := workload.CreateTopic(cctx, c.Bootstrap(), topic, o.Partitions, o.Unclean)
		if err != nil && strings.Contains(err.Error(), "TOPIC_ALREADY_EXISTS") {
			return nil
		}
		return err
	}); err != nil {
		c.Close()
		return nil, err
	}
	if err := waitWhole(ctx, c, o.Recover, &sum.Restarts, o.Log); err != nil {
		c.Close()
		return nil, fmt.Errorf("runner: cluster never whole: %w", err)
	}
	return c, nil
}

// warmUp waits (at most 60 s) until the workload has 50 sends
// acknowledged: the group joined and the producers run.
func warmUp(ctx context.Context, h *history.Writer) {
	_ = cluster.WaitFor(ctx, 60*time.Second, func() error {
		acked := 0
		for _, op := range h.Ops() {
			if op.F == history.Send && op.Type == history.OK {
				acked++
			}
		}
		if acked < 50 {
			return fmt.Errorf("%d acked", acked)
		}
		return nil
	})
}

// runCycles draws and runs o.Cycles faults, with o.Quiet of health
// between them.
func runCycles(ctx context.Context, o Options, c *cluster.Cluster, env *nemesis.Env, h *history.Writer, ns []nemesis.Nemesis, sum *Summary) {
	for cycle := 1; cycle <= o.Cycles && ctx.Err() == nil; cycle++ {
		n := ns[env.Rng.Intn(len(ns))]
		hold := o.HoldMin
		if o.HoldMax > o.HoldMin {
			hold += time.Duration(env.Rng.Int63n(int64(o.HoldMax - o.HoldMin)))
		}
		if hold < n.MinHold {
			hold = n.MinHold
		}
		if !runCycle(ctx, c, env, h, n, int64(cycle), hold, o.Recover, &sum.Restarts, o.Log) {
			sum.Unrecovered++
		}
		sum.Cycles++
		select {
		case <-ctx.Done():
		case <-time.After(o.Quiet):
		}
	}
}

// finish stops the workload (bounded: 90 s), waits for the cluster to be
// whole and takes the final read. Its steps run even when ctx was
// cancelled (SIGINT): the history is checked either way.
func finish(o Options, c *cluster.Cluster, wl workload.Workload, h *history.Writer, sum *Summary) {
	o.Log("stopping workload")
	sctx, cancel := context.WithTimeout(context.Background(), 90*time.Second)
	if err := wl.Stop(sctx); err != nil {
		o.Log("workload stop: %v", err)
	}
	cancel()
	if err := waitWhole(context.Background(), c, o.Recover, &sum.Restarts, o.Log); err != nil {
		o.Log("cluster not whole before the final read: %v", err)
	}
	o.Log("final read")
	if err := wl.FinalRead(context.Background()); err != nil {
		o.Log("final read: %v", err)
	}
}

// runCycle applies one fault, heals it and waits for recovery. It reports
// whether the cluster recovered within the bound.
func runCycle(ctx context.Context, c *cluster.Cluster, env *nemesis.Env, h *history.Writer, n nemesis.Nemesis,
	cycle int64, hold, recoverBound time.Duration, restarts *int, logf func(string, ...any)) bool {
	h.Add(history.Op{Process: "nemesis", Type: history.Invoke, F: history.Fault, Value: n.Name, Seq: cycle})
	fctx, cancel := context.WithTimeout(ctx, hold+60*time.Second)
	defer cancel()
	desc, heal, err := n.Start(fctx, env)
	healed := false
	doHeal := func() {
		if healed {
			return
		}
		healed = true
		hctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
		defer cancel()
		var herr error
		if heal != nil {
			herr = heal(hctx)
		}
		if e := healEverything(c); e != nil && herr == nil {
			herr = e
		}
		op := history.Op{Process: "nemesis", Type: history.OK, F: history.Fault, Value: n.Name, Seq: cycle}
		if herr != nil {
			op.Type, op.Err = history.Info, herr.Error()
		}
		h.Add(op)
	}
	defer doHeal()
	if err != nil {
		logf("cycle %d: %s: start: %v", cycle, n.Name, err)
	} else {
		logf("cycle %d: %s (%s) for %v", cycle, n.Name, desc, hold.Round(time.Millisecond))
		select {
		case <-fctx.Done():
		case <-time.After(hold):
		}
	}
	doHeal()
	if err := waitWhole(ctx, c, recoverBound, restarts, logf); err != nil {
		logf("cycle %d: %s: not recovered: %v", cycle, n.Name, err)
		h.Add(history.Op{Process: "nemesis", Type: history.Info, F: history.Recovered, Value: n.Name, Seq: cycle, Err: err.Error()})
		return false
	}
	h.Add(history.Op{Process: "nemesis", Type: history.OK, F: history.Recovered, Value: n.Name, Seq: cycle})
	return true
}

// healEverything is the second heal after every fault: network rules off,
// every process continued and started, every disk freed.
func healEverything(c *cluster.Cluster) error {
	first := c.Net.HealAll()
	for i := range c.Brokers {
		if err := c.FreeDisk(i); err != nil && first == nil {
			first = err
		}
		if err := c.RestoreDisk(i); err != nil && first == nil {
			first = err
		}
	}
	for _, p := range append(append([]*cluster.Proc(nil), c.ZK...), c.Brokers...) {
		if p.Paused() {
			_ = p.Signal(syscall.SIGCONT)
		}
	}
	for _, p := range c.ZK {
		if err := p.Start(); err != nil && first == nil {
			first = err
		}
	}
	for _, p := range c.Brokers {
		if err := p.Start(); err != nil && first == nil {
			first = err
		}
	}
	return first
}

// waitWhole waits until every process runs, every broker is registered and
// every partition (workload topic and __consumer_offsets) has a leader and
// a full ISR.
//
// A process found exited is started again and counted in *restarts: after
// a full disk a broker shuts itself down, as Kafka's does when its last log
// dir fails, possibly after the heal already ran. A broker that exits by
// itself under any other fault shows up in the count and in its log.
func waitWhole(ctx context.Context, c *cluster.Cluster, d time.Duration, restarts *int, logf func(string, ...any)) error {
	return cluster.WaitFor(ctx, d, func() error {
		for _, p := range append(append([]*cluster.Proc(nil), c.ZK...), c.Brokers...) {
			if !p.Running() {
				*restarts++
				logf("%s had exited after the heal; starting it again", p.Name)
				if err := p.Start(); err != nil {
					return err
				}
				return fmt.Errorf("%s restarted", p.Name)
			}
			if p.Paused() {
				return fmt.Errorf("%s paused", p.Name)
			}
		}
		if _, err := c.ZKLeader(); err != nil {
			return err
		}
		if err := c.Registered(); err != nil {
			return err
		}
		mctx, cancel := context.WithTimeout(ctx, 5*time.Second)
		defer cancel()
		ps, err := workload.Partitions(mctx, c.Bootstrap())
		if err != nil {
			return err
		}
		n := 0
		for _, p := range ps {
			if !wholeTopics[p.Topic] {
				continue
			}
			n++
			if p.Leader < 0 || len(p.ISR) != len(p.Replicas) {
				return fmt.Errorf("%s-%d leader %d isr %v replicas %v", p.Topic, p.Partition, p.Leader, p.ISR, p.Replicas)
			}
		}
		if n == 0 {
			return fmt.Errorf("no partitions of %s", topic)
		}
		return nil
	})
}

// wholeTopics are the topics whose every partition must have a leader and
// a full ISR before the cluster counts as whole.
var wholeTopics = map[string]bool{topic: true, workload.TxnTopic: true, "__consumer_offsets": true, "__transaction_state": true}

// perFault aggregates the fault windows by nemesis and counts the sends
// acknowledged (and lost) whose invoke fell inside a window.
func perFault(ops []history.Op, r checker.Result) []FaultStats {
	invoked := map[string]int64{}
	acked := map[string]bool{}
	for _, op := range ops {
		if op.F == history.Send && op.Type == history.Invoke {
			invoked[op.Value] = op.Time
		}
		if op.F == history.Send && op.Type == history.OK {
			acked[op.Value] = true
		}
	}
	lost := map[string]bool{}
	for _, a := range r.Lost {
		lost[a.Value] = true
	}
	type agg struct {
		cycles      int
		acked, lost int
		send, poll  []time.Duration
		commit      []time.Duration
	}
	by := map[string]*agg{}
	for _, w := range r.Faults {
		a := by[w.Fault]
		if a == nil {
			a = &agg{}
			by[w.Fault] = a
		}
		a.cycles++
		a.send = append(a.send, w.SendGap)
		a.poll = append(a.poll, w.PollGap)
		if w.CommitGap >= 0 {
			a.commit = append(a.commit, w.CommitGap)
		}
		end := w.Recovered
		if end.IsZero() {
			end = w.Healed
		}
		for v, t := range invoked {
			if t >= w.Start.UnixNano() && t <= end.UnixNano() {
				if acked[v] {
					a.acked++
				}
				if lost[v] {
					a.lost++
				}
			}
		}
	}
	var out []FaultStats
	for name, a := range by {
		p50s, maxs := stats(a.send)
		p50p, maxp := stats(a.poll)
		p50c, maxc := stats(a.commit)
		out = append(out, FaultStats{Fault: name, Cycles: a.cycles, Acked: a.acked, Lost: a.lost,
			SendGapP50: p50s, SendGapMax: maxs, PollGapP50: p50p, PollGapMax: maxp,
			CommitGapP50: p50c, CommitGapMax: maxc, Commits: len(a.commit)})
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Fault < out[j].Fault })
	return out
}

func stats(ds []time.Duration) (p50, max time.Duration) {
	if len(ds) == 0 {
		return 0, 0
	}
	s := append([]time.Duration(nil), ds...)
	sort.Slice(s, func(i, j int) bool { return s[i] < s[j] })
	return s[len(s)/2], s[len(s)-1]
}

// Report renders the per-fault table (docs/reliability.md's format).
func Report(s Summary) string {
	var b strings.Builder
	fmt.Fprintf(&b, "%s\n\n", s.Line())
	fmt.Fprintf(&b, "| fault | cycles | acked in window | lost | produce gap p50 / max | consume gap p50 / max | txn commit gap p50 / max |\n|---|---|---|---|---|---|---|\n")
	for _, f := range s.PerFault {
		commit := "-"
		if f.Commits > 0 {
			commit = fmt.Sprintf("%.1f s / %.1f s", f.CommitGapP50.Seconds(), f.CommitGapMax.Seconds())
		}
		fmt.Fprintf(&b, "| %s | %d | %d | %d | %.1f s / %.1f s | %.1f s / %.1f s | %s |\n", f.Fault, f.Cycles, f.Acked, f.Lost,
			f.SendGapP50.Seconds(), f.SendGapMax.Seconds(), f.PollGapP50.Seconds(), f.PollGapMax.Seconds(), commit)
	}
	r := s.Result
	for _, list := range [][]checker.Anomaly{r.Lost, r.DuplicatesIdempotent, r.Order, r.InconsistentOffsets, r.Phantoms,
		r.AbortedReads, r.PollSkips, r.NonmonotonicPolls, r.CommittedSkips,
		s.Txn.AbortedReads, s.Txn.TornTxns, s.Txn.LostCommits, s.Txn.DuplicateOutputs, s.Txn.Phantoms} {
		for i, a := range list {
			if i == 20 {
				fmt.Fprintf(&b, "... %d more %s\n", len(list)-20, a.Kind)
				break
			}
			fmt.Fprintf(&b, "- %s\n", a)
		}
	}
	return b.String()
}
