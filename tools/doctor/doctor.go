package doctor

// samsa doctor (bin/samsa-doctor.sh; no Kafka counterpart): checks the
// host a broker runs on and a running cluster, and prints what is wrong and
// how to fix it.
//
// Behaviour:
//   - host checks (doctor_host.go) unless --skip-host: vm.swappiness,
//     vm.dirty_background_ratio / vm.dirty_ratio, the file-descriptor limit,
//     and for each log dir (--log-dirs, or log.dirs of --config
//     server.properties) noatime on its mount and free disk space;
//   - cluster checks (doctor_cluster.go) through --zookeeper and/or
//     --bootstrap-server: partitions offline or under-replicated,
//     __consumer_offsets with a replication factor below 3 or an ISR of one,
//     partitions whose preferred replica does not lead, brokers registered
//     but not accepting connections;
//   - consumer group checks (doctor_groups.go) through --metrics-url (the
//     brokers' metrics.listener): groups in a rebalance storm, with the
//     client causing it and the runbook's advice;
//   - output: a section per source, one line per check
//     ("[ OK ]", "[WARN]", "[FAIL]"), each problem followed by a "fix:"
//     line, then a summary line;
//   - exit code 0 when every check passed, 1 when at least one problem was
//     found (or a source could not be reached), 1 on a usage error.

import (
	"fmt"
	"io"
	"time"

	"github.com/urfave/cli/v2"

	"samsa/config"
	"samsa/tools/groups"
	"samsa/tools/internal/tool"
)

// severity of a doctor finding.
type severity int

const (
	sevOK severity = iota
	sevWarn
	sevFail
)

func (s severity) tag() string {
	switch s {
	case sevWarn:
		return "[WARN]"
	case sevFail:
		return "[FAIL]"
	}
	return "[ OK ]"
}

// finding is the result of one check.
type finding struct {
	sev     severity
	summary string   // one line: what was checked and what was found
	details []string // affected items, printed indented
	fix     string   // how to fix it (problems only)
}

// doctorReport collects the findings of one run, by section.
type doctorReport struct {
	sections []string
	findings map[string][]finding
}

func (r *doctorReport) add(section string, f finding) {
	if r.findings == nil {
		r.findings = map[string][]finding{}
	}
	if _, ok := r.findings[section]; !ok {
		r.sections = append(r.sections, section)
	}
	r.findings[section] = append(r.findings[section], f)
}

func (r *doctorReport) ok(section, format string, args ...any) {
	r.add(section, finding{sev: sevOK, summary: fmt.Sprintf(format, args...)})
}

// problems counts findings that are not OK.
func (r *doctorReport) problems() int {
	n := 0
	for _, fs := range r.findings {
		for _, f := range fs {
			if f.sev != sevOK {
				n++
			}
		}
	}
	return n
}

// maxDetails bounds the affected items printed per finding.
const maxDetails = 10

func (r *doctorReport) write(w io.Writer) {
	for i, s := range r.sections {
		if i > 0 {
			fmt.Fprintln(w)
		}
		fmt.Fprintln(w, s)
		for _, f := range r.findings[s] {
			fmt.Fprintf(w, "  %s %s\n", f.sev.tag(), f.summary)
			for j, d := range f.details {
				if j == maxDetails {
					fmt.Fprintf(w, "         ... and %d more\n", len(f.details)-maxDetails)
					break
				}
				fmt.Fprintf(w, "         %s\n", d)
			}
			if f.sev != sevOK && f.fix != "" {
				fmt.Fprintf(w, "         fix: %s\n", f.fix)
			}
		}
	}
	if n := r.problems(); n == 0 {
		fmt.Fprintln(w, "\nNo problems found.")
	} else {
		fmt.Fprintf(w, "\n%d problem(s) found.\n", n)
	}
}

// doctorOpts are the doctor's options.
type doctorOpts struct {
	zookeeper, bootstrap, commandConfig string
	metricsURLs                         []string
	logDirs                             []string
	skipHost                            bool
	timeout                             time.Duration
	host                                hostProbe
}

func Command(env tool.Env) *cli.Command {
	return &cli.Command{
		Name:  "doctor",
		Usage: "check the host and a running cluster for settings and states that hurt a broker",
		Flags: []cli.Flag{
			&cli.StringFlag{Name: "zookeeper", Usage: "ZooKeeper connection string host:port[/chroot] of the cluster"},
			&cli.StringFlag{Name: "bootstrap-server", Usage: "broker(s) of the cluster, host:port[,host:port]"},
			&cli.StringFlag{Name: "command-config", Usage: "properties file with Admin client settings"},
			&cli.StringFlag{Name: "config", Usage: "server.properties whose log.dirs the host checks inspect"},
			&cli.StringFlag{Name: "log-dirs", Usage: "comma-separated log dirs to inspect (instead of --config)"},
			&cli.BoolFlag{Name: "skip-host", Usage: "only check the cluster"},
			&cli.StringFlag{Name: "metrics-url", Usage: "the brokers' metrics.listener URLs (http://host:port[,...]): lists consumer groups in a rebalance storm"},
			&cli.DurationFlag{Name: "timeout", Value: 10 * time.Second, Usage: "connection timeout per check"},
		},
		Action: func(c *cli.Context) error {
			o := &doctorOpts{zookeeper: c.String("zookeeper"), bootstrap: c.String("bootstrap-server"),
				commandConfig: c.String("command-config"), skipHost: c.Bool("skip-host"), timeout: c.Duration("timeout"),
				host: realHostProbe(), metricsURLs: groups.MetricsURLs(c.String("metrics-url"))}
			if d := c.String("log-dirs"); d != "" {
				o.logDirs = tool.SplitList(d)
			} else if p := c.String("config"); p != "" {
				cfg, _, err := config.LoadBroker(p, nil)
				if err != nil {
					fmt.Fprintln(env.Stderr, tool.UserMessage(err))
					return tool.ExitError{Code: 1}
				}
				o.logDirs = cfg.LogDirs()
			}
			if o.skipHost && o.zookeeper == "" && o.bootstrap == "" && len(o.metricsURLs) == 0 {
				fmt.Fprintln(env.Stderr, "Nothing to check: give --zookeeper, --bootstrap-server or --metrics-url with --skip-host")
				return tool.ExitError{Code: 1}
			}
			r := runDoctor(o, env)
			r.write(env.Stdout)
			if r.problems() > 0 {
				return tool.ExitError{Code: 1}
			}
			return nil
		},
	}
}

// runDoctor runs every requested check.
func runDoctor(o *doctorOpts, env tool.Env) *doctorReport {
	r := &doctorReport{}
	if !o.skipHost {
		checkHost(r, o.host, o.logDirs)
	}
	if o.zookeeper != "" {
		section := "Cluster (ZooKeeper " + o.zookeeper + ")"
		view, err := clusterViewZK(o.zookeeper, o.timeout, env)
		if err != nil {
			r.add(section, finding{sev: sevFail, summary: "cannot read the cluster from ZooKeeper: " + tool.UserMessage(err),
				fix: "check that ZooKeeper runs and that the connection string (with its chroot) is the brokers' zookeeper.connect"})
		} else {
			checkCluster(r, section, view, o.timeout)
		}
	}
	if o.bootstrap != "" {
		section := "Cluster (bootstrap " + o.bootstrap + ")"
		view, err := clusterViewAdmin(o.bootstrap, o.commandConfig, o.timeout)
		if err != nil {
			r.add(section, finding{sev: sevFail, summary: "cannot read the cluster metadata: " + tool.UserMessage(err),
				fix: "check that the brokers run and that the address is one of their advertised listeners"})
		} else {
			checkCluster(r, section, view, o.timeout)
		}
	}
	if len(o.metricsURLs) > 0 {
		checkGroups(r, o.metricsURLs, o.timeout)
	}
	return r
}
