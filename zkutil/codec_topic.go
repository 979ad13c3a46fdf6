package zkutil

import "fmt"

// TopicAssignment is the data of /brokers/topics/<t> (Kafka TopicZNode):
// replicas per partition, in preference order (the first is the preferred
// leader), plus the KIP-455 reassignment sets.
type TopicAssignment struct {
	// Version is the JSON version read (1, 2 or 3). Encode writes 2, or 3
	// when TopicID is set.
	Version int
	// TopicID is the KIP-516 topic id (22-char URL-safe base64), v3 only.
	TopicID string
	// Partitions maps partition id → replicas.
	Partitions map[int32][]int32
	// AddingReplicas and RemovingReplicas hold an ongoing reassignment
	// (empty maps when none).
	AddingReplicas   map[int32][]int32
	RemovingReplicas map[int32][]int32
}

type topicAssignmentJSON struct {
	Version  *int               `json:"version"`
	TopicID  *string            `json:"topic_id,omitempty"`
	Parts    map[string][]int32 `json:"partitions"`
	Adding   map[string][]int32 `json:"adding_replicas"`
	Removing map[string][]int32 `json:"removing_replicas"`
}

// Encode returns Kafka 2.8's JSON: {"version":2,"partitions":{"0":[1,2]},
// "adding_replicas":{},"removing_replicas":{}} (version 3 with topic_id).
func (a TopicAssignment) Encode() []byte {
	version := 2
	j := topicAssignmentJSON{
		Version:  &version,
		Parts:    stringKeyMap(a.Partitions),
		Adding:   stringKeyMap(a.AddingReplicas),
		Removing: stringKeyMap(a.RemovingReplicas),
	}
	if a.TopicID != "" {
		version = 3
		id := a.TopicID
		j.TopicID = &id
	}
	return marshal(j)
}

// DecodeTopicAssignment parses /brokers/topics/<t> data v1..v3. The returned
// maps are never nil.
func DecodeTopicAssignment(data []byte) (TopicAssignment, error) {
	const kind = "topic assignment"
	var j topicAssignmentJSON
	if err := unmarshal(kind, data, &j); err != nil {
		return TopicAssignment{}, err
	}
	if j.Version == nil {
		return TopicAssignment{}, malformed(kind, fmt.Errorf("missing version"))
	}
	if j.Parts == nil {
		return TopicAssignment{}, malformed(kind, fmt.Errorf("missing partitions"))
	}
	a := TopicAssignment{Version: *j.Version}
	if j.TopicID != nil {
		a.TopicID = *j.TopicID
	}
	var err error
	if a.Partitions, err = intKeyMap(kind, j.Parts); err != nil {
		return TopicAssignment{}, err
	}
	if a.AddingReplicas, err = intKeyMap(kind, j.Adding); err != nil {
		return TopicAssignment{}, err
	}
	if a.RemovingReplicas, err = intKeyMap(kind, j.Removing); err != nil {
		return TopicAssignment{}, err
	}
	return a, nil
}

// NoLeader is the leader id stored when a partition has no leader.
const NoLeader int32 = -1

// PartitionState is the data of /brokers/topics/<t>/partitions/<p>/state
// (Kafka LeaderIsrAndControllerEpoch).
type PartitionState struct {
	// Leader is the leader's broker id, NoLeader (-1) when none.
	Leader int32
	// LeaderEpoch starts at 0 and grows on every leader change.
	LeaderEpoch int32
	// ISR is the in-sync replica set.
	ISR []int32
	// ControllerEpoch is the epoch of the controller that made the
	// leadership decision.
	ControllerEpoch int32
	// LeaderRecoveryState is 0 (RECOVERED) unless a 3.2+ writer set 1
	// (RECOVERING); written only when non-zero.
	LeaderRecoveryState int8
}

type partitionStateJSON struct {
	Version         *int    `json:"version"`
	Leader          *int32  `json:"leader"`
	LeaderEpoch     *int32  `json:"leader_epoch"`
	ISR             []int32 `json:"isr"`
	ControllerEpoch *int32  `json:"controller_epoch"`
	Recovery        *int8   `json:"leader_recovery_state,omitempty"`
}

// Encode returns {"controller_epoch":E,"leader":L,"version":1,"leader_epoch":N,"isr":[...]}.
func (s PartitionState) Encode() []byte {
	version := 1
	isr := s.ISR
	if isr == nil {
		isr = []int32{}
	}
	j := partitionStateJSON{
		Version: &version, Leader: &s.Leader, LeaderEpoch: &s.LeaderEpoch,
		ISR: isr, ControllerEpoch: &s.ControllerEpoch,
	}
	if s.LeaderRecoveryState != 0 {
		j.Recovery = &s.LeaderRecoveryState
	}
	return marshal(j)
}

// DecodePartitionState parses /state data. ISR is never nil.
func DecodePartitionState(data []byte) (PartitionState, error) {
	const kind = "partition state"
	var j partitionStateJSON
	if err := unmarshal(kind, data, &j); err != nil {
		return PartitionState{}, err
	}
	if j.Leader == nil || j.LeaderEpoch == nil || j.ControllerEpoch == nil {
		return PartitionState{}, malformed(kind, fmt.Errorf("missing leader, leader_epoch or controller_epoch"))
	}
	s := PartitionState{Leader: *j.Leader, LeaderEpoch: *j.LeaderEpoch, ISR: j.ISR, ControllerEpoch: *j.ControllerEpoch}
	if s.ISR == nil {
		s.ISR = []int32{}
	}
	if j.Recovery != nil {
		s.LeaderRecoveryState = *j.Recovery
	}
	return s, nil
}

// Equal reports whether s and o hold the same leader, epochs and ISR (in order).
func (s PartitionState) Equal(o PartitionState) bool {
	if s.Leader != o.Leader || s.LeaderEpoch != o.LeaderEpoch || s.ControllerEpoch != o.ControllerEpoch ||
		s.LeaderRecoveryState != o.LeaderRecoveryState || len(s.ISR) != len(o.ISR) {
		return false
	}
	for i := range s.ISR {
		if s.ISR[i] != o.ISR[i] {
			return false
		}
	}
	return true
}
