package group

import "github.com/twmb/franz-go/pkg/kbin"

// Key and value schemas of __consumer_offsets records, exactly as Kafka
// 2.8's GroupMetadataManager writes them (see doc.go for the layouts).

// Key versions: 0 and 1 are offset commit keys (same schema), 2 is a group
// metadata key.
const (
	offsetKeyVersion = 1 // Kafka writes v1
	groupKeyVersion  = 2
)

// maxStringLen is the longest int16-length string.
const maxStringLen = 1<<15 - 1

// Key is a decoded __consumer_offsets record key: an offset commit key
// (IsOffset, Topic and Partition set) or a group metadata key.
type Key struct {
	Version   int16
	Group     string
	IsOffset  bool
	Topic     string
	Partition int32
}

// EncodeOffsetKey returns the offset commit key (v1) of group/topic/partition.
func EncodeOffsetKey(group, topic string, partition int32) []byte {
	b := make([]byte, 0, 2+2+len(group)+2+len(topic)+4)
	b = kbin.AppendInt16(b, offsetKeyVersion)
	b = kbin.AppendString(b, group)
	b = kbin.AppendString(b, topic)
	return kbin.AppendInt32(b, partition)
}

// EncodeGroupKey returns the group metadata key (v2) of group.
func EncodeGroupKey(group string) []byte {
	b := make([]byte, 0, 4+len(group))
	b = kbin.AppendInt16(b, groupKeyVersion)
	return kbin.AppendString(b, group)
}

// DecodeKey decodes a record key. Errors wrap ErrCorrupt (including an
// unknown key version, which Kafka 2.8 also refuses).
func DecodeKey(p []byte) (Key, error) {
	r := newReader(p)
	k := Key{Version: r.int16("key version")}
	if r.err != nil {
		return Key{}, r.err
	}
	switch k.Version {
	case 0, 1:
		k.IsOffset = true
		k.Group = r.string("group")
		k.Topic = r.string("topic")
		k.Partition = r.int32("partition")
	case 2:
		k.Group = r.string("group")
	default:
		return Key{}, corruptf("unknown key version %d", k.Version)
	}
	if r.err != nil {
		return Key{}, r.err
	}
	return k, nil
}

// OffsetValue is an offset commit value (v0-v3).
type OffsetValue struct {
	Offset int64
	// LeaderEpoch is the committed leader epoch (v3); -1 when unknown.
	LeaderEpoch int32
	Metadata    string
	// CommitTimestamp is in milliseconds since the epoch.
	CommitTimestamp int64
	// ExpireTimestamp is the explicit expiry of OffsetCommit v1-v4
	// retention_time_ms (value v1 only); -1 when none.
	ExpireTimestamp int64
}

// EncodeOffsetValue encodes v as Kafka 2.8 does: value v1 when it carries
// an explicit expire timestamp, else v3.
func EncodeOffsetValue(v OffsetValue) []byte {
	b := make([]byte, 0, 2+8+4+2+len(v.Metadata)+8+8)
	if v.ExpireTimestamp >= 0 {
		b = kbin.AppendInt16(b, 1)
		b = kbin.AppendInt64(b, v.Offset)
		b = kbin.AppendString(b, v.Metadata)
		b = kbin.AppendInt64(b, v.CommitTimestamp)
		return kbin.AppendInt64(b, v.ExpireTimestamp)
	}
	b = kbin.AppendInt16(b, 3)
	b = kbin.AppendInt64(b, v.Offset)
	b = kbin.AppendInt32(b, v.LeaderEpoch)
	b = kbin.AppendString(b, v.Metadata)
	return kbin.AppendInt64(b, v.CommitTimestamp)
}

// DecodeOffsetValue decodes an offset commit value v0-v3. Errors wrap
// ErrCorrupt.
func DecodeOffsetValue(p []byte) (OffsetValue, error) {
	r := newReader(p)
	ver := r.int16("offset value version")
	if r.err != nil {
		return OffsetValue{}, r.err
	}
	if ver < 0 || ver > 3 {
		return OffsetValue{}, corruptf("unknown offset value version %d", ver)
	}
	v := OffsetValue{LeaderEpoch: -1, ExpireTimestamp: -1}
	v.Offset = r.int64("offset")
	if ver >= 3 {
		v.LeaderEpoch = r.int32("leader epoch")
	}
	v.Metadata = r.string("metadata")
	v.CommitTimestamp = r.int64("commit timestamp")
	if ver == 1 {
		v.ExpireTimestamp = r.int64("expire timestamp")
	}
	if r.err != nil {
		return OffsetValue{}, r.err
	}
	return v, nil
}

// MemberValue is one member inside a group metadata value.
type MemberValue struct {
	MemberID        string
	GroupInstanceID string // v3; "" is null
	ClientID        string
	ClientHost      string
	// RebalanceTimeoutMs is v1+; v0 values load it as SessionTimeoutMs, as
	// Kafka does.
	RebalanceTimeoutMs int32
	SessionTimeoutMs   int32
	Subscription       []byte
	Assignment         []byte
}

// GroupValue is a group metadata value (v0-v3). Nullable strings are ""
// when null; Kafka never stores an empty protocol or leader.
type GroupValue struct {
	Version      int16
	ProtocolType string
	Generation   int32
	Protocol     string
	Leader       string
	// CurrentStateTimestamp (v2+) is when the group last changed state,
	// in milliseconds; -1 when unknown.
	CurrentStateTimestamp int64
	Members               []MemberValue
}

// groupValueVersion is what Kafka 2.8 writes (inter.broker.protocol >= 2.3).
const groupValueVersion = 3

// EncodeGroupValue encodes v as group metadata value v3 (v.Version is
// ignored).
func EncodeGroupValue(v GroupValue) []byte {
	n := 32 + len(v.ProtocolType) + len(v.Protocol) + len(v.Leader)
	for i := range v.Members {
		m := &v.Members[i]
		n += 32 + len(m.MemberID) + len(m.GroupInstanceID) + len(m.ClientID) + len(m.ClientHost) +
			len(m.Subscription) + len(m.Assignment)
	}
	b := make([]byte, 0, n)
	b = kbin.AppendInt16(b, groupValueVersion)
	b = kbin.AppendString(b, v.ProtocolType)
	b = kbin.AppendInt32(b, v.Generation)
	b = appendNullableString(b, v.Protocol)
	b = appendNullableString(b, v.Leader)
	b = kbin.AppendInt64(b, v.CurrentStateTimestamp)
	b = kbin.AppendInt32(b, int32(len(v.Members)))
	for i := range v.Members {
		m := &v.Members[i]
		b = kbin.AppendString(b, m.MemberID)
		b = appendNullableString(b, m.GroupInstanceID)
		b = kbin.AppendString(b, m.ClientID)
		b = kbin.AppendString(b, m.ClientHost)
		b = kbin.AppendInt32(b, m.RebalanceTimeoutMs)
		b = kbin.AppendInt32(b, m.SessionTimeoutMs)
		b = kbin.AppendBytes(b, m.Subscription)
		b = kbin.AppendBytes(b, m.Assignment)
	}
	return b
}

// minMemberSize is the smallest encoded member (v0: three empty strings,
// an int32 and two empty byte arrays).
const minMemberSize = 2 + 2 + 2 + 4 + 4 + 4

// DecodeGroupValue decodes a group metadata value v0-v3. Errors wrap
// ErrCorrupt.
func DecodeGroupValue(p []byte) (GroupValue, error) {
	r := newReader(p)
	v := GroupValue{Version: r.int16("group value version"), CurrentStateTimestamp: -1}
	if r.err != nil {
		return GroupValue{}, r.err
	}
	if v.Version < 0 || v.Version > 3 {
		return GroupValue{}, corruptf("unknown group value version %d", v.Version)
	}
	v.ProtocolType = r.string("protocol type")
	v.Generation = r.int32("generation")
	v.Protocol, _ = r.nullableString("protocol")
	v.Leader, _ = r.nullableString("leader")
	if v.Version >= 2 {
		v.CurrentStateTimestamp = r.int64("current state timestamp")
	}
	n := r.arrayLen("members", minMemberSize)
	if n > 0 {
		v.Members = make([]MemberValue, 0, n)
	}
	for i := 0; i < n && r.err == nil; i++ {
		var m MemberValue
		m.MemberID = r.string("member id")
		if v.Version >= 3 {
			m.GroupInstanceID, _ = r.nullableString("group instance id")
		}
		m.ClientID = r.string("client id")
		m.ClientHost = r.string("client host")
		if v.Version >= 1 {
			m.RebalanceTimeoutMs = r.int32("rebalance timeout")
		}
		m.SessionTimeoutMs = r.int32("session timeout")
		if v.Version == 0 {
			m.RebalanceTimeoutMs = m.SessionTimeoutMs
		}
		m.Subscription = r.bytes("subscription")
		m.Assignment = r.bytes("assignment")
		v.Members = append(v.Members, m)
	}
	if r.err != nil {
		return GroupValue{}, r.err
	}
	return v, nil
}
