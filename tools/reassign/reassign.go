package reassign

// kafka-reassign-partitions: Kafka 2.8's ReassignPartitionsCommand.
//
// Behaviour:
//   - exactly one of --bootstrap-server (AlterPartitionReassignments,
//     ListPartitionReassignments, IncrementalAlterConfigs) or --zookeeper
//     (/admin/reassign_partitions and /config znodes; Kafka's deprecation
//     warning first);
//   - exactly one action: --generate (--topics-to-move-json-file F
//     --broker-list 1,2: prints the current and a proposed assignment,
//     replicas placed as topic creation places them), --execute
//     (--reassignment-json-file F [--throttle B/s]
//     [--replica-alter-log-dirs-throttle B/s] [--additional]: prints the
//     current assignment for rollback, sets the throttles, starts the
//     reassignments), --verify (--reassignment-json-file F: prints each
//     partition's state; once all are complete, removes the throttles unless
//     --preserve-throttles), --cancel (--reassignment-json-file F:
//     reverts the reassignments in progress, then removes the throttles;
//     --bootstrap-server only), --list (the reassignments in progress:
//     "Current partition reassignments:" then "t-0: replicas: 2,3,1.
//     adding: 3. removing: 1.", or "No partition reassignments found.");
//   - throttles as Kafka sets them: leader.replication.throttled.rate and
//     follower.replication.throttled.rate on every broker of a moving
//     partition, leader.replication.throttled.replicas ("p:b" for the
//     current replicas) and follower.replication.throttled.replicas (the new
//     replicas) on each moving topic;
//   - Samsa only: --execute --start-at-log-end makes the new replicas start
//     at the leader's log end instead of copying the partition (see
//     broker/reassign_log_end.go; docs/operations-controller.md states the
//     trade-off);
//   - the output text is Kafka 2.8's (terse failures on stdout, exit 1).

import (
	"errors"
	"fmt"
	"os"
	"slices"
	"strconv"
	"strings"

	"github.com/urfave/cli/v2"

	"samsa/assign"
	"samsa/kafka"
	"samsa/tools/internal/tool"
	"samsa/tools/topics"
	"samsa/zkutil"
)

// Throttle keys (Kafka's DynamicConfig.Broker and LogConfig).
const (
	leaderThrottledRateKey       = "leader.replication.throttled.rate"
	followerThrottledRateKey     = "follower.replication.throttled.rate"
	alterLogDirsThrottledRateKey = "replica.alter.log.dirs.io.max.bytes.per.second"
	leaderThrottledReplicasKey   = "leader.replication.throttled.replicas"
	followerThrottledReplicasKey = "follower.replication.throttled.replicas"
)

const cannotExecuteBecauseOfExisting = "Cannot execute because there is an existing partition assignment.  " +
	"Use --additional to override this and create a new partition assignment in addition to the existing one. " +
	"The --additional flag can also be used to change the throttle by resubmitting the current reassignment."

const youMustRunVerifyPeriodically = "Warning: You must run --verify periodically, until the reassignment completes, to ensure the throttle is removed."

func Command(env tool.Env) *cli.Command {
	return &cli.Command{
		Name:  "kafka-reassign-partitions",
		Usage: "move topic partitions between replicas",
		Flags: []cli.Flag{
			&cli.StringFlag{Name: "bootstrap-server", Usage: "the server(s) to use for bootstrapping (REQUIRED if --zookeeper is not given)"},
			&cli.StringFlag{Name: "zookeeper", Usage: "DEPRECATED: the connection string for the zookeeper connection"},
			&cli.StringFlag{Name: "command-config", Usage: "property file containing configs to be passed to Admin Client"},
			&cli.BoolFlag{Name: "generate", Usage: "generate a candidate partition reassignment configuration"},
			&cli.BoolFlag{Name: "execute", Usage: "kick off the reassignment as specified by the --reassignment-json-file option"},
			&cli.BoolFlag{Name: "verify", Usage: "verify if the reassignment completed as specified by the --reassignment-json-file option; removes throttles when done"},
			&cli.BoolFlag{Name: "cancel", Usage: "cancel an active reassignment"},
			&cli.BoolFlag{Name: "list", Usage: "list all active partition reassignments"},
			&cli.StringFlag{Name: "reassignment-json-file", Usage: "the JSON file with the partition reassignment configuration"},
			&cli.StringFlag{Name: "topics-to-move-json-file", Usage: "generate a reassignment configuration to move the partitions of the specified topics to the list of brokers specified by --broker-list"},
			&cli.StringFlag{Name: "broker-list", Usage: "the list of brokers to which the partitions need to be reassigned, in the form \"0,1,2\""},
			&cli.BoolFlag{Name: "disable-rack-aware", Usage: "disable rack aware replica assignment"},
			&cli.Int64Flag{Name: "throttle", Value: -1, Usage: "the movement of partitions between brokers will be throttled to this value (bytes/sec)"},
			&cli.Int64Flag{Name: "replica-alter-log-dirs-throttle", Value: -1, Usage: "the movement of replicas between log directories on the same broker will be throttled to this value (bytes/sec)"},
			&cli.BoolFlag{Name: "additional", Usage: "execute this reassignment in addition to any other ongoing ones"},
			&cli.BoolFlag{Name: "preserve-throttles", Usage: "do not modify broker or topic throttles"},
			&cli.Int64Flag{Name: "timeout", Value: 10000, Usage: "the maximum time in ms to wait for log directory replica assignment to begin"},
			&cli.BoolFlag{Name: "start-at-log-end", Usage: "Samsa only, with --execute: new replicas start at the leader's log end instead of copying the partition (they never hold the older records; for cache-like topics)"},
		},
		Action: func(c *cli.Context) error {
			err := runReassign(c, env)
			var te tool.Error
			var jf tool.JavaException
			switch {
			case err == nil:
				return nil
			case errors.As(err, &te):
				fmt.Fprintln(env.Stdout, te.Error())
			case errors.As(err, &jf):
				fmt.Fprintln(env.Stdout, "Error: "+jf.Msg)
			default:
				fmt.Fprintln(env.Stdout, "Error: "+err.Error())
			}
			return tool.ExitError{Code: 1}
		},
	}
}

type reassignOpts struct {
	c             *cli.Context
	env           tool.Env
	backend       reassignBackend
	interBrokerBs int64
	logDirBs      int64
}

func runReassign(c *cli.Context, env tool.Env) error {
	actions := 0
	for _, a := range []string{"generate", "execute", "verify", "cancel", "list"} {
		if c.Bool(a) {
			actions++
		}
	}
	if actions != 1 {
		fmt.Fprintln(env.Stderr, "Command must include exactly one action: --generate, --execute, --verify, --cancel, or --list")
		return tool.ExitError{Code: 1}
	}
	zkConnect, boot := c.String("zookeeper"), c.String("bootstrap-server")
	if (zkConnect == "") == (boot == "") {
		fmt.Fprintln(env.Stderr, "Please specify --bootstrap-server")
		return tool.ExitError{Code: 1}
	}
	o := &reassignOpts{c: c, env: env, interBrokerBs: c.Int64("throttle"), logDirBs: c.Int64("replica-alter-log-dirs-throttle")}
	if zkConnect != "" {
		if c.Bool("cancel") {
			fmt.Fprintln(env.Stderr, `Option "[cancel]" can't be used with option "[zookeeper]"`)
			return tool.ExitError{Code: 1}
		}
		fmt.Fprintln(env.Stdout, "Warning: --zookeeper is deprecated, and will be removed in a future version of Kafka.")
		svc, err := topics.NewZKTopicService(zkConnect, tool.Logger(env, "kafka-reassign-partitions"))
		if err != nil {
			return err
		}
		o.backend = zkReassignBackend{svc}
	} else {
		a, err := newKafkaAdmin(boot, "reassign-partitions")
		if err != nil {
			return err
		}
		o.backend = adminReassignBackend{a}
	}
	defer o.backend.close()
	switch {
	case c.Bool("generate"):
		return o.generate()
	case c.Bool("execute"):
		return o.execute()
	case c.Bool("verify"):
		return o.verify()
	case c.Bool("list"):
		return o.list()
	default:
		return o.cancel()
	}
}

func (o *reassignOpts) readReassignmentFile() (map[kafka.TopicPartition][]int32, error) {
	file := o.c.String("reassignment-json-file")
	if file == "" {
		return nil, tool.Error(`Missing required argument "[reassignment-json-file]"`)
	}
	data, err := os.ReadFile(file)
	if err != nil {
		return nil, tool.NoSuchFile(file, err)
	}
	parts, _, err := parseReassignmentJSON(data)
	return parts, err
}

func (o *reassignOpts) generate() error {
	file, list := o.c.String("topics-to-move-json-file"), o.c.String("broker-list")
	if file == "" || list == "" {
		return tool.Error("If --generate option is used, command must include both --topics-to-move-json-file and --broker-list options")
	}
	data, err := os.ReadFile(file)
	if err != nil {
		return tool.NoSuchFile(file, err)
	}
	toMove, err := parseTopicsToMoveJSON(data)
	if err != nil {
		return err
	}
	ids, err := parseBrokerList(list)
	if err != nil {
		return err
	}
	current, err := o.backend.assignments(toMove)
	if err != nil {
		return err
	}
	live, err := o.backend.liveBrokers(o.c.Bool("disable-rack-aware"))
	if err != nil {
		return err
	}
	var metas []assign.Broker
	for _, id := range ids {
		i := slices.IndexFunc(live, func(m assign.Broker) bool { return m.ID == id })
		if i < 0 {
			metas = append(metas, assign.Broker{ID: id})
			continue
		}
		metas = append(metas, live[i])
	}
	slices.SortFunc(metas, func(x, y assign.Broker) int { return int(x.ID - y.ID) })
	proposed := map[kafka.TopicPartition][]int32{}
	for _, t := range toMove {
		n, rf := 0, 0
		for tp, r := range current {
			if tp.Topic == t {
				n++
				rf = len(r)
			}
		}
		if n == 0 {
			return tool.Errorf("Topic %s not found", t)
		}
		a, err := assign.Replicas(metas, n, rf, -1, 0, nil)
		if err != nil {
			return topics.AssignmentError(err)
		}
		for p, r := range a {
			proposed[kafka.TopicPartition{Topic: t, Partition: p}] = r
		}
	}
	fmt.Fprintf(o.env.Stdout, "Current partition replica assignment\n%s\n\n", formatReassignmentJSON(current))
	fmt.Fprintf(o.env.Stdout, "Proposed partition reassignment configuration\n%s\n", formatReassignmentJSON(proposed))
	return nil
}

func (o *reassignOpts) execute() error {
	proposed, err := o.readReassignmentFile()
	if err != nil {
		return err
	}
	tps := sortedTPs(proposed)
	ongoing, err := o.backend.ongoing(tps)
	if err != nil {
		return err
	}
	if len(ongoing) > 0 && !o.c.Bool("additional") {
		return tool.Error(cannotExecuteBecauseOfExisting)
	}
	live, err := o.backend.liveBrokers(true)
	if err != nil {
		return err
	}
	for _, tp := range tps {
		for _, id := range proposed[tp] {
			if !slices.ContainsFunc(live, func(m assign.Broker) bool { return m.ID == id }) {
				return tool.Errorf("Error: org.apache.kafka.common.errors.InvalidBrokerIdException: Unknown broker id %d", id)
			}
		}
	}
	all, err := o.assignmentsOf(tps)
	if err != nil {
		return err
	}
	current := map[kafka.TopicPartition][]int32{}
	for _, tp := range tps {
		r, ok := all[tp]
		if !ok {
			return tool.Errorf("Error: org.apache.kafka.common.errors.UnknownTopicOrPartitionException: Unable to find partition: %s", tp)
		}
		current[tp] = r
	}
	fmt.Fprintf(o.env.Stdout, "Current partition replica assignment\n\n%s\n\nSave this to use as the --reassignment-json-file option during rollback\n",
		formatReassignmentJSON(current))
	if o.interBrokerBs >= 0 || o.logDirBs >= 0 {
		fmt.Fprintln(o.env.Stdout, youMustRunVerifyPeriodically)
		if o.interBrokerBs >= 0 {
			if err := o.setThrottles(proposed, current, ongoing); err != nil {
				return err
			}
		}
	}
	failed, err := o.backend.alter(proposed, o.c.Bool("start-at-log-end"))
	if err != nil {
		return err
	}
	if len(failed) > 0 {
		return tool.Errorf("Error reassigning partition(s):\n%s", failureLines(failed))
	}
	fmt.Fprintf(o.env.Stdout, "Successfully started partition reassignment%s for %s\n", pluralS(len(tps)), joinTPs(tps))
	return nil
}

// setThrottles is modifyReassignmentThrottles plus modifyInterBrokerThrottle.
func (o *reassignOpts) setThrottles(proposed, current map[kafka.TopicPartition][]int32, ongoing map[kafka.TopicPartition]ongoingReassignment) error {
	leader, follower := map[string][]string{}, map[string][]string{}
	brokers := map[int32]bool{}
	for _, tp := range sortedTPs(proposed) {
		sources := current[tp]
		if og, ok := ongoing[tp]; ok {
			// An ongoing reassignment's original replicas keep sending.
			sources = og.replicas
		}
		p := strconv.Itoa(int(tp.Partition))
		for _, b := range sources {
			leader[tp.Topic] = append(leader[tp.Topic], p+":"+strconv.Itoa(int(b)))
			brokers[b] = true
		}
		for _, b := range proposed[tp] {
			if !slices.Contains(sources, b) {
				follower[tp.Topic] = append(follower[tp.Topic], p+":"+strconv.Itoa(int(b)))
			}
			brokers[b] = true
		}
	}
	for _, t := range tool.SortedKeys(leader) {
		set := map[string]string{leaderThrottledReplicasKey: strings.Join(leader[t], ",")}
		if f := follower[t]; len(f) > 0 {
			set[followerThrottledReplicasKey] = strings.Join(f, ",")
		}
		if err := o.backend.alterConfig(zkutil.ConfigTypeTopic, t, set, nil); err != nil {
			return err
		}
	}
	rate := strconv.FormatInt(o.interBrokerBs, 10)
	for _, id := range tool.SortedKeys(brokers) {
		set := map[string]string{leaderThrottledRateKey: rate, followerThrottledRateKey: rate}
		if err := o.backend.alterConfig(zkutil.ConfigTypeBroker, strconv.Itoa(int(id)), set, nil); err != nil {
			return err
		}
	}
	fmt.Fprintf(o.env.Stdout, "The inter-broker throttle limit was set to %d B/s\n", o.interBrokerBs)
	return nil
}

func (o *reassignOpts) verify() error {
	targets, err := o.readReassignmentFile()
	if err != nil {
		return err
	}
	tps := sortedTPs(targets)
	ongoing, err := o.backend.ongoing(tps)
	if err != nil {
		return err
	}
	current, err := o.assignmentsOf(tps)
	if err != nil {
		return err
	}
	lines := []string{"Status of partition reassignment:"}
	for _, tp := range tps {
		_, inProgress := ongoing[tp]
		cur, ok := current[tp]
		switch {
		case inProgress:
			lines = append(lines, fmt.Sprintf("Reassignment of partition %s is still in progress.", tp))
		case ok && slices.Equal(cur, targets[tp]):
			lines = append(lines, fmt.Sprintf("Reassignment of partition %s is complete.", tp))
		default:
			lines = append(lines, fmt.Sprintf("There is no active reassignment of partition %s, but replica set is %s rather than %s.",
				tp, joinIDs(cur), joinIDs(targets[tp])))
		}
	}
	fmt.Fprintln(o.env.Stdout, strings.Join(lines, "\n"))
	if len(ongoing) > 0 || o.c.Bool("preserve-throttles") {
		return nil
	}
	return o.clearAllThrottles(targets)
}

// clearAllThrottles removes the broker throttles of every live broker and
// target replica, and the topic throttles of every target topic.
func (o *reassignOpts) clearAllThrottles(targets map[kafka.TopicPartition][]int32) error {
	live, err := o.backend.liveBrokers(true)
	if err != nil {
		return err
	}
	brokers := map[int32]bool{}
	for _, m := range live {
		brokers[m.ID] = true
	}
	topics := map[string]bool{}
	for tp, r := range targets {
		topics[tp.Topic] = true
		for _, b := range r {
			brokers[b] = true
		}
	}
	ids := tool.SortedKeys(brokers)
	fmt.Fprintf(o.env.Stdout, "Clearing broker-level throttles on broker%s %s\n", pluralS(len(ids)), joinIDs(ids))
	for _, id := range ids {
		if !slices.ContainsFunc(live, func(m assign.Broker) bool { return m.ID == id }) {
			continue // a broker that is not running has no dynamic config to clear through it
		}
		if err := o.backend.alterConfig(zkutil.ConfigTypeBroker, strconv.Itoa(int(id)), nil,
			[]string{leaderThrottledRateKey, followerThrottledRateKey, alterLogDirsThrottledRateKey}); err != nil {
			return err
		}
	}
	names := tool.SortedKeys(topics)
	fmt.Fprintf(o.env.Stdout, "Clearing topic-level throttles on topic%s %s\n", pluralS(len(names)), strings.Join(names, ","))
	for _, t := range names {
		if err := o.backend.alterConfig(zkutil.ConfigTypeTopic, t, nil,
			[]string{leaderThrottledReplicasKey, followerThrottledReplicasKey}); err != nil {
			return err
		}
	}
	if z, ok := o.backend.(zkReassignBackend); ok {
		// Finished log-end reassignments leave no entries behind (over the
		// API, the next reassignment of the partition removes them).
		return z.writeLogEndEntries(targets, false)
	}
	return nil
}

func (o *reassignOpts) cancel() error {
	targets, err := o.readReassignmentFile()
	if err != nil {
		return err
	}
	ongoing, err := o.backend.ongoing(sortedTPs(targets))
	if err != nil {
		return err
	}
	active := map[kafka.TopicPartition][]int32{}
	for tp, og := range ongoing {
		if len(og.adding) > 0 || len(og.removing) > 0 {
			active[tp] = nil
		}
	}
	if len(active) > 0 {
		failed, err := o.backend.alter(active, false)
		if err != nil {
			return err
		}
		if len(failed) > 0 {
			return tool.Errorf("Error cancelling partition reassignment%s for:\n%s", pluralS(len(failed)), failureLines(failed))
		}
		fmt.Fprintf(o.env.Stdout, "Successfully cancelled partition reassignment%s for: %s\n", pluralS(len(active)), joinTPs(sortedTPs(active)))
	} else {
		fmt.Fprintln(o.env.Stdout, "None of the specified partition reassignments are active.")
	}
	if o.c.Bool("preserve-throttles") {
		return nil
	}
	return o.clearAllThrottles(targets)
}

// list is listReassignments: every reassignment in progress.
func (o *reassignOpts) list() error {
	var tps []kafka.TopicPartition // nil: all (API)
	if z, ok := o.backend.(zkReassignBackend); ok {
		pending, err := z.zk.Client().GetPartitionReassignment()
		if err != nil && !errors.Is(err, zkutil.ErrNoNode) {
			return err
		}
		tps = []kafka.TopicPartition{}
		for tp := range pending {
			tps = append(tps, tp)
		}
	}
	ongoing, err := o.backend.ongoing(tps)
	if err != nil {
		return err
	}
	if len(ongoing) == 0 {
		fmt.Fprintln(o.env.Stdout, "No partition reassignments found.")
		return nil
	}
	lines := []string{"Current partition reassignments:"}
	for _, tp := range sortedTPs(ongoing) {
		og := ongoing[tp]
		line := fmt.Sprintf("%s: replicas: %s.", tp, joinIDs(og.replicas))
		if len(og.adding) > 0 {
			line += fmt.Sprintf(" adding: %s.", joinIDs(og.adding))
		}
		if len(og.removing) > 0 {
			line += fmt.Sprintf(" removing: %s.", joinIDs(og.removing))
		}
		lines = append(lines, line)
	}
	fmt.Fprintln(o.env.Stdout, strings.Join(lines, "\n"))
	return nil
}

// assignmentsOf reads the current replicas of every partition of the
// topics of tps.
func (o *reassignOpts) assignmentsOf(tps []kafka.TopicPartition) (map[kafka.TopicPartition][]int32, error) {
	topics := map[string]bool{}
	for _, tp := range tps {
		topics[tp.Topic] = true
	}
	return o.backend.assignments(tool.SortedKeys(topics))
}

// failureLines words failed partitions "topic-partition: error", one a
// line, in partition order.
func failureLines(failed map[kafka.TopicPartition]error) string {
	var lines []string
	for _, tp := range sortedTPs(failed) {
		lines = append(lines, fmt.Sprintf("%s: %v", tp, failed[tp]))
	}
	return strings.Join(lines, "\n")
}

func pluralS(n int) string {
	if n == 1 {
		return ""
	}
	return "s"
}
