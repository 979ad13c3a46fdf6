package admin

// kafka-log-dirs: Kafka 2.8's LogDirsCommand: --describe the log directories
// of brokers (DescribeLogDirs API) as one line of JSON:
//
//	Querying brokers for log directories information
//	Received log directory information from brokers 1,2
//	{"version":1,"brokers":[{"broker":1,"logDirs":[{"logDir":"/data","error":null,"partitions":[{"partition":"t-0","size":0,"offsetLag":0,"isFuture":false}]}]}]}
//
// Behaviour:
//   - --broker-list "1,2" queries those brokers, else every broker of the
//     cluster; --topic-list "a,b" keeps only those topics' partitions;
//   - the JSON keys are in Kafka's order; brokers, log dirs and partitions are
//     sorted (Kafka prints them in hash-map order, which is not stable);
//   - a log dir error prints as the Java exception class Kafka would name
//     (org.apache.kafka.common.errors.KafkaStorageException), else null.

import (
	"bytes"
	"fmt"
	"sort"
	"strconv"
	"strings"

	"github.com/IBM/sarama"
	"github.com/urfave/cli/v2"

	"samsa/tools/internal/tool"
)

func LogDirsCommand(env tool.Env) *cli.Command {
	return &cli.Command{
		Name:  "kafka-log-dirs",
		Usage: "query log directory usage on the specified brokers",
		Flags: []cli.Flag{
			&cli.StringFlag{Name: "bootstrap-server", Usage: "REQUIRED: the server(s) to use for bootstrapping"},
			&cli.StringFlag{Name: "command-config", Usage: "property file containing configs to be passed to Admin Client"},
			&cli.BoolFlag{Name: "describe", Usage: "describe the specified log directories on the specified brokers"},
			&cli.StringFlag{Name: "topic-list", Usage: "the list of topics to be queried in the form \"topic1,topic2,topic3\"; all topics if absent"},
			&cli.StringFlag{Name: "broker-list", Usage: "the list of brokers to be queried in the form \"0,1,2\"; all brokers if absent"},
		},
		Action: tool.ErrorExitAction(env, runLogDirs),
	}
}

func runLogDirs(c *cli.Context, env tool.Env) error {
	servers := c.String("bootstrap-server")
	if servers == "" {
		return tool.Error(`Missing required argument "[bootstrap-server]"`)
	}
	if !c.Bool("describe") {
		return tool.Error(`Missing required argument "[describe]"`)
	}
	topics := map[string]bool{}
	for _, t := range strings.Split(c.String("topic-list"), ",") {
		if t != "" {
			topics[t] = true
		}
	}
	var brokerIDs []int32
	if c.IsSet("broker-list") {
		for _, s := range strings.Split(c.String("broker-list"), ",") {
			if s == "" {
				continue
			}
			n, err := strconv.ParseInt(s, 10, 32)
			if err != nil {
				return tool.JavaException{Class: "java.lang.NumberFormatException", Msg: fmt.Sprintf("For input string: %q", s)}
			}
			brokerIDs = append(brokerIDs, int32(n))
		}
	}
	props := map[string]string{}
	cfg, err := tool.NewSaramaConfig("log-dirs-tool", c.String("command-config"), props)
	if err != nil {
		return err
	}
	admin, err := sarama.NewClusterAdmin(tool.SplitList(servers), cfg)
	if err != nil {
		return err
	}
	defer admin.Close()
	if !c.IsSet("broker-list") {
		brokers, _, err := admin.DescribeCluster()
		if err != nil {
			return err
		}
		for _, b := range brokers {
			brokerIDs = append(brokerIDs, b.ID())
		}
		sort.Slice(brokerIDs, func(i, j int) bool { return brokerIDs[i] < brokerIDs[j] })
	}
	fmt.Fprintln(env.Stdout, "Querying brokers for log directories information")
	dirs, err := admin.DescribeLogDirs(brokerIDs)
	if err != nil {
		return tool.JavaException{Class: "java.util.concurrent.ExecutionException", Msg: tool.JavaErrorText(err)}
	}
	fmt.Fprintf(env.Stdout, "Received log directory information from brokers %s\n", tool.JoinInt32(brokerIDs))
	fmt.Fprintln(env.Stdout, logDirsJSON(dirs, topics))
	return nil
}

// logDirsJSON is LogDirsCommand.formatAsJson with sorted collections.
func logDirsJSON(byBroker map[int32][]sarama.DescribeLogDirsResponseDirMetadata, topics map[string]bool) string {
	ids := make([]int32, 0, len(byBroker))
	for id := range byBroker {
		ids = append(ids, id)
	}
	sort.Slice(ids, func(i, j int) bool { return ids[i] < ids[j] })
	var b bytes.Buffer
	b.WriteString(`{"version":1,"brokers":[`)
	for i, id := range ids {
		if i > 0 {
			b.WriteByte(',')
		}
		fmt.Fprintf(&b, `{"broker":%d,"logDirs":[`, id)
		dirs := append([]sarama.DescribeLogDirsResponseDirMetadata(nil), byBroker[id]...)
		sort.Slice(dirs, func(i, j int) bool { return dirs[i].Path < dirs[j].Path })
		for j, d := range dirs {
			if j > 0 {
				b.WriteByte(',')
			}
			errText := "null"
			if d.ErrorCode != sarama.ErrNoError {
				errText = tool.JSONString(tool.JavaExceptionClass(int16(d.ErrorCode)))
			}
			fmt.Fprintf(&b, `{"logDir":%s,"error":%s,"partitions":[`, tool.JSONString(d.Path), errText)
			type part struct {
				topic string
				p     sarama.DescribeLogDirsResponsePartition
			}
			var parts []part
			for _, t := range d.Topics {
				if len(topics) > 0 && !topics[t.Topic] {
					continue
				}
				for _, p := range t.Partitions {
					parts = append(parts, part{t.Topic, p})
				}
			}
			sort.Slice(parts, func(i, j int) bool {
				if parts[i].topic != parts[j].topic {
					return parts[i].topic < parts[j].topic
				}
				return parts[i].p.PartitionID < parts[j].p.PartitionID
			})
			for k, p := range parts {
				if k > 0 {
					b.WriteByte(',')
				}
				fmt.Fprintf(&b, `{"partition":%s,"size":%d,"offsetLag":%d,"isFuture":%t}`,
					tool.JSONString(fmt.Sprintf("%s-%d", p.topic, p.p.PartitionID)), p.p.Size, p.p.OffsetLag, p.p.IsTemporary)
			}
			b.WriteString(`]}`)
		}
		b.WriteString(`]}`)
	}
	b.WriteString(`]}`)
	return b.String()
}
