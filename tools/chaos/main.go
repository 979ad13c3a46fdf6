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

	"samsa/chaos/cluster"
	"samsa/chaos/nemesis"
	"samsa/chaos/netns"
	"samsa/chaos/runner"
)

func main() { os.Exit(run(os.Args[1:])) }

func usage(fs *flag.FlagSet) func() {
	return func() {
		w := fs.Output()
		fmt.Fprintf(w, "Usage: bin/samsa-chaos.sh [options]\n\n"+
			"Samsa's reliability harness: a 3-server ZooKeeper ensemble and 3-5 brokers, each in its own\n"+
			"network namespace, a recorded queue workload (franz-go and Sarama producers, idempotent and\n"+
			"not, acks=all; a franz-go consumer group) and a transactional one, seeded faults, and a\n"+
			"checker over the history. Needs root (namespaces, iptables, tmpfs). Prints one summary line;\n"+
			"exit 1 when lost>0, duplicates>0 (idempotent producers), an order, consumer or transaction\n"+
			"violation, or no recovery.\n\nOptions:\n")
		fs.PrintDefaults()
		fmt.Fprintf(w, "\nNemeses (--nemesis, comma-separated; \"a+b\" runs two at once; \"all\" = every one below plus %s):\n",
			strings.Join(nemesis.Combos, ", "))
		for _, n := range nemesis.All() {
			fmt.Fprintf(w, "  %-20s %s\n", n.Name, n.Help)
		}
		fmt.Fprintf(w, "\nOutside \"all\" (name them):\n")
		for _, n := range nemesis.Extra() {
			fmt.Fprintf(w, "  %-20s %s\n", n.Name, n.Help)
		}
		fmt.Fprintf(w, "\nNot available on this machine:\n")
		for _, u := range nemesis.Unavailable {
			fmt.Fprintf(w, "  %-20s %s\n", u.Name, u.Why)
		}
		fmt.Fprintf(w, "\nWorkloads (--workload, comma-separated, run side by side; default queue,txn):\n"+
			"  queue  five producers (franz-go, Sarama; idempotent and not) and a franz-go consumer group\n"+
			"  txn    multi-partition transactions (franz-go, Sarama; 1 in 4 aborted on purpose), franz-go\n"+
			"         GroupTransactSession consume-transform-produce from the queue topic, a read_committed\n"+
			"         reader; checked for aborted reads, torn transactions, lost commits, EOS duplicates\n")
	}
}

func run(args []string) int {
	fs := flag.NewFlagSet("samsa-chaos", flag.ContinueOnError)
	short := fs.Bool("short", false, "short run: 8 cycles, 4-7 s holds, 3 brokers (CI; under 4 minutes)")
	seed := fs.Int64("seed", 1, "seed of the fault schedule, targets and hold times")
	cycles := fs.Int("cycles", 100, "fault cycles (the long matrix; --short sets 8)")
	nem := fs.String("nemesis", "all", "nemeses to draw from, comma-separated (see below)")
	brokers := fs.Int("brokers", 3, "brokers, 3 to 5")
	partitions := fs.Int("partitions", 3, "partitions of the workload topic (RF 3, min.insync.replicas 2)")
	rate := fs.Int("rate", 40, "records per second per producer (5 producers)")
	holdMin := fs.Duration("hold-min", 5*time.Second, "least time a fault is held")
	holdMax := fs.Duration("hold-max", 15*time.Second, "most time a fault is held")
	quiet := fs.Duration("quiet", 3*time.Second, "healthy time between cycles")
	recov := fs.Duration("recover", 120*time.Second, "bound on the wait for the cluster to be whole after a heal")
	unclean := fs.Bool("unclean", false, "unclean.leader.election.enable=true (loss is then measured, not a failure of Samsa)")
	work := fs.String("work", filepath.Join(os.TempDir(), "samsa-chaos"), "work dir (emptied first): history.jsonl, report.md, logs")
	samsa := fs.String("samsa", ".build/samsa", "the samsa binary")
	prefix := fs.String("prefix", "samsa-chaos", "prefix of everything the run creates (namespaces, links, mounts)")
	wl := fs.String("workload", "queue,txn", "workloads, comma-separated: queue, txn (see below)")
	cleanup := fs.Bool("cleanup", false, "remove the leftovers of a crashed run (processes, mounts, namespaces) and exit")
	fs.Usage = usage(fs)
	if err := fs.Parse(args); err != nil {
		if err == flag.ErrHelp {
			return 0
		}
		return 2
	}
	if *cleanup {
		for _, d := range cluster.Cleanup(*prefix) {
			fmt.Println(d)
		}
		return 0
	}
	if *short {
		*cycles, *holdMin, *holdMax, *quiet = 8, 4*time.Second, 7*time.Second, 2*time.Second
		*brokers = 3
	}
	if err := netns.Available(*prefix); err != nil {
		fmt.Fprintf(os.Stderr, "samsa-chaos: network namespaces unavailable: %v\n"+
			"(the loopback + iptables owner-match fallback is not implemented)\n", err)
		return 2
	}
	bin, err := filepath.Abs(*samsa)
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 2
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	start := time.Now()
	logf := func(format string, a ...any) {
		fmt.Fprintf(os.Stderr, "[%6.1fs] %s\n", time.Since(start).Seconds(), fmt.Sprintf(format, a...))
	}
	sum, err := runner.Run(ctx, runner.Options{
		Seed: *seed, Cycles: *cycles, Nemeses: strings.Split(*nem, ","), Brokers: *brokers,
		Partitions: int32(*partitions), Rate: *rate, HoldMin: *holdMin, HoldMax: *holdMax, Quiet: *quiet,
		Recover: *recov, Unclean: *unclean, Work: *work, SamsaBin: bin, Prefix: *prefix, Workload: *wl, Log: logf,
	})
	if err != nil {
		fmt.Fprintf(os.Stderr, "samsa-chaos: %v\n", err)
		if sum.Cycles == 0 {
			return 2
		}
	}
	fmt.Fprint(os.Stderr, runner.Report(sum))
	fmt.Println(sum.Line())
	if !sum.OK() && !(*unclean && onlyLoss(sum)) {
		return 1
	}
	if err != nil {
		return 2
	}
	return 0
}

// onlyLoss: with unclean election on, loss is measured, not a failure;
// so are its direct consequences (a truncated log reuses offsets, so
// acknowledged offsets hold other values and consumers go back or skip).
func onlyLoss(s runner.Summary) bool {
	for _, f := range s.Failures() {
		ok := false
		for _, p := range []string{"lost=", "inconsistent-offsets=", "nonmonotonic-polls=", "poll-skips=", "committed-skips=", "torn-txns=", "lost-commits=", "undelivered="} {
			ok = ok || strings.HasPrefix(f, p)
		}
		if !ok {
			return false
		}
	}
	return s.Unrecovered == 0
}
