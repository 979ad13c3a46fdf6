package zkutil

import "fmt"
import "samsa/kafka"

type tpListJSON struct {
	Version    *int                 `json:"version"`
	Partitions []topicPartitionJSON `json:"partitions"`
}

// EncodeIsrChangeNotification returns
// {"version":1,"partitions":[{"topic":"t","partition":0}]}.
func EncodeIsrChangeNotification(tps []kafka.TopicPartition) []byte {
	version := 1
	return marshal(tpListJSON{Version: &version, Partitions: encodeTopicPartitions(tps)})
}

// DecodeIsrChangeNotification parses an isr_change_ notification.
func DecodeIsrChangeNotification(data []byte) ([]kafka.TopicPartition, error) {
	return decodeTPList("isr change notification", data)
}

// EncodePreferredReplicaElection returns the /admin/preferred_replica_election
// data {"version":1,"partitions":[{"topic":"foo","partition":0}]}.
func EncodePreferredReplicaElection(tps []kafka.TopicPartition) []byte {
	return EncodeIsrChangeNotification(tps)
}

// DecodePreferredReplicaElection parses /admin/preferred_replica_election.
func DecodePreferredReplicaElection(data []byte) ([]kafka.TopicPartition, error) {
	return decodeTPList("preferred replica election", data)
}

func decodeTPList(kind string, data []byte) ([]kafka.TopicPartition, error) {
	var j tpListJSON
	if err := unmarshal(kind, data, &j); err != nil {
		return nil, err
	}
	return decodeTopicPartitions(kind, j.Partitions)
}

type reassignmentJSON struct {
	Version    *int                    `json:"version"`
	Partitions []reassignmentEntryJSON `json:"partitions"`
}

type reassignmentEntryJSON struct {
	Topic     *string  `json:"topic"`
	Partition *int32   `json:"partition"`
	Replicas  []int32  `json:"replicas"`
	LogDirs   []string `json:"log_dirs,omitempty"`
}

// EncodeReassignment returns the /admin/reassign_partitions data
// {"version":1,"partitions":[{"topic":..,"partition":..,"replicas":[..]}]},
// entries sorted by topic then partition for a stable output.
func EncodeReassignment(r map[kafka.TopicPartition][]int32) []byte {
	version := 1
	j := reassignmentJSON{Version: &version, Partitions: []reassignmentEntryJSON{}}
	for _, tp := range sortedTPs(r) {
		tp := tp
		reps := r[tp]
		if reps == nil {
			reps = []int32{}
		}
		j.Partitions = append(j.Partitions, reassignmentEntryJSON{Topic: &tp.Topic, Partition: &tp.Partition, Replicas: reps})
	}
	return marshal(j)
}

// DecodeReassignment parses /admin/reassign_partitions (log_dirs is ignored).
// A partition listed twice keeps its last entry.
func DecodeReassignment(data []byte) (map[kafka.TopicPartition][]int32, error) {
	const kind = "partition reassignment"
	var j reassignmentJSON
	if err := unmarshal(kind, data, &j); err != nil {
		return nil, err
	}
	out := make(map[kafka.TopicPartition][]int32, len(j.Partitions))
	for i, e := range j.Partitions {
		if e.Topic == nil || e.Partition == nil || e.Replicas == nil {
			return nil, malformed(kind, fmt.Errorf("entry %d lacks topic, partition or replicas", i))
		}
		out[kafka.TopicPartition{Topic: *e.Topic, Partition: *e.Partition}] = e.Replicas
	}
	return out, nil
}

// LogDirFailureEvent is the only log-dir event type Kafka defines.
const LogDirFailureEvent = 1

type logDirEventJSON struct {
	Version *int   `json:"version"`
	Broker  *int32 `json:"broker"`
	Event   *int   `json:"event"`
}

// EncodeLogDirEvent returns {"version":1,"broker":B,"event":1}.
func EncodeLogDirEvent(brokerID int32) []byte {
	version, ev := 1, LogDirFailureEvent
	return marshal(logDirEventJSON{Version: &version, Broker: &brokerID, Event: &ev})
}

// DecodeLogDirEvent parses a log_dir_event_ notification and returns the broker id.
func DecodeLogDirEvent(data []byte) (int32, error) {
	const kind = "log dir event"
	var j logDirEventJSON
	if err := unmarshal(kind, data, &j); err != nil {
		return 0, err
	}
	if j.Broker == nil {
		return 0, malformed(kind, fmt.Errorf("missing broker"))
	}
	return *j.Broker, nil
}
