package topics

// kafka-topics: create, list, describe, alter (partitions) and delete topics,
// through ZooKeeper (--zookeeper, as Kafka 2.8's ZookeeperTopicService) or
// through the Admin API (--bootstrap-server, AdminClientTopicService).
//
// Behaviour:
//   - option checks and messages follow Kafka 2.8's TopicCommandOptions;
//     usage errors go to stderr with exit code 1;
//   - failures print "Error while executing topic command : <msg>" on stdout
//     and exit with 1, as Kafka does;
//   - --describe uses the 2.4+ format (§4.4 of the reference) on both paths;
//     TopicId is printed when the topic has a non-zero id;
//   - topic lists are sorted; --topic is a regex that must match the whole
//     name (Kafka's IncludeList, with ',' meaning '|').

import (
	"fmt"
	"io"
	"regexp"
	"sort"
	"strconv"
	"strings"

	"github.com/urfave/cli/v2"

	"samsa/tools/internal/tool"
)

// internalTopics are Kafka's Topic.INTERNAL_TOPICS.
var internalTopics = map[string]bool{"__consumer_offsets": true, "__transaction_state": true}

const collisionWarning = "WARNING: Due to limitations in metric names, topics with a period ('.') or underscore ('_') could collide. To avoid issues it is best to use either, but not both."

// topicOpts are the parsed kafka-topics options.
type topicOpts struct {
	zookeeper, bootstrap string
	commandConfig        string
	create, list         bool
	describe, alter      bool
	delete               bool
	topic                string
	hasTopic             bool
	partitions           int32
	hasPartitions        bool
	replicationFactor    int32
	hasReplicationFactor bool
	replicaAssignment    map[int32][]int32
	configs              map[string]string
	deleteConfigs        []string
	disableRackAware     bool
	ifExists             bool
	ifNotExists          bool
	underReplicated      bool
	unavailable          bool
	underMinISR          bool
	atMinISR             bool
	withOverrides        bool
	excludeInternal      bool
}

// topicService is one kafka-topics backend.
type topicService interface {
	listTopics(o *topicOpts, out io.Writer) error
	describeTopics(o *topicOpts, out io.Writer) error
	createTopic(o *topicOpts, out io.Writer) error
	alterTopic(o *topicOpts, out io.Writer) error
	deleteTopics(o *topicOpts, out io.Writer) error
	Close()
}

func Command(env tool.Env) *cli.Command {
	return &cli.Command{
		Name:  "kafka-topics",
		Usage: "create, delete, describe, or change a topic",
		Flags: []cli.Flag{
			&cli.StringFlag{Name: "zookeeper", Usage: "DEPRECATED: ZooKeeper connection string host:port[/chroot]"},
			&cli.StringFlag{Name: "bootstrap-server", Usage: "Kafka broker(s) to connect to, host:port[,host:port]"},
			&cli.StringFlag{Name: "command-config", Usage: "properties file with Admin client settings (bootstrap only)"},
			&cli.BoolFlag{Name: "create", Usage: "create a new topic"},
			&cli.BoolFlag{Name: "list", Usage: "list all available topics"},
			&cli.BoolFlag{Name: "describe", Usage: "list details for the given topics"},
			&cli.BoolFlag{Name: "alter", Usage: "alter the number of partitions or (ZooKeeper only) the config of a topic"},
			&cli.BoolFlag{Name: "delete", Usage: "delete a topic"},
			&cli.StringFlag{Name: "topic", Usage: "topic name, or a regular expression except with --create"},
			&cli.StringFlag{Name: "partitions", Usage: "number of partitions for --create or --alter"},
			&cli.StringFlag{Name: "replication-factor", Usage: "replication factor for --create"},
			&cli.StringFlag{Name: "replica-assignment", Usage: "broker_id_for_part1_replica1:broker_id_for_part1_replica2,..."},
			&cli.StringSliceFlag{Name: "config", Usage: "topic config override name=value (repeatable)"},
			&cli.StringSliceFlag{Name: "delete-config", Usage: "topic config override to remove (--alter --zookeeper)"},
			&cli.BoolFlag{Name: "disable-rack-aware", Usage: "ignore racks in replica assignment"},
			&cli.BoolFlag{Name: "if-exists", Usage: "only act if the topic exists"},
			&cli.BoolFlag{Name: "if-not-exists", Usage: "only create the topic if it does not exist"},
			&cli.BoolFlag{Name: "under-replicated-partitions", Usage: "describe only partitions whose ISR is smaller than the replica set"},
			&cli.BoolFlag{Name: "unavailable-partitions", Usage: "describe only partitions without an available leader"},
			&cli.BoolFlag{Name: "under-min-isr-partitions", Usage: "describe only partitions whose ISR is below min.insync.replicas"},
			&cli.BoolFlag{Name: "at-min-isr-partitions", Usage: "describe only partitions whose ISR equals min.insync.replicas"},
			&cli.BoolFlag{Name: "topics-with-overrides", Usage: "describe only topics that override configs"},
			&cli.BoolFlag{Name: "exclude-internal", Usage: "leave internal topics out of --list and --describe"},
			&cli.BoolFlag{Name: "force", Usage: "accepted and ignored"},
		},
		Action: func(c *cli.Context) error {
			out := env.Stdout
			o, err := parseTopicOpts(c)
			if err != nil {
				fmt.Fprintln(env.Stderr, err)
				return tool.ExitError{Code: 1}
			}
			svc, err := newTopicService(o, env)
			if err == nil {
				defer svc.Close()
				err = runTopicAction(svc, o, out)
			}
			if err != nil {
				fmt.Fprintf(out, "Error while executing topic command : %s\n", tool.UserMessage(err))
				return tool.ExitError{Code: 1}
			}
			return nil
		},
	}
}

func newTopicService(o *topicOpts, env tool.Env) (topicService, error) {
	log := tool.Logger(env, "kafka-topics")
	if o.zookeeper != "" {
		return NewZKTopicService(o.zookeeper, log)
	}
	return newAdminTopicService(o.bootstrap, o.commandConfig)
}

func runTopicAction(svc topicService, o *topicOpts, out io.Writer) error {
	switch {
	case o.create:
		if hasCollisionChars(o.topic) {
			fmt.Fprintln(out, collisionWarning)
		}
		return svc.createTopic(o, out)
	case o.list:
		return svc.listTopics(o, out)
	case o.describe:
		return svc.describeTopics(o, out)
	case o.alter:
		return svc.alterTopic(o, out)
	default:
		return svc.deleteTopics(o, out)
	}
}

// parseTopicOpts reads and checks the flags as TopicCommandOptions.checkArgs
// does in Kafka 2.8.
func parseTopicOpts(c *cli.Context) (*topicOpts, error) {
	o := &topicOpts{
		zookeeper: c.String("zookeeper"), bootstrap: c.String("bootstrap-server"), commandConfig: c.String("command-config"),
		create: c.Bool("create"), list: c.Bool("list"), describe: c.Bool("describe"), alter: c.Bool("alter"), delete: c.Bool("delete"),
		topic: c.String("topic"), hasTopic: c.IsSet("topic"),
		deleteConfigs: c.StringSlice("delete-config"), disableRackAware: c.Bool("disable-rack-aware"),
		ifExists: c.Bool("if-exists"), ifNotExists: c.Bool("if-not-exists"),
		underReplicated: c.Bool("under-replicated-partitions"), unavailable: c.Bool("unavailable-partitions"),
		underMinISR: c.Bool("under-min-isr-partitions"), atMinISR: c.Bool("at-min-isr-partitions"),
		withOverrides: c.Bool("topics-with-overrides"), excludeInternal: c.Bool("exclude-internal"),
	}
	actions := 0
	for _, a := range []bool{o.create, o.list, o.describe, o.alter, o.delete} {
		if a {
			actions++
		}
	}
	if actions != 1 {
		return nil, tool.Error("Command must include exactly one action: --list, --describe, --create, --alter or --delete")
	}
	if (o.zookeeper == "") == (o.bootstrap == "") {
		return nil, tool.Error("Only one of --bootstrap-server or --zookeeper must be specified")
	}
	if !o.list && !o.describe && !o.hasTopic {
		return nil, tool.Error(`Missing required argument "[topic]"`)
	}
	var err error
	if c.IsSet("partitions") {
		if o.partitions, err = parseInt32Opt("partitions", c.String("partitions")); err != nil {
			return nil, err
		}
		o.hasPartitions = true
	}
	if c.IsSet("replication-factor") {
		if o.replicationFactor, err = parseInt32Opt("replication-factor", c.String("replication-factor")); err != nil {
			return nil, err
		}
		o.hasReplicationFactor = true
	}
	if c.IsSet("replica-assignment") {
		if o.replicaAssignment, err = parseReplicaAssignment(c.String("replica-assignment")); err != nil {
			return nil, err
		}
	}
	if o.configs, err = parseConfigArgs(c.StringSlice("config")); err != nil {
		return nil, err
	}
	invalid := func(opt string, bad bool, with string) error {
		if bad {
			return tool.Errorf("Option \"[%s]\" can't be used with option \"[%s]\"", opt, with)
		}
		return nil
	}
	reports := 0
	for _, r := range []bool{o.underReplicated, o.unavailable, o.underMinISR, o.atMinISR, o.withOverrides} {
		if r {
			reports++
		}
	}
	checks := []error{
		invalid("replica-assignment", o.replicaAssignment != nil && o.create && (o.hasPartitions || o.hasReplicationFactor), "partitions or replication-factor"),
		invalid("replication-factor", o.hasReplicationFactor && !o.create, "alter, describe, list or delete"),
		invalid("partitions", o.hasPartitions && !o.create && !o.alter, "describe, list or delete"),
		invalid("config", len(o.configs) > 0 && !o.create && !o.alter, "describe, list or delete"),
		invalid("config", len(o.configs) > 0 && o.alter && o.bootstrap != "", "bootstrap-server"),
		invalid("delete-config", len(o.deleteConfigs) > 0 && (!o.alter || o.bootstrap != ""), "create, describe, list, delete or bootstrap-server"),
		invalid("if-not-exists", o.ifNotExists && !o.create, "alter, describe, list or delete"),
		invalid("if-exists", o.ifExists && (o.create || o.list), "create or list"),
		invalid("under-replicated-partitions", reports > 1 || (reports == 1 && !o.describe), "the other describe report options or a non-describe action"),
		invalid("under-min-isr-partitions", (o.underMinISR || o.atMinISR) && o.zookeeper != "", "zookeeper"),
		invalid("exclude-internal", o.excludeInternal && !o.list && !o.describe, "create, alter or delete"),
	}
	for _, e := range checks {
		if e != nil {
			return nil, e
		}
	}
	if o.create && o.zookeeper != "" && o.replicaAssignment == nil {
		if !o.hasPartitions {
			return nil, tool.Error(`Missing required argument "[partitions]"`)
		}
		if !o.hasReplicationFactor {
			return nil, tool.Error(`Missing required argument "[replication-factor]"`)
		}
	}
	if o.alter && o.bootstrap != "" && !o.hasPartitions {
		return nil, tool.Error(`Missing required argument "[partitions]"`)
	}
	return o, nil
}

func parseInt32Opt(name, s string) (int32, error) {
	n, err := strconv.ParseInt(strings.TrimSpace(s), 10, 32)
	if err != nil {
		return 0, tool.Errorf("Cannot parse argument '%s' of option %s", s, name)
	}
	return int32(n), nil
}

// parseReplicaAssignment parses "1:2,2:3,3:1" as Kafka's
// TopicCommand.parseReplicaAssignment: partitions by comma, replicas by
// colon, all partitions with the same replication factor, no duplicates.
func parseReplicaAssignment(s string) (map[int32][]int32, error) {
	out := make(map[int32][]int32)
	for i, part := range strings.Split(s, ",") {
		var replicas []int32
		seen := make(map[int32]bool)
		var dups []string
		for _, r := range strings.Split(part, ":") {
			n, err := strconv.ParseInt(strings.TrimSpace(r), 10, 32)
			if err != nil {
				return nil, tool.Errorf("For input string: %q", strings.TrimSpace(r))
			}
			if seen[int32(n)] {
				dups = append(dups, strconv.FormatInt(n, 10))
			}
			seen[int32(n)] = true
			replicas = append(replicas, int32(n))
		}
		if len(dups) > 0 {
			return nil, tool.Errorf("Partition replica lists may not contain duplicate entries: %s", strings.Join(dups, ","))
		}
		out[int32(i)] = replicas
		if len(replicas) != len(out[0]) {
			return nil, tool.Errorf("Partition %d has different replication factor: %s", i, tool.JoinInt32(replicas))
		}
	}
	return out, nil
}

// parseConfigArgs parses repeated --config name=value arguments.
func parseConfigArgs(args []string) (map[string]string, error) {
	out := make(map[string]string, len(args))
	for _, a := range args {
		k, v, ok := strings.Cut(a, "=")
		if !ok || strings.TrimSpace(k) == "" {
			return nil, tool.Errorf("Invalid topic config: all configs to be added must be in the format \"key=val\".")
		}
		out[strings.TrimSpace(k)] = strings.TrimSpace(v)
	}
	return out, nil
}

// filterTopics applies --topic (a whole-name regex, ',' meaning '|') and
// --exclude-internal to a sorted list, as Kafka's doGetTopics.
func filterTopics(all []string, o *topicOpts) ([]string, error) {
	var re *regexp.Regexp
	if o.hasTopic {
		raw := strings.TrimSpace(o.topic)
		raw = strings.ReplaceAll(strings.ReplaceAll(raw, ",", "|"), " ", "")
		raw = strings.Trim(raw, `"'`)
		var err error
		if re, err = regexp.Compile("^(?:" + raw + ")$"); err != nil {
			return nil, tool.Errorf("%s is an invalid regex", o.topic)
		}
	}
	var out []string
	for _, t := range all {
		if internalTopics[t] && o.excludeInternal {
			continue
		}
		if re != nil && !re.MatchString(t) {
			continue
		}
		out = append(out, t)
	}
	sort.Strings(out)
	return out, nil
}

// ensureTopicExists fails like Kafka's TopicCommand.ensureTopicExists when
// --topic matched nothing and --if-exists was not given.
func ensureTopicExists(found []string, o *topicOpts) error {
	if len(found) == 0 && o.hasTopic && !o.ifExists {
		return tool.Errorf("Topic '%s' does not exist as expected", o.topic)
	}
	return nil
}

// existingTopics lists the topics --topic matches through list and fails
// as ensureTopicExists when it matches none.
func existingTopics(list func(*topicOpts) ([]string, error), o *topicOpts) ([]string, error) {
	topics, err := list(o)
	if err != nil {
		return nil, err
	}
	if err := ensureTopicExists(topics, o); err != nil {
		return nil, err
	}
	return topics, nil
}

func hasCollisionChars(topic string) bool {
	return strings.ContainsAny(topic, "._")
}
