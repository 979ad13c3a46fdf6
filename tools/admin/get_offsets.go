package admin

// kafka-get-offsets: Kafka 2.8's GetOffsetShell ("kafka-run-class.sh
// kafka.tools.GetOffsetShell"): print topic:partition:offset for the
// earliest (-2), latest (-1) or first offset at or after a timestamp.
//
// Behaviour:
//   - --broker-list as Kafka 2.8, and --bootstrap-server (Kafka 3.0's
//     name) as an alias; host:port pairs are checked as ToolsUtils does;
//   - --partitions limits the output; unknown ones are reported on stderr;
//     partitions without a leader are skipped with Kafka's error line;
//   - a timestamp with no offset at or after it prints "topic:p:" (Kafka
//     prints an empty offset);
//   - --offsets and --max-wait-ms are accepted and ignored, as in Kafka;
//   - the tool never creates topics (Sarama's auto-creation is off).

import (
	"fmt"
	"slices"
	"sort"
	"strconv"
	"strings"

	"github.com/IBM/sarama"
	"github.com/urfave/cli/v2"

	"samsa/tools/internal/tool"
)

func GetOffsetsCommand(env tool.Env) *cli.Command {
	return &cli.Command{
		Name:  "kafka-get-offsets",
		Usage: "an interactive shell for getting topic offsets (kafka.tools.GetOffsetShell)",
		Flags: []cli.Flag{
			&cli.StringFlag{Name: "broker-list", Usage: "REQUIRED: the list of hostname and port of the server to connect to"},
			&cli.StringFlag{Name: "bootstrap-server", Usage: "alias of --broker-list (Kafka 3.0)"},
			&cli.StringFlag{Name: "topic", Usage: "REQUIRED: the topic to get offsets from"},
			&cli.StringFlag{Name: "partitions", Usage: "comma separated list of partition ids; default: all partitions"},
			&cli.StringFlag{Name: "time", Value: "-1", Usage: "timestamp/-1(latest)/-2(earliest)"},
			&cli.StringFlag{Name: "offsets", Usage: "DEPRECATED AND IGNORED: number of offsets returned"},
			&cli.StringFlag{Name: "max-wait-ms", Usage: "DEPRECATED AND IGNORED: the max amount of time each fetch request waits"},
		},
		Action: tool.ErrorExitAction(env, runGetOffsets),
	}
}

func runGetOffsets(c *cli.Context, env tool.Env) error {
	servers := c.String("broker-list")
	if servers == "" {
		servers = c.String("bootstrap-server")
	}
	if servers == "" {
		return tool.Error(`Missing required argument "[broker-list]"`)
	}
	topic := c.String("topic")
	if topic == "" {
		return tool.Error(`Missing required argument "[topic]"`)
	}
	if err := tool.CheckHostPorts(servers); err != nil {
		return err
	}
	requested := map[int32]bool{}
	if s := c.String("partitions"); s != "" {
		for _, p := range strings.Split(s, ",") {
			n, err := strconv.ParseInt(p, 10, 32)
			if err != nil {
				return tool.Errorf("--partitions expects a comma separated list of numeric partition ids, but received: %s", s)
			}
			requested[int32(n)] = true
		}
	}
	ts, err := strconv.ParseInt(strings.TrimSpace(c.String("time")), 10, 64)
	if err != nil {
		return tool.Errorf("Cannot parse argument '%s' of option time", c.String("time"))
	}
	client, _, err := tool.NewQueryClient(servers, "GetOffsetShell", "")
	if err != nil {
		return err
	}
	defer client.Close()
	topics, err := client.Topics()
	if err != nil {
		return err
	}
	if !slices.Contains(topics, topic) {
		return tool.Errorf("Topic %s does not exist", topic)
	}
	all, err := client.Partitions(topic)
	if err != nil {
		return err
	}
	var parts []int32
	for _, p := range all {
		if len(requested) == 0 || requested[p] {
			parts = append(parts, p)
		}
	}
	if len(parts) == 0 {
		if len(requested) == 0 {
			return tool.Errorf("Topic %s has 0 partitions", topic)
		}
		return tool.Errorf("Topic %s does not have any of the requested partitions %s", topic, tool.JoinInt32(sortedPartitions(requested)))
	}
	for _, p := range sortedPartitions(requested) {
		if !slices.Contains(all, p) {
			fmt.Fprintf(env.Stderr, "Error: partition %d does not exist\n", p)
		}
	}
	sort.Slice(parts, func(i, j int) bool { return parts[i] < parts[j] })
	for _, p := range parts {
		if _, err := client.Leader(topic, p); err != nil {
			fmt.Fprintf(env.Stderr, "Error: partition %d does not have a leader. Skip getting offsets\n", p)
			continue
		}
		off, err := client.GetOffset(topic, p, ts)
		if err != nil {
			return err
		}
		shown := strconv.FormatInt(off, 10)
		if off < 0 && ts != sarama.OffsetNewest && ts != sarama.OffsetOldest {
			shown = ""
		}
		fmt.Fprintf(env.Stdout, "%s:%d:%s\n", topic, p, shown)
	}
	return nil
}

func sortedPartitions(set map[int32]bool) []int32 {
	out := make([]int32, 0, len(set))
	for p := range set {
		out = append(out, p)
	}
	sort.Slice(out, func(i, j int) bool { return out[i] < out[j] })
	return out
}
