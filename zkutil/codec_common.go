package zkutil

import (
	"bytes"
	"encoding/json"
	"fmt"
	"sort"
	"strconv"

	"samsa/kafka"
)

// maxZNodeBytes bounds the data a decoder accepts. ZooKeeper's default
// jute.maxbuffer is just under 1 MiB; anything larger did not come from a
// well-configured ensemble.
const maxZNodeBytes = 4 << 20

// malformed wraps ErrMalformed with the znode kind.
func malformed(kind string, err error) error {
	return fmt.Errorf("%w: %s: %v", ErrMalformed, kind, err)
}

// unmarshal decodes JSON data into v after bounding its size. It accepts
// unknown keys (Kafka reads leniently).
func unmarshal(kind string, data []byte, v any) error {
	if len(data) > maxZNodeBytes {
		return malformed(kind, fmt.Errorf("%d bytes exceeds %d", len(data), maxZNodeBytes))
	}
	if len(bytes.TrimSpace(data)) == 0 {
		return malformed(kind, fmt.Errorf("empty data"))
	}
	if err := json.Unmarshal(data, v); err != nil {
		return malformed(kind, err)
	}
	return nil
}

// marshal encodes v, which is always a plain struct or map of strings and
// numbers; json.Marshal cannot fail on those.
func marshal(v any) []byte {
	b, err := json.Marshal(v)
	if err != nil {
		panic("zkutil: invariant violated: json.Marshal of a plain value failed: " + err.Error())
	}
	return b
}

// flexInt64 is an integer Kafka writes either as a JSON number or as a
// decimal string (timestamps, the cluster id version, producer id blocks).
// It encodes as a string.
type flexInt64 int64

// MarshalJSON writes the value as a decimal string, as Kafka does.
func (f flexInt64) MarshalJSON() ([]byte, error) {
	return []byte(`"` + strconv.FormatInt(int64(f), 10) + `"`), nil
}

// UnmarshalJSON accepts a number or a string holding a decimal integer.
func (f *flexInt64) UnmarshalJSON(b []byte) error {
	s := string(bytes.TrimSpace(b))
	if s == "null" {
		return nil
	}
	if len(s) >= 2 && s[0] == '"' && s[len(s)-1] == '"' {
		s = s[1 : len(s)-1]
	}
	v, err := strconv.ParseInt(s, 10, 64)
	if err != nil {
		return fmt.Errorf("not an integer: %q", s)
	}
	*f = flexInt64(v)
	return nil
}

// intKeyMap decodes a JSON object keyed by partition ids written as strings
// ({"0":[1,2]}) into a map keyed by int32. Negative ids are rejected.
func intKeyMap(kind string, m map[string][]int32) (map[int32][]int32, error) {
	out := make(map[int32][]int32, len(m))
	for k, v := range m {
		p, err := strconv.ParseInt(k, 10, 32)
		if err != nil || p < 0 {
			return nil, malformed(kind, fmt.Errorf("bad partition id %q", k))
		}
		if v == nil {
			v = []int32{}
		}
		out[int32(p)] = v
	}
	return out, nil
}

// stringKeyMap is the encoding side of intKeyMap; nil encodes as {}.
func stringKeyMap(m map[int32][]int32) map[string][]int32 {
	out := make(map[string][]int32, len(m))
	for k, v := range m {
		if v == nil {
			v = []int32{}
		}
		out[itoa(k)] = v
	}
	return out
}

// topicPartitionJSON is the {"topic":..,"partition":..} element of several
// admin and notification znodes.
type topicPartitionJSON struct {
	Topic     *string `json:"topic"`
	Partition *int32  `json:"partition"`
}

func decodeTopicPartitions(kind string, in []topicPartitionJSON) ([]kafka.TopicPartition, error) {
	out := make([]kafka.TopicPartition, 0, len(in))
	for i, e := range in {
		if e.Topic == nil || e.Partition == nil {
			return nil, malformed(kind, fmt.Errorf("entry %d lacks topic or partition", i))
		}
		out = append(out, kafka.TopicPartition{Topic: *e.Topic, Partition: *e.Partition})
	}
	return out, nil
}

func encodeTopicPartitions(tps []kafka.TopicPartition) []topicPartitionJSON {
	out := make([]topicPartitionJSON, len(tps))
	for i := range tps {
		out[i] = topicPartitionJSON{Topic: &tps[i].Topic, Partition: &tps[i].Partition}
	}
	return out
}

// sortedTPs returns the keys of m sorted by topic, then partition.
func sortedTPs[V any](m map[kafka.TopicPartition]V) []kafka.TopicPartition {
	out := make([]kafka.TopicPartition, 0, len(m))
	for tp := range m {
		out = append(out, tp)
	}
	sort.Slice(out, func(i, j int) bool {
		if out[i].Topic != out[j].Topic {
			return out[i].Topic < out[j].Topic
		}
		return out[i].Partition < out[j].Partition
	})
	return out
}
