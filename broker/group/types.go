package group

import "samsa/kafka"

// Plain-Go inputs and outputs of the Coordinator (STYLE S1.3): the broker's
// handlers translate kmsg requests into these and back. Error codes are
// Kafka's (kerr codes); 0 is success.

// Protocol is one assignment protocol a member supports; Metadata is opaque.
type Protocol struct {
	Name     string
	Metadata []byte
}

// JoinRequest is JoinGroup's input.
type JoinRequest struct {
	Group              string
	MemberID           string // "" for a new member
	GroupInstanceID    string // "" unless static (KIP-345, v5+)
	RequireKnownMember bool   // v4+ (KIP-394): answer MEMBER_ID_REQUIRED first
	ClientID           string
	ClientHost         string
	SessionTimeoutMs   int32
	RebalanceTimeoutMs int32 // v1+; v0 callers pass the session timeout
	ProtocolType       string
	Protocols          []Protocol
}

// JoinMember is one member in the leader's JoinGroup response.
type JoinMember struct {
	MemberID        string
	GroupInstanceID string
	Metadata        []byte
}

// JoinResult is JoinGroup's output.
type JoinResult struct {
	ErrorCode    int16
	Generation   int32 // -1 on error
	ProtocolType string
	Protocol     string
	LeaderID     string
	MemberID     string
	Members      []JoinMember // only for the leader
}

// SyncRequest is SyncGroup's input.
type SyncRequest struct {
	Group           string
	Generation      int32
	MemberID        string
	GroupInstanceID string
	ProtocolType    string // v5+; "" when absent
	Protocol        string // v5+; "" when absent
	Assignments     map[string][]byte
}

// SyncResult is SyncGroup's output.
type SyncResult struct {
	ErrorCode    int16
	ProtocolType string
	Protocol     string
	Assignment   []byte
}

// HeartbeatRequest is Heartbeat's input.
type HeartbeatRequest struct {
	Group           string
	Generation      int32
	MemberID        string
	GroupInstanceID string
}

// LeaveMember identifies a member leaving (v3+ batches them; KIP-345 lets
// an admin remove a static member by instance id alone).
type LeaveMember struct {
	MemberID        string
	GroupInstanceID string
	// Reason is LeaveGroup v5's client reason (KIP-800); Samsa speaks
	// Kafka 2.8's v0-v4, so the handler leaves it empty.
	Reason string
}

// CommitOffset is one partition of an OffsetCommit.
type CommitOffset struct {
	kafka.TopicPartition
	Offset      int64
	LeaderEpoch int32 // -1 when absent (v6+ sends it)
	Metadata    string
}

// String prints every field (the embedded TopicPartition's String would
// print only the partition).
func (o CommitOffset) String() string { return kafka.FieldsString(o) }

// CommitRequest is OffsetCommit's input.
type CommitRequest struct {
	Group           string
	Generation      int32 // -1 for a group that only stores offsets
	MemberID        string
	GroupInstanceID string
	// RetentionMs is OffsetCommit v2-v4 retention_time_ms; -1 uses the
	// broker's offsets.retention.minutes.
	RetentionMs int64
	Offsets     []CommitOffset
}

// FetchedOffset is one partition of an OffsetFetch answer; Offset is -1
// when nothing is committed.
type FetchedOffset struct {
	kafka.TopicPartition
	Offset      int64
	LeaderEpoch int32
	Metadata    string
	ErrorCode   int16
}

// String prints every field (the embedded TopicPartition's String would
// print only the partition).
func (o FetchedOffset) String() string { return kafka.FieldsString(o) }

// MemberDescription is one member in DescribeGroups.
type MemberDescription struct {
	MemberID        string
	GroupInstanceID string
	ClientID        string
	ClientHost      string
	Metadata        []byte // only when the group is Stable
	Assignment      []byte // only when the group is Stable
}

// GroupDescription is one group in DescribeGroups.
type GroupDescription struct {
	Group        string
	ErrorCode    int16
	State        string // Kafka's state name; "Dead" for an unknown group
	ProtocolType string
	Protocol     string
	Members      []MemberDescription
}

// GroupListing is one group in ListGroups.
type GroupListing struct {
	Group        string
	ProtocolType string
	State        string
}
