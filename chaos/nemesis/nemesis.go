package nemesis

import (
	"context"
	"fmt"
	"math/rand"
	"sort"
	"strings"
	"syscall"
	"time"

	"samsa/chaos/cluster"
	"samsa/chaos/workload"
)

// Env is what a nemesis acts on.
type Env struct {
	C     *cluster.Cluster
	Topic string
	Rng   *rand.Rand
}

// Heal undoes one started fault.
type Heal func(ctx context.Context) error

// Nemesis is one kind of fault.
type Nemesis struct {
	Name string
	Help string
	// MinHold is the least time the fault must last to mean anything (a
	// zombie must outlive its ZooKeeper session).
	MinHold time.Duration
	// Start applies the fault and returns what it did and its Heal.
	Start func(ctx context.Context, e *Env) (string, Heal, error)
}

// Unavailable lists the faults the issue names that this machine cannot
// inject, with the reason.
var Unavailable = []struct{ Name, Why string }{
	{"clock-jump", "time namespaces cannot offset the wall clock (CLOCK_REALTIME); changing the host clock would disturb everyone else"},
	{"netem", "this kernel has no sch_netem: one-way loss uses iptables statistic, delay uses tbf (loss, slow-link)"},
}

// killWait bounds the wait for a SIGKILLed process to exit.
const killWait = 30 * time.Second

// All is the fault matrix, in --help order. Combined faults are "a+b".
func All() []Nemesis {
	return []Nemesis{
		{Name: "kill", Help: "SIGKILL a broker; heal: start it", Start: kill},
		{Name: "pause", Help: "SIGSTOP a broker past its ZooKeeper session (zombie); heal: SIGCONT", MinHold: 10 * time.Second, Start: pause},
		{Name: "restart", Help: "graceful restart: SIGTERM a broker, wait for it to exit; heal: start it", Start: restart},
		{Name: "kill-controller", Help: "SIGKILL the controller; heal: start it", Start: killController},
		{Name: "partition-zk", Help: "cut a broker from every ZooKeeper server; heal: reconnect", MinHold: 8 * time.Second, Start: partitionZK},
		{Name: "partition-leader", Help: "cut a partition leader from the other brokers (ZooKeeper still reachable)", Start: partitionLeader},
		{Name: "partition-follower", Help: "cut a follower of a partition from its leader", Start: partitionFollower},
		{Name: "split", Help: "majority/minority split: one broker and one ZooKeeper server cut from the rest", Start: split},
		{Name: "loss", Help: "one-way 40% packet loss into (or out of) a broker from every other server (iptables statistic)", Start: loss},
		{Name: "slow-link", Help: "a broker's egress limited to 512 kbit/s by tbf (delay, then loss)", Start: slowLink},
		{Name: "zk-quorum-loss", Help: "SIGKILL two of the three ZooKeeper servers; heal: start them", Start: zkQuorumLoss},
		{Name: "zk-leader-kill", Help: "SIGKILL the ZooKeeper leader; heal: start it", Start: zkLeaderKill},
		{Name: "disk-full", Help: "fill a broker's log dir (its tmpfs); heal: free it, start the broker if it stopped", Start: diskFull},
	}
}

// Extra are faults outside the "all" matrix (name them with --nemesis).
func Extra() []Nemesis {
	return []Nemesis{
		{Name: "slow-disk", Help: fmt.Sprintf("a broker's log dir (ext4 on a loop device; naming it switches every broker to one) limited to %d IOPS "+
			"by a cgroup v1 blkio throttle: fsync, O_DIRECT and cache-miss reads slowed (v1 does not charge buffered writeback)", slowDiskIOPS),
			Start: slowDisk},
		{Name: "isr-shrink-kill", Help: "Jepsen 2013: cut a leader from one follower, then the other, until the ISR is the leader alone, then SIGKILL it (measures unclean-election loss with --unclean)", Start: isrShrinkKill},
	}
}

// Lookup returns the nemeses named in names ("a+b" combines two); "all"
// means the whole matrix plus its pairwise combinations listed in Combos.
func Lookup(names []string) ([]Nemesis, error) {
	by := map[string]Nemesis{}
	for _, n := range append(All(), Extra()...) {
		by[n.Name] = n
	}
	var out []Nemesis
	for _, name := range names {
		name = strings.TrimSpace(name)
		switch {
		case name == "":
		case name == "all":
			out = append(out, All()...)
			for _, c := range Combos {
				n, _ := Lookup([]string{c})
				out = append(out, n...)
			}
		case strings.Contains(name, "+"):
			var parts []Nemesis
			for _, p := range strings.Split(name, "+") {
				n, ok := by[p]
				if !ok {
					return nil, fmt.Errorf("nemesis: unknown %q in %q", p, name)
				}
				parts = append(parts, n)
			}
			out = append(out, combine(name, parts))
		default:
			n, ok := by[name]
			if !ok {
				return nil, fmt.Errorf("nemesis: unknown %q", name)
			}
			out = append(out, n)
		}
	}
	return out, nil
}

// Combos are the combined faults of the "all" matrix.
var Combos = []string{"kill+partition-zk", "partition-leader+zk-leader-kill", "pause+loss", "kill-controller+zk-leader-kill"}

func combine(name string, parts []Nemesis) Nemesis {
	n := Nemesis{Name: name, Help: "combined"}
	for _, p := range parts {
		if p.MinHold > n.MinHold {
			n.MinHold = p.MinHold
		}
	}
	n.Start = func(ctx context.Context, e *Env) (string, Heal, error) {
		var heals []Heal
		var descs []string
		healAll := func(ctx context.Context) error {
			var first error
			for i := len(heals) - 1; i >= 0; i-- {
				if err := heals[i](ctx); err != nil && first == nil {
					first = err
				}
			}
			return first
		}
		for _, p := range parts {
			d, h, err := p.Start(ctx, e)
			if err != nil {
				_ = healAll(ctx)
				return "", nil, err
			}
			heals = append(heals, h)
			descs = append(descs, d)
		}
		return strings.Join(descs, " + "), healAll, nil
	}
	return n
}

func pick(e *Env, n int) int { return e.Rng.Intn(n) }

// startBroker is the heal of a stopped broker: once its old session's
// registration is gone (bounded: the recovery wait restarts it anyway if
// this start fails), start it.
func startBroker(e *Env, i int) Heal {
	return func(ctx context.Context) error {
		_ = e.C.Brokers[i].Signal(syscall.SIGCONT)
		if !e.C.Brokers[i].Running() {
			_ = e.C.WaitDeregistered(ctx, i, 20*time.Second)
		}
		return e.C.Brokers[i].Start()
	}
}

func kill(ctx context.Context, e *Env) (string, Heal, error) {
	i := pick(e, len(e.C.Brokers))
	return "SIGKILL " + cluster.BrokerNode(i), startBroker(e, i), e.C.Brokers[i].Kill(killWait)
}

func pause(ctx context.Context, e *Env) (string, Heal, error) {
	i := pick(e, len(e.C.Brokers))
	heal := func(context.Context) error { return e.C.Brokers[i].Signal(syscall.SIGCONT) }
	return "SIGSTOP " + cluster.BrokerNode(i), heal, e.C.Brokers[i].Signal(syscall.SIGSTOP)
}

func restart(ctx context.Context, e *Env) (string, Heal, error) {
	i := pick(e, len(e.C.Brokers))
	return "SIGTERM " + cluster.BrokerNode(i), startBroker(e, i), e.C.Brokers[i].Stop(40 * time.Second)
}

func killController(ctx context.Context, e *Env) (string, Heal, error) {
	i, err := e.C.Controller()
	if err != nil {
		return "", nil, err
	}
	return "SIGKILL controller " + cluster.BrokerNode(i), startBroker(e, i), e.C.Brokers[i].Kill(killWait)
}

func netHeal(e *Env) Heal { return func(context.Context) error { return e.C.Net.HealAll() } }

func partitionZK(ctx context.Context, e *Env) (string, Heal, error) {
	i := pick(e, len(e.C.Brokers))
	b := cluster.BrokerNode(i)
	for z := range e.C.ZK {
		if err := e.C.Net.Cut(b, cluster.ZKNode(z)); err != nil {
			return "", nil, err
		}
	}
	return b + " | zk1 zk2 zk3", netHeal(e), nil
}

// topicPartition draws a partition of the workload topic whose leader is up.
func topicPartition(ctx context.Context, e *Env) (workload.PartitionState, error) {
	mctx, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	ps, err := workload.Partitions(mctx, e.C.Bootstrap(), e.Topic)
	if err != nil {
		return workload.PartitionState{}, err
	}
	var ok []workload.PartitionState
	for _, p := range ps {
		if p.Leader > 0 && int(p.Leader) <= len(e.C.Brokers) && len(p.Replicas) > 1 {
			ok = append(ok, p)
		}
	}
	if len(ok) == 0 {
		return workload.PartitionState{}, fmt.Errorf("nemesis: no partition of %s has a leader", e.Topic)
	}
	return ok[pick(e, len(ok))], nil
}

func partitionLeader(ctx context.Context, e *Env) (string, Heal, error) {
	p, err := topicPartition(ctx, e)
	if err != nil {
		return "", nil, err
	}
	l := cluster.BrokerNode(int(p.Leader) - 1)
	var others []string
	for i := range e.C.Brokers {
		if b := cluster.BrokerNode(i); b != l {
			if err := e.C.Net.Cut(l, b); err != nil {
				return "", nil, err
			}
			others = append(others, b)
		}
	}
	return fmt.Sprintf("leader %s of p%d | %s", l, p.Partition, strings.Join(others, " ")), netHeal(e), nil
}

func partitionFollower(ctx context.Context, e *Env) (string, Heal, error) {
	p, err := topicPartition(ctx, e)
	if err != nil {
		return "", nil, err
	}
	var fs []int32
	for _, r := range p.Replicas {
		if r != p.Leader {
			fs = append(fs, r)
		}
	}
	sort.Slice(fs, func(i, j int) bool { return fs[i] < fs[j] })
	f := cluster.BrokerNode(int(fs[pick(e, len(fs))]) - 1)
	l := cluster.BrokerNode(int(p.Leader) - 1)
	return fmt.Sprintf("follower %s | leader %s of p%d", f, l, p.Partition), netHeal(e), e.C.Net.Cut(f, l)
}

func servers(e *Env) []string {
	var out []string
	for i := range e.C.Brokers {
		out = append(out, cluster.BrokerNode(i))
	}
	for i := range e.C.ZK {
		out = append(out, cluster.ZKNode(i))
	}
	return out
}

func split(ctx context.Context, e *Env) (string, Heal, error) {
	minority := map[string]bool{
		cluster.BrokerNode(pick(e, len(e.C.Brokers))): true,
		cluster.ZKNode(pick(e, len(e.C.ZK))):          true,
	}
	var min, maj []string
	for _, s := range servers(e) {
		if minority[s] {
			min = append(min, s)
		} else {
			maj = append(maj, s)
		}
	}
	for _, a := range min {
		for _, b := range maj {
			if err := e.C.Net.Cut(a, b); err != nil {
				return "", nil, err
			}
		}
	}
	return strings.Join(min, " ") + " | " + strings.Join(maj, " "), netHeal(e), nil
}

func loss(ctx context.Context, e *Env) (string, Heal, error) {
	b := cluster.BrokerNode(pick(e, len(e.C.Brokers)))
	in := e.Rng.Intn(2) == 0
	for _, s := range servers(e) {
		if s == b {
			continue
		}
		from, to := s, b
		if !in {
			from, to = b, s
		}
		if err := e.C.Net.Loss(from, to, 0.4); err != nil {
			return "", nil, err
		}
	}
	dir := "into"
	if !in {
		dir = "out of"
	}
	return "40% loss " + dir + " " + b, netHeal(e), nil
}

func slowLink(ctx context.Context, e *Env) (string, Heal, error) {
	b := cluster.BrokerNode(pick(e, len(e.C.Brokers)))
	return b + " egress 512kbit", netHeal(e), e.C.Net.Slow(b, "512kbit")
}

func startZK(e *Env, is ...int) Heal {
	return func(context.Context) error {
		var first error
		for _, i := range is {
			if err := e.C.ZK[i].Start(); err != nil && first == nil {
				first = err
			}
		}
		return first
	}
}

func zkQuorumLoss(ctx context.Context, e *Env) (string, Heal, error) {
	keep := pick(e, 3)
	var is []int
	var names []string
	for i := range e.C.ZK {
		if i != keep {
			is = append(is, i)
			names = append(names, cluster.ZKNode(i))
		}
	}
	heal := startZK(e, is...)
	for _, i := range is {
		if err := e.C.ZK[i].Kill(killWait); err != nil {
			return "", heal, err
		}
	}
	return "SIGKILL " + strings.Join(names, " "), heal, nil
}

func zkLeaderKill(ctx context.Context, e *Env) (string, Heal, error) {
	i, err := e.C.ZKLeader()
	if err != nil {
		return "", nil, err
	}
	return "SIGKILL zk leader " + cluster.ZKNode(i), startZK(e, i), e.C.ZK[i].Kill(killWait)
}

// slowDiskIOPS is the slow-disk limit: every fsync of a few blocks then
// takes hundreds of milliseconds.
const slowDiskIOPS = 4

func slowDisk(ctx context.Context, e *Env) (string, Heal, error) {
	i := pick(e, len(e.C.Brokers))
	heal := func(context.Context) error { return e.C.RestoreDisk(i) }
	return fmt.Sprintf("%s log dir at %d IOPS", cluster.BrokerNode(i), slowDiskIOPS), heal, e.C.SlowDisk(i, slowDiskIOPS)
}

// NeedsLoopDisks reports whether any of names (as for Lookup) injects
// slow-disk, which needs block-device log dirs.
func NeedsLoopDisks(names []string) bool {
	for _, n := range names {
		if strings.Contains(n, "slow-disk") {
			return true
		}
	}
	return false
}

func diskFull(ctx context.Context, e *Env) (string, Heal, error) {
	i := pick(e, len(e.C.Brokers))
	heal := func(ctx context.Context) error {
		if err := e.C.FreeDisk(i); err != nil {
			return err
		}
		return e.C.Brokers[i].Start()
	}
	return "fill " + cluster.BrokerNode(i) + " log dir", heal, e.C.FillDisk(i)
}

// waitISR waits (bounded) until partition p's ISR satisfies ok.
func waitISR(ctx context.Context, e *Env, p int32, d time.Duration, ok func(isr []int32) bool) error {
	return cluster.WaitFor(ctx, d, func() error {
		mctx, cancel := context.WithTimeout(ctx, 5*time.Second)
		defer cancel()
		ps, err := workload.Partitions(mctx, e.C.Bootstrap(), e.Topic)
		if err != nil {
			return err
		}
		for _, s := range ps {
			if s.Partition == p {
				if ok(s.ISR) {
					return nil
				}
				return fmt.Errorf("p%d isr %v", p, s.ISR)
			}
		}
		return fmt.Errorf("p%d not in metadata", p)
	})
}

func isrShrinkKill(ctx context.Context, e *Env) (string, Heal, error) {
	p, err := topicPartition(ctx, e)
	if err != nil {
		return "", nil, err
	}
	li := int(p.Leader) - 1
	l := cluster.BrokerNode(li)
	heal := func(ctx context.Context) error {
		herr := e.C.Net.HealAll()
		if err := startBroker(e, li)(ctx); err != nil && herr == nil {
			herr = err
		}
		return herr
	}
	var fs []int32
	for _, r := range p.Replicas {
		if r != p.Leader {
			fs = append(fs, r)
		}
	}
	e.Rng.Shuffle(len(fs), func(i, j int) { fs[i], fs[j] = fs[j], fs[i] })
	for k, f := range fs {
		if err := e.C.Net.Cut(l, cluster.BrokerNode(int(f)-1)); err != nil {
			return "", heal, err
		}
		want := len(p.Replicas) - k - 1
		if err := waitISR(ctx, e, p.Partition, 40*time.Second, func(isr []int32) bool { return len(isr) <= want }); err != nil {
			return "", heal, err
		}
	}
	return fmt.Sprintf("p%d: ISR shrunk to leader %s alone, then SIGKILL %s", p.Partition, l, l), heal, e.C.Brokers[li].Kill(killWait)
}
