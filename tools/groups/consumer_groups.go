package groups

// kafka-consumer-groups: list, describe, reset, delete consumer groups
// (Kafka 2.8 ConsumerGroupCommand). With --bootstrap-server it speaks the
// group coordinator protocol through Sarama's ClusterAdmin; with
// --zookeeper it reads the old consumers' /consumers tree (Kafka 1.x's
// ZkConsumerGroupService: --list and --describe only).

import (
	"errors"
	"fmt"
	"sort"
	"strings"

	"github.com/IBM/sarama"
	"github.com/urfave/cli/v2"

	"samsa/tools/internal/tool"
)

// missingColumn is Kafka's MISSING_COLUMN_VALUE.
const missingColumn = "-"

func Command(env tool.Env) *cli.Command {
	return &cli.Command{
		Name:  "kafka-consumer-groups",
		Usage: "list, describe, reset offsets of and delete consumer groups",
		Flags: []cli.Flag{
			&cli.StringFlag{Name: "bootstrap-server", Usage: "broker(s) to connect to, host:port[,host:port]"},
			&cli.StringFlag{Name: "zookeeper", Usage: "ZooKeeper connect string, for old (ZooKeeper-based) consumers: --list and --describe"},
			&cli.StringFlag{Name: "command-config", Usage: "admin client properties file"},
			&cli.BoolFlag{Name: "list", Usage: "list all consumer groups"},
			&cli.BoolFlag{Name: "describe", Usage: "describe consumer group(s)"},
			&cli.BoolFlag{Name: "delete", Usage: "delete consumer group(s)"},
			&cli.BoolFlag{Name: "delete-offsets", Usage: "delete the committed offsets of a group for --topic"},
			&cli.BoolFlag{Name: "reset-offsets", Usage: "reset the committed offsets of inactive group(s)"},
			&cli.StringSliceFlag{Name: "group", Usage: "consumer group (repeatable)"},
			&cli.BoolFlag{Name: "all-groups", Usage: "apply to all consumer groups"},
			&cli.StringSliceFlag{Name: "topic", Usage: "topic, or topic:p,p (reset-offsets; repeatable)"},
			&cli.BoolFlag{Name: "all-topics", Usage: "reset-offsets: every topic the group has offsets for"},
			&cli.BoolFlag{Name: "offsets", Usage: "describe: offsets and lag (default)"},
			&cli.BoolFlag{Name: "members", Usage: "describe: members"},
			&cli.BoolFlag{Name: "state", Usage: "describe: group state"},
			&cli.BoolFlag{Name: "verbose", Usage: "describe --members: with the assignment; describe --state: with the last rebalances and their reasons (needs --metrics-url)"},
			&cli.StringFlag{Name: "metrics-url", Usage: "Samsa: the brokers' metrics.listener URLs (http://host:port[,...]), where --describe --state --verbose reads the rebalance reasons"},
			&cli.BoolFlag{Name: "dry-run", Usage: "reset-offsets: only show the new offsets"},
			&cli.BoolFlag{Name: "execute", Usage: "reset-offsets: commit the new offsets"},
			&cli.BoolFlag{Name: "to-earliest", Usage: "reset to the earliest offset"},
			&cli.BoolFlag{Name: "to-latest", Usage: "reset to the latest offset"},
			&cli.BoolFlag{Name: "to-current", Usage: "reset to the current (committed) offset"},
			&cli.Int64Flag{Name: "to-offset", Usage: "reset to this offset"},
			&cli.Int64Flag{Name: "shift-by", Usage: "shift the current offset by n (may be negative)"},
			&cli.StringFlag{Name: "to-datetime", Usage: "reset to the first offset at or after YYYY-MM-DDTHH:mm:SS.sss"},
			&cli.StringFlag{Name: "by-duration", Usage: "reset to the first offset at or after now minus PnDTnHnMnS"},
			&cli.IntFlag{Name: "timeout", Value: 5000, Usage: "accepted for compatibility (ms)"},
		},
		Action: tool.ErrorExitAction(env, runConsumerGroups),
	}
}

func runConsumerGroups(c *cli.Context, env tool.Env) error {
	actions := 0
	for _, a := range []string{"list", "describe", "delete", "delete-offsets", "reset-offsets"} {
		if c.Bool(a) {
			actions++
		}
	}
	if actions != 1 {
		return tool.Error("Command must include exactly one action: --list, --describe, --delete, --reset-offsets, --delete-offsets")
	}
	if c.IsSet("zookeeper") {
		if c.IsSet("bootstrap-server") {
			return tool.Error("Option [zookeeper] cannot be used with option [bootstrap-server]")
		}
		return runConsumerGroupsZK(c, env)
	}
	if c.String("bootstrap-server") == "" {
		return tool.Error("Missing required argument \"[bootstrap-server]\"")
	}
	groups := c.StringSlice("group")
	needGroup := c.Bool("describe") || c.Bool("delete") || c.Bool("reset-offsets")
	if needGroup && len(groups) == 0 && !c.Bool("all-groups") {
		return tool.Error("Option [describe|delete|reset-offsets] takes one of these options: [all-groups], [group]")
	}
	svc, err := newGroupService(c.String("bootstrap-server"), c.String("command-config"))
	if err != nil {
		return err
	}
	defer svc.close()
	if c.Bool("all-groups") {
		if groups, err = svc.listGroups(); err != nil {
			return err
		}
	}
	switch {
	case c.Bool("list"):
		all, err := svc.listGroups()
		if err != nil {
			return err
		}
		for _, g := range all {
			fmt.Fprintln(env.Stdout, g)
		}
		return nil
	case c.Bool("describe"):
		return svc.describe(env, groups, c)
	case c.Bool("delete"):
		return svc.deleteGroups(env, groups)
	case c.Bool("delete-offsets"):
		if len(groups) != 1 || len(c.StringSlice("topic")) == 0 {
			return tool.Error("Option [delete-offsets] takes the following options: [group], [topic]")
		}
		return svc.deleteOffsets(env, groups[0], c.StringSlice("topic"))
	default:
		return svc.resetOffsets(env, groups, c)
	}
}

// groupService holds the admin and plain clients of one invocation.
type groupService struct {
	client sarama.Client
	admin  sarama.ClusterAdmin
}

func newGroupService(servers, configFile string) (*groupService, error) {
	client, _, err := tool.NewQueryClient(servers, "adminclient-1", configFile)
	if err != nil {
		return nil, err
	}
	admin, err := sarama.NewClusterAdminFromClient(client)
	if err != nil {
		client.Close()
		return nil, err
	}
	return &groupService{client: client, admin: admin}, nil
}

// close closes the admin, which closes the client too.
func (s *groupService) close() { s.admin.Close() }

func (s *groupService) listGroups() ([]string, error) {
	m, err := s.admin.ListConsumerGroups()
	if err != nil {
		return nil, err
	}
	out := make([]string, 0, len(m))
	for g := range m {
		out = append(out, g)
	}
	sort.Strings(out)
	return out, nil
}

func (s *groupService) deleteGroups(env tool.Env, groups []string) error {
	var ok []string
	failed := map[string]error{}
	for _, g := range groups {
		if err := s.admin.DeleteConsumerGroup(g); err != nil {
			failed[g] = err
			continue
		}
		ok = append(ok, g)
	}
	if len(failed) == 0 {
		fmt.Fprintf(env.Stdout, "Deletion of requested consumer groups (%s) was successful.\n", quoteJoin(ok))
		return nil
	}
	fmt.Fprintln(env.Stdout, "\nError: Deletion of some consumer groups failed:")
	for _, g := range groups {
		if err, bad := failed[g]; bad {
			fmt.Fprintf(env.Stdout, "* Group '%s' could not be deleted due to: java.util.concurrent.ExecutionException: %s\n", g, tool.JavaErrorText(err))
		}
	}
	if len(ok) > 0 {
		fmt.Fprintf(env.Stdout, "\nThese consumer groups were deleted successfully: %s\n", quoteJoin(ok))
	}
	return tool.ExitError{Code: 1}
}

func quoteJoin(items []string) string {
	q := make([]string, len(items))
	for i, s := range items {
		q[i] = "'" + s + "'"
	}
	return strings.Join(q, ", ")
}

// kafkaErrorMessage is the message of a Kafka error code (Java's
// getMessage()), else err's text.
func kafkaErrorMessage(err error) string {
	var ke sarama.KError
	if errors.As(err, &ke) {
		if e, ok := tool.Kafka28Errors[int16(ke)]; ok {
			return e.Message
		}
	}
	return err.Error()
}

func (s *groupService) deleteOffsets(env tool.Env, group string, topics []string) error {
	type res struct {
		topic string
		p     int32
		err   error
	}
	var results []res
	for _, spec := range topics {
		topic, parts, err := s.topicPartitions(spec)
		if err != nil {
			return err
		}
		for _, p := range parts {
			results = append(results, res{topic, p, s.admin.DeleteConsumerGroupOffset(group, topic, p)})
		}
	}
	failed := false
	for _, r := range results {
		failed = failed || r.err != nil
	}
	if !failed {
		fmt.Fprintf(env.Stdout, "Request succeed for deleting offsets with topic %s group %s\n", strings.Join(topics, ", "), group)
	} else {
		fmt.Fprintf(env.Stdout, "\nError: Encounter some partition level error, see the follow-up details:\n")
	}
	fmt.Fprintf(env.Stdout, "\n%-30s %-15s %-15s\n", "TOPIC", "PARTITION", "STATUS")
	for _, r := range results {
		status := "Successful"
		if r.err != nil {
			status = "Error: " + kafkaErrorMessage(r.err)
		}
		fmt.Fprintf(env.Stdout, "%-30s %-15d %-15s\n", r.topic, r.p, status)
	}
	if failed {
		return tool.ExitError{Code: 1}
	}
	return nil
}
