package admin

// kafka-delete-records: Kafka 2.8's DeleteRecordsCommand: delete the records
// of partitions below the offsets of a JSON file (DeleteRecords API):
//
//	{"partitions": [{"topic": "foo", "partition": 1, "offset": 1}], "version": 1}
//
// prints
//
//	Executing records delete operation
//	Records delete operation completed:
//	partition: foo-1	low_watermark: 1
//	partition: foo-2	error: org.apache.kafka.common.errors.OffsetOutOfRangeException: The requested offset is not within the range of offsets maintained by the server.
//
// Behaviour:
//   - offset -1 means "up to the high watermark", as in Kafka;
//   - file errors are reported as Kafka's tool dies on them ("Exception in
//     thread "main" kafka.admin.AdminOperationException: ...");
//   - result lines are sorted by topic and partition (Kafka prints them in
//     hash-map order);
//   - requests go to each partition's leader, one request per leader.

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"sort"
	"strings"
	"time"

	"github.com/IBM/sarama"
	"github.com/urfave/cli/v2"

	"samsa/kafka"
	"samsa/tools/internal/tool"
)

// deleteRecordsTimeout is the Admin client's default request timeout.
const deleteRecordsTimeout = 30 * time.Second

type deleteRecordsTarget struct {
	Topic     string
	Partition int32
	Offset    int64
}

func DeleteRecordsCommand(env tool.Env) *cli.Command {
	return &cli.Command{
		Name:  "kafka-delete-records",
		Usage: "delete records of the given partitions down to the specified offset",
		Flags: []cli.Flag{
			&cli.StringFlag{Name: "bootstrap-server", Usage: "REQUIRED: the server to connect to"},
			&cli.StringFlag{Name: "offset-json-file", Usage: "REQUIRED: the JSON file with offset per partition"},
			&cli.StringFlag{Name: "command-config", Usage: "a property file containing configs to be passed to Admin Client"},
		},
		Action: tool.ErrorExitAction(env, runDeleteRecords),
	}
}

// parseDeleteRecordsJSON is DeleteRecordsCommand.parseOffsetJsonStringWithoutDedup
// followed by the duplicate check.
func parseDeleteRecordsJSON(data []byte) ([]deleteRecordsTarget, error) {
	fail := func(msg string) error {
		return tool.JavaException{Class: "kafka.admin.AdminOperationException", Msg: msg}
	}
	var doc struct {
		Version    *json.Number
		Partitions *[]struct {
			Topic     *string
			Partition *json.Number
			Offset    *json.Number
		}
	}
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.UseNumber()
	if err := dec.Decode(&doc); err != nil {
		return nil, fail("The input string is not a valid JSON")
	}
	if doc.Version != nil && doc.Version.String() != "1" {
		return nil, fail(fmt.Sprintf("Not supported version field value %s", doc.Version))
	}
	if doc.Partitions == nil {
		return nil, fail("Missing partitions field")
	}
	var out []deleteRecordsTarget
	seen := map[string]int{}
	var dups []string
	for _, p := range *doc.Partitions {
		if p.Topic == nil || p.Partition == nil || p.Offset == nil {
			return nil, tool.JavaException{Class: "kafka.utils.json.JsonMappingException", Msg: "each partition needs topic, partition and offset"}
		}
		part, err1 := p.Partition.Int64()
		off, err2 := p.Offset.Int64()
		if err1 != nil || err2 != nil || part < 0 || part > 1<<31-1 {
			return nil, tool.JavaException{Class: "kafka.utils.json.JsonMappingException", Msg: fmt.Sprintf("bad partition %s or offset %s", p.Partition, p.Offset)}
		}
		tp := fmt.Sprintf("%s-%d", *p.Topic, part)
		if seen[tp]++; seen[tp] == 2 {
			dups = append(dups, tp)
		}
		out = append(out, deleteRecordsTarget{*p.Topic, int32(part), off})
	}
	if len(dups) > 0 {
		return nil, tool.JavaException{Class: "kafka.common.AdminCommandFailedException", Msg: "Offset json file contains duplicate topic partitions: " + strings.Join(dups, ",")}
	}
	return out, nil
}

func runDeleteRecords(c *cli.Context, env tool.Env) error {
	servers := c.String("bootstrap-server")
	if servers == "" {
		return tool.Error(`Missing required argument "[bootstrap-server]"`)
	}
	file := c.String("offset-json-file")
	if file == "" {
		return tool.Error(`Missing required argument "[offset-json-file]"`)
	}
	data, err := os.ReadFile(file)
	if err != nil {
		return tool.NoSuchFile(file, err)
	}
	targets, err := parseDeleteRecordsJSON(data)
	if err != nil {
		return err
	}
	client, cfg, err := tool.NewQueryClient(servers, "delete-records", c.String("command-config"))
	if err != nil {
		return err
	}
	defer client.Close()
	fmt.Fprintln(env.Stdout, "Executing records delete operation")
	results := deleteRecords(client, cfg, targets)
	fmt.Fprintln(env.Stdout, "Records delete operation completed:")
	sort.Slice(targets, func(i, j int) bool {
		if targets[i].Topic != targets[j].Topic {
			return targets[i].Topic < targets[j].Topic
		}
		return targets[i].Partition < targets[j].Partition
	})
	for _, t := range targets {
		r := results[kafka.TopicPartition{Topic: t.Topic, Partition: t.Partition}]
		if r.err != "" {
			fmt.Fprintf(env.Stdout, "partition: %s-%d\terror: %s\n", t.Topic, t.Partition, r.err)
		} else {
			fmt.Fprintf(env.Stdout, "partition: %s-%d\tlow_watermark: %d\n", t.Topic, t.Partition, r.lowWatermark)
		}
	}
	return nil
}

type deleteResult struct {
	lowWatermark int64
	err          string // Kafka's exception text; empty on success
}

// deleteRecords sends one DeleteRecords request per partition leader.
func deleteRecords(client sarama.Client, cfg *sarama.Config, targets []deleteRecordsTarget) map[kafka.TopicPartition]deleteResult {
	results := make(map[kafka.TopicPartition]deleteResult, len(targets))
	byLeader := map[*sarama.Broker]*sarama.DeleteRecordsRequest{}
	for _, t := range targets {
		leader, err := client.Leader(t.Topic, t.Partition)
		if err != nil {
			results[kafka.TopicPartition{Topic: t.Topic, Partition: t.Partition}] = deleteResult{err: tool.JavaErrorText(err)}
			continue
		}
		req := byLeader[leader]
		if req == nil {
			req = &sarama.DeleteRecordsRequest{Version: 1, Topics: map[string]*sarama.DeleteRecordsRequestTopic{}, Timeout: deleteRecordsTimeout}
			byLeader[leader] = req
		}
		rt := req.Topics[t.Topic]
		if rt == nil {
			rt = &sarama.DeleteRecordsRequestTopic{PartitionOffsets: map[int32]int64{}}
			req.Topics[t.Topic] = rt
		}
		rt.PartitionOffsets[t.Partition] = t.Offset
	}
	for leader, req := range byLeader {
		resp, err := sendDeleteRecords(leader, cfg, req)
		for topic, rt := range req.Topics {
			for p := range rt.PartitionOffsets {
				k := kafka.TopicPartition{Topic: topic, Partition: p}
				if err != nil {
					results[k] = deleteResult{err: tool.JavaErrorText(err)}
					continue
				}
				var rp *sarama.DeleteRecordsResponsePartition
				if t := resp.Topics[topic]; t != nil {
					rp = t.Partitions[p]
				}
				switch {
				case rp == nil:
					results[k] = deleteResult{err: tool.JavaExceptionText(int16(sarama.ErrUnknown))}
				case rp.Err != sarama.ErrNoError:
					results[k] = deleteResult{err: tool.JavaExceptionText(int16(rp.Err))}
				default:
					results[k] = deleteResult{lowWatermark: rp.LowWatermark}
				}
			}
		}
	}
	return results
}

func sendDeleteRecords(b *sarama.Broker, cfg *sarama.Config, req *sarama.DeleteRecordsRequest) (*sarama.DeleteRecordsResponse, error) {
	if ok, _ := b.Connected(); !ok {
		if err := b.Open(cfg); err != nil {
			return nil, err
		}
	}
	return b.DeleteRecords(req)
}
