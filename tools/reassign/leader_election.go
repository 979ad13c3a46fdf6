package reassign

// kafka-leader-election (Kafka 2.8 LeaderElectionCommand) and
// kafka-preferred-replica-election (the deprecated
// PreferredReplicaLeaderElectionCommand).
//
// Behaviour:
//   - kafka-leader-election --bootstrap-server S --election-type
//     preferred|unclean with exactly one of --all-topic-partitions,
//     --topic T --partition P, --path-to-json-file F
//     ({"partitions":[{"topic":"t","partition":0}]}) sends ElectLeaders to
//     the controller and prints "Successfully completed leader election
//     (PREFERRED) for partitions t-0, t-1", "Valid replica already elected
//     for partitions ..." and, per failure, "Error completing leader
//     election (PREFERRED) for partition: t-0: <exception>" (then exit 1);
//   - kafka-preferred-replica-election --bootstrap-server S
//     [--path-to-json-file F] does the same with its own wording
//     ("Successfully completed preferred replica election for partitions
//     ..."); with --zookeeper it writes /admin/preferred_replica_election
//     (every partition without a file) and the controller acts on it.

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"strings"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"
	"github.com/urfave/cli/v2"

	"samsa/kafka"
	"samsa/tools/internal/tool"
	"samsa/tools/topics"
	"samsa/zkutil"
)

func LeaderElectionCommand(env tool.Env) *cli.Command {
	return &cli.Command{
		Name:  "kafka-leader-election",
		Usage: "elect the preferred or an unclean leader of partitions",
		Flags: []cli.Flag{
			&cli.StringFlag{Name: "bootstrap-server", Usage: "REQUIRED: the server(s) to connect to"},
			&cli.StringFlag{Name: "admin.config", Usage: "configuration properties files to pass to the admin client"},
			&cli.StringFlag{Name: "election-type", Usage: "REQUIRED: type of election to attempt: PREFERRED or UNCLEAN"},
			&cli.StringFlag{Name: "topic", Usage: "name of topic for which to perform an election (requires --partition)"},
			&cli.IntFlag{Name: "partition", Value: -1, Usage: "partition id for which to perform an election (requires --topic)"},
			&cli.BoolFlag{Name: "all-topic-partitions", Usage: "perform election on all of the eligible topic partitions"},
			&cli.StringFlag{Name: "path-to-json-file", Usage: "the JSON file with the list of partitions for which leader elections should be performed"},
		},
		Action: func(c *cli.Context) error { return runLeaderElection(c, env) },
	}
}

func PreferredReplicaElectionCommand(env tool.Env) *cli.Command {
	return &cli.Command{
		Name:  "kafka-preferred-replica-election",
		Usage: "DEPRECATED: move leadership to the preferred replicas",
		Flags: []cli.Flag{
			&cli.StringFlag{Name: "bootstrap-server", Usage: "the server(s) to connect to (REQUIRED if --zookeeper is not given)"},
			&cli.StringFlag{Name: "zookeeper", Usage: "DEPRECATED: the connection string for the zookeeper connection"},
			&cli.StringFlag{Name: "admin.config", Usage: "admin client config properties file"},
			&cli.StringFlag{Name: "path-to-json-file", Usage: "the JSON file with the list of partitions for which preferred replica leader election should be done; all partitions without it"},
		},
		Action: func(c *cli.Context) error { return runPreferredReplicaElection(c, env) },
	}
}

func usageFail(env tool.Env, msg string) error {
	fmt.Fprintln(env.Stderr, msg)
	return tool.ExitError{Code: 1}
}

func runLeaderElection(c *cli.Context, env tool.Env) error {
	boot := c.String("bootstrap-server")
	if boot == "" {
		return usageFail(env, `Missing required option(s) [bootstrap-server]`)
	}
	var typ int8
	switch strings.ToUpper(c.String("election-type")) {
	case "PREFERRED":
		typ = 0
	case "UNCLEAN":
		typ = 1
	case "":
		return usageFail(env, `Missing required option(s) [election-type]`)
	default:
		return usageFail(env, fmt.Sprintf("Invalid election type: %s", c.String("election-type")))
	}
	sources := 0
	for _, set := range []bool{c.Bool("all-topic-partitions"), c.String("topic") != "", c.String("path-to-json-file") != ""} {
		if set {
			sources++
		}
	}
	if sources != 1 {
		return usageFail(env, "One and only one of the following options is required: all-topic-partitions, topic, path-to-json-file")
	}
	var tps []kafka.TopicPartition // nil: every partition
	switch {
	case c.String("topic") != "":
		if c.Int("partition") < 0 {
			return usageFail(env, "Missing required option(s) [partition]")
		}
		tps = []kafka.TopicPartition{{Topic: c.String("topic"), Partition: int32(c.Int("partition"))}}
	case c.String("path-to-json-file") != "":
		var err error
		if tps, err = readElectionJSON(c.String("path-to-json-file")); err != nil {
			fmt.Fprintln(env.Stderr, electionExceptionText(err))
			return tool.ExitError{Code: 1}
		}
	}
	name := []string{"PREFERRED", "UNCLEAN"}[typ]
	succeeded, noop, failed, err := electLeaders(boot, "leader-election", typ, tps)
	if err != nil {
		fmt.Fprintln(env.Stderr, "Error while making request")
		fmt.Fprintln(env.Stderr, err)
		return tool.ExitError{Code: 1}
	}
	if len(succeeded) > 0 {
		fmt.Fprintf(env.Stdout, "Successfully completed leader election (%s) for partitions %s\n", name, joinTPsComma(succeeded))
	}
	if len(noop) > 0 {
		fmt.Fprintf(env.Stdout, "Valid replica already elected for partitions %s\n", joinTPsComma(noop))
	}
	if len(failed) > 0 {
		for _, tp := range sortedTPs(failed) {
			fmt.Fprintf(env.Stdout, "Error completing leader election (%s) for partition: %s: %s\n", name, tp, failed[tp])
		}
		fmt.Fprintf(env.Stderr, "Exception in thread \"main\" kafka.common.AdminCommandFailedException: %d replica(s) could not be elected\n", len(failed))
		return tool.ExitError{Code: 1}
	}
	return nil
}

func runPreferredReplicaElection(c *cli.Context, env tool.Env) error {
	zkConnect, boot := c.String("zookeeper"), c.String("bootstrap-server")
	if (zkConnect == "") == (boot == "") {
		return usageFail(env, "Exactly one of '--bootstrap-server' or '--zookeeper' must be provided")
	}
	fmt.Fprintln(env.Stdout, "This tool is deprecated. Please use kafka-leader-election tool. Tool usage: kafka-leader-election.sh --help")
	var tps []kafka.TopicPartition
	if f := c.String("path-to-json-file"); f != "" {
		var err error
		if tps, err = readElectionJSON(f); err != nil {
			fmt.Fprintln(env.Stderr, electionExceptionText(err))
			return tool.ExitError{Code: 1}
		}
	}
	if zkConnect != "" {
		fmt.Fprintln(env.Stdout, "Warning: --zookeeper is deprecated and will be removed in a future version of Kafka.")
		fmt.Fprintln(env.Stdout, "Use --bootstrap-server instead to specify a broker to connect to.")
		return preferredElectionZK(zkConnect, tps, env)
	}
	succeeded, noop, failed, err := electLeaders(boot, "preferred-replica-election", 0, tps)
	if err != nil {
		fmt.Fprintln(env.Stderr, err)
		return tool.ExitError{Code: 1}
	}
	if len(succeeded) > 0 {
		fmt.Fprintf(env.Stdout, "Successfully completed preferred replica election for partitions %s\n", joinTPsComma(succeeded))
	}
	if len(noop) > 0 {
		fmt.Fprintf(env.Stdout, "Preferred replica already elected for partitions %s\n", joinTPsComma(noop))
	}
	if len(failed) > 0 {
		for _, tp := range sortedTPs(failed) {
			fmt.Fprintf(env.Stdout, "Error completing preferred replica election for partition %s: %s\n", tp, failed[tp])
		}
		fmt.Fprintf(env.Stderr, "Exception in thread \"main\" kafka.common.AdminCommandFailedException: %d preferred replica(s) could not be elected\n", len(failed))
		return tool.ExitError{Code: 1}
	}
	return nil
}

// preferredElectionZK writes /admin/preferred_replica_election.
func preferredElectionZK(connect string, tps []kafka.TopicPartition, env tool.Env) error {
	svc, err := topics.NewZKTopicService(connect, tool.Logger(env, "kafka-preferred-replica-election"))
	if err != nil {
		fmt.Fprintln(env.Stderr, err)
		return tool.ExitError{Code: 1}
	}
	defer svc.Close()
	if tps == nil {
		topics, err := svc.Client().GetAllTopics()
		if err != nil {
			return err
		}
		as, err := svc.Client().GetTopicAssignments(topics)
		if err != nil {
			return err
		}
		for t, va := range as {
			for p := range va.Assignment.Partitions {
				tps = append(tps, kafka.TopicPartition{Topic: t, Partition: p})
			}
		}
	}
	kafka.SortPartitions(tps)
	zkTPs := make([]kafka.TopicPartition, len(tps))
	names := make([]string, len(tps))
	entries := make([]string, len(tps))
	for i, tp := range tps {
		zkTPs[i] = tp
		names[i] = tp.String()
		topic, _ := json.Marshal(tp.Topic)
		entries[i] = fmt.Sprintf(`{"topic":%s,"partition":%d}`, topic, tp.Partition)
	}
	err = svc.Client().CreatePreferredReplicaElection(zkTPs)
	if errors.Is(err, zkutil.ErrNodeExists) {
		fmt.Fprintf(env.Stdout, "Preferred replica leader election currently in progress for %s. Aborting operation\n", "Set("+strings.Join(names, ", ")+")")
		return tool.ExitError{Code: 1}
	}
	if err != nil {
		fmt.Fprintln(env.Stderr, err)
		return tool.ExitError{Code: 1}
	}
	fmt.Fprintf(env.Stdout, "Created preferred replica election path with {\"version\":1,\"partitions\":[%s]}\n", strings.Join(entries, ","))
	fmt.Fprintf(env.Stdout, "Successfully started preferred replica election for partitions Set(%s)\n", strings.Join(names, ", "))
	return nil
}

// electLeaders sends ElectLeaders (v1+ with the election type) to the
// controller; tps nil elects every partition.
func electLeaders(boot, clientID string, typ int8, tps []kafka.TopicPartition) (succeeded, noop []kafka.TopicPartition, failed map[kafka.TopicPartition]string, err error) {
	a, err := newKafkaAdmin(boot, clientID)
	if err != nil {
		return nil, nil, nil, err
	}
	defer a.close()
	req := kmsg.NewPtrElectLeadersRequest()
	req.ElectionType = typ
	req.TimeoutMillis = int32(adminRequestTimeout.Milliseconds())
	if tps != nil {
		req.Topics = []kmsg.ElectLeadersRequestTopic{}
		byTopic(tps, func(topic string) {
			rt := kmsg.NewElectLeadersRequestTopic()
			rt.Topic = topic
			req.Topics = append(req.Topics, rt)
		}, func(i int, tp kafka.TopicPartition) {
			req.Topics[i].Partitions = append(req.Topics[i].Partitions, tp.Partition)
		})
	}
	resp, err := a.toController(req, func(r kmsg.Response) int16 { return r.(*kmsg.ElectLeadersResponse).ErrorCode })
	if err != nil {
		return nil, nil, nil, err
	}
	er := resp.(*kmsg.ElectLeadersResponse)
	if er.ErrorCode != 0 {
		return nil, nil, nil, adminCodeError(er.ErrorCode, nil)
	}
	failed = map[kafka.TopicPartition]string{}
	for _, t := range er.Topics {
		for _, p := range t.Partitions {
			tp := kafka.TopicPartition{Topic: t.Topic, Partition: p.Partition}
			switch p.ErrorCode {
			case 0:
				succeeded = append(succeeded, tp)
			case kerr.ElectionNotNeeded.Code:
				noop = append(noop, tp)
			default:
				msg := tool.JavaExceptionText(p.ErrorCode)
				if p.ErrorMessage != nil && *p.ErrorMessage != "" {
					msg = tool.JavaExceptionClass(p.ErrorCode) + ": " + *p.ErrorMessage
				}
				failed[tp] = msg
			}
		}
	}
	kafka.SortPartitions(succeeded)
	kafka.SortPartitions(noop)
	return succeeded, noop, failed, nil
}

// readElectionJSON parses {"partitions":[{"topic":"t","partition":0}]}.
func readElectionJSON(file string) ([]kafka.TopicPartition, error) {
	data, err := os.ReadFile(file)
	if err != nil {
		return nil, tool.NoSuchFile(file, err)
	}
	var doc struct {
		Partitions *[]struct {
			Topic     *string      `json:"topic"`
			Partition *json.Number `json:"partition"`
		} `json:"partitions"`
	}
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.UseNumber()
	if err := dec.Decode(&doc); err != nil || doc.Partitions == nil {
		return nil, tool.JavaException{Class: "kafka.common.AdminCommandFailedException", Msg: "Replica election data is empty"}
	}
	seen := map[kafka.TopicPartition]bool{}
	var out, dups []kafka.TopicPartition
	for _, p := range *doc.Partitions {
		if p.Topic == nil || p.Partition == nil {
			return nil, tool.JavaException{Class: "kafka.common.AdminOperationException", Msg: "each partition needs topic and partition"}
		}
		n, err := p.Partition.Int64()
		if err != nil || n < 0 || n > 1<<31-1 {
			return nil, tool.JavaException{Class: "kafka.common.AdminOperationException", Msg: "bad partition " + p.Partition.String()}
		}
		tp := kafka.TopicPartition{Topic: *p.Topic, Partition: int32(n)}
		if seen[tp] {
			dups = append(dups, tp)
			continue
		}
		seen[tp] = true
		out = append(out, tp)
	}
	if len(dups) > 0 {
		return nil, tool.JavaException{Class: "kafka.common.AdminOperationException", Msg: "Replica election data contains duplicate partitions: " + joinTPs(dups)}
	}
	if len(out) == 0 {
		return nil, tool.JavaException{Class: "kafka.common.AdminCommandFailedException", Msg: "Replica election data is empty"}
	}
	return out, nil
}

func electionExceptionText(err error) string {
	var je tool.JavaException
	if errors.As(err, &je) {
		return fmt.Sprintf("Exception in thread \"main\" %s: %s", je.Class, je.Msg)
	}
	return err.Error()
}

func joinTPsComma(tps []kafka.TopicPartition) string {
	s := make([]string, len(tps))
	for i, tp := range tps {
		s[i] = tp.String()
	}
	return strings.Join(s, ", ")
}
