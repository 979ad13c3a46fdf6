package reassign

// JSON files of kafka-reassign-partitions (Kafka 2.8
// ReassignPartitionsCommand): the reassignment file
//
//	{"version":1,"partitions":[{"topic":"t","partition":0,"replicas":[2,3],"log_dirs":["any","any"]}]}
//
// and the topics-to-move file {"topics":[{"topic":"t"}],"version":1}.

import (
	"bytes"
	"encoding/json"
	"fmt"
	"slices"
	"strconv"
	"strings"

	"samsa/kafka"
	"samsa/tools/internal/tool"
)

// sortedTPs returns the keys of m sorted by topic, then partition
// (Kafka's compareTopicPartitions).
func sortedTPs[V any](m map[kafka.TopicPartition]V) []kafka.TopicPartition {
	out := make([]kafka.TopicPartition, 0, len(m))
	for tp := range m {
		out = append(out, tp)
	}
	kafka.SortPartitions(out)
	return out
}

func joinTPs(tps []kafka.TopicPartition) string {
	s := make([]string, len(tps))
	for i, tp := range tps {
		s[i] = tp.String()
	}
	return strings.Join(s, ",")
}

// maxReassignEntries bounds the partitions one file may name.
const maxReassignEntries = 1 << 20

// parseReassignmentJSON is parsePartitionReassignmentData with Kafka's
// validation (empty list, empty or duplicate replicas, duplicate partitions).
func parseReassignmentJSON(data []byte) (map[kafka.TopicPartition][]int32, []kafka.TopicPartition, error) {
	var doc struct {
		Version    *json.Number `json:"version"`
		Partitions *[]struct {
			Topic     *string        `json:"topic"`
			Partition *json.Number   `json:"partition"`
			Replicas  *[]json.Number `json:"replicas"`
			LogDirs   []string       `json:"log_dirs"`
		} `json:"partitions"`
	}
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.UseNumber()
	if err := dec.Decode(&doc); err != nil {
		return nil, nil, tool.JavaException{Class: "kafka.common.AdminCommandFailedException", Msg: "The input string is not a valid JSON"}
	}
	if doc.Version != nil && doc.Version.String() != "1" {
		return nil, nil, tool.JavaException{Class: "kafka.admin.AdminOperationException", Msg: "Not supported version field value " + doc.Version.String()}
	}
	if doc.Partitions == nil || len(*doc.Partitions) == 0 {
		return nil, nil, tool.Error("Partition reassignment list cannot be empty")
	}
	if len(*doc.Partitions) > maxReassignEntries {
		return nil, nil, tool.Errorf("Partition reassignment list is too long (%d entries)", len(*doc.Partitions))
	}
	out := map[kafka.TopicPartition][]int32{}
	var order, dupParts []kafka.TopicPartition
	var dupReplicas []string
	for _, p := range *doc.Partitions {
		if p.Topic == nil || p.Partition == nil || p.Replicas == nil {
			return nil, nil, tool.JavaException{Class: "kafka.utils.json.JsonMappingException", Msg: "each partition needs topic, partition and replicas"}
		}
		part, err := p.Partition.Int64()
		if err != nil || part < 0 || part > 1<<31-1 {
			return nil, nil, tool.JavaException{Class: "kafka.utils.json.JsonMappingException", Msg: "bad partition " + p.Partition.String()}
		}
		tp := kafka.TopicPartition{Topic: *p.Topic, Partition: int32(part)}
		if len(*p.Replicas) == 0 {
			return nil, nil, tool.Error("Partition replica list cannot be empty")
		}
		replicas := make([]int32, 0, len(*p.Replicas))
		for _, r := range *p.Replicas {
			id, err := r.Int64()
			if err != nil || id < 0 || id > 1<<31-1 {
				return nil, nil, tool.JavaException{Class: "kafka.utils.json.JsonMappingException", Msg: "bad replica " + r.String()}
			}
			if slices.Contains(replicas, int32(id)) {
				dupReplicas = append(dupReplicas, fmt.Sprintf("%s: %v", tp, *p.Replicas))
				break
			}
			replicas = append(replicas, int32(id))
		}
		if _, dup := out[tp]; dup {
			dupParts = append(dupParts, tp)
			continue
		}
		out[tp] = replicas
		order = append(order, tp)
	}
	if len(dupParts) > 0 {
		return nil, nil, tool.Errorf("Partition reassignment contains duplicate topic partitions: %s", joinTPs(dupParts))
	}
	if len(dupReplicas) > 0 {
		return nil, nil, tool.Errorf("Partition replica lists may not contain duplicate entries: %s", strings.Join(dupReplicas, ","))
	}
	return out, order, nil
}

// parseTopicsToMoveJSON is parseTopicsData.
func parseTopicsToMoveJSON(data []byte) ([]string, error) {
	var doc struct {
		Version *json.Number `json:"version"`
		Topics  *[]struct {
			Topic *string `json:"topic"`
		} `json:"topics"`
	}
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.UseNumber()
	if err := dec.Decode(&doc); err != nil {
		return nil, tool.JavaException{Class: "kafka.common.AdminCommandFailedException", Msg: "The input string is not a valid JSON"}
	}
	if doc.Version != nil && doc.Version.String() != "1" {
		return nil, tool.JavaException{Class: "kafka.admin.AdminOperationException", Msg: "Not supported version field value " + doc.Version.String()}
	}
	if doc.Topics == nil {
		return nil, tool.JavaException{Class: "kafka.admin.AdminOperationException", Msg: "Missing topics field"}
	}
	var topics, dups []string
	for _, t := range *doc.Topics {
		if t.Topic == nil {
			return nil, tool.JavaException{Class: "kafka.utils.json.JsonMappingException", Msg: "each entry needs a topic"}
		}
		if slices.Contains(topics, *t.Topic) {
			dups = append(dups, *t.Topic)
			continue
		}
		topics = append(topics, *t.Topic)
	}
	if len(dups) > 0 {
		return nil, tool.Errorf("List of topics to reassign contains duplicate entries: %s", strings.Join(dups, ","))
	}
	return topics, nil
}

// parseBrokerList parses --broker-list "1,2,3".
func parseBrokerList(s string) ([]int32, error) {
	var out []int32
	var dups []string
	for _, f := range strings.Split(s, ",") {
		f = strings.TrimSpace(f)
		id, err := strconv.ParseInt(f, 10, 32)
		if err != nil || id < 0 {
			return nil, tool.Errorf("Invalid broker id %q in --broker-list", f)
		}
		if slices.Contains(out, int32(id)) {
			dups = append(dups, f)
			continue
		}
		out = append(out, int32(id))
	}
	if len(dups) > 0 {
		return nil, tool.Errorf("Broker list contains duplicate entries: %s", strings.Join(dups, ","))
	}
	return out, nil
}

// formatReassignmentJSON is formatAsReassignmentJson: partitions sorted,
// log_dirs "any" for every replica.
func formatReassignmentJSON(parts map[kafka.TopicPartition][]int32) string {
	type entry struct {
		Topic     string   `json:"topic"`
		Partition int32    `json:"partition"`
		Replicas  []int32  `json:"replicas"`
		LogDirs   []string `json:"log_dirs"`
	}
	doc := struct {
		Version    int     `json:"version"`
		Partitions []entry `json:"partitions"`
	}{Version: 1, Partitions: []entry{}}
	for _, tp := range sortedTPs(parts) {
		dirs := make([]string, len(parts[tp]))
		for i := range dirs {
			dirs[i] = "any"
		}
		doc.Partitions = append(doc.Partitions, entry{tp.Topic, tp.Partition, nonNilIDs(parts[tp]), dirs})
	}
	out, _ := json.Marshal(doc) // plain structs: cannot fail
	return string(out)
}

func nonNilIDs(s []int32) []int32 {
	if s == nil {
		return []int32{}
	}
	return s
}

func joinIDs(ids []int32) string {
	s := make([]string, len(ids))
	for i, id := range ids {
		s[i] = strconv.Itoa(int(id))
	}
	return strings.Join(s, ",")
}
