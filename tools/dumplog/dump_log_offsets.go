package dumplog

// --offsets-decoder of kafka-dump-log: __consumer_offsets records printed as
// Kafka 2.8's GroupMetadataManager.formatRecordKeyAndValue prints them:
//
//	key: offset_commit::group=g,partition=t-0 payload: offset=5
//	key: group_metadata::group=g payload: {"protocolType":"consumer","protocol":"range","generationId":1,"assignment":"{m-1=[t-0, t-1]}"}
//
// The records are decoded with broker/group's codec (Kafka's schemas).

import (
	"encoding/binary"
	"fmt"
	"math/big"
	"strings"

	"samsa/broker/group"
	"samsa/broker/record"
	"samsa/tools/internal/tool"
)

// formatOffsetsRecord returns the key and value texts of a __consumer_offsets
// record, or the KafkaException Kafka's tool dies with.
func formatOffsetsRecord(r *record.Record) (string, string, error) {
	if r.Key == nil {
		return "", "", tool.JavaException{Class: "org.apache.kafka.common.KafkaException", Msg: "Failed to decode message using offset topic decoder (message had a missing key)"}
	}
	k, err := group.DecodeKey(r.Key)
	if err != nil {
		return "", "", tool.JavaException{Class: "java.lang.IllegalStateException", Msg: err.Error()}
	}
	if k.IsOffset {
		key := fmt.Sprintf("offset_commit::group=%s,partition=%s-%d", k.Group, k.Topic, k.Partition)
		if r.Value == nil {
			return key, "<DELETE>", nil
		}
		v, err := group.DecodeOffsetValue(r.Value)
		if err != nil {
			return "", "", tool.JavaException{Class: "java.lang.IllegalStateException", Msg: err.Error()}
		}
		if v.Metadata == "" {
			return key, fmt.Sprintf("offset=%d", v.Offset), nil
		}
		return key, fmt.Sprintf("offset=%d,metadata=%s", v.Offset, v.Metadata), nil
	}
	key := "group_metadata::group=" + k.Group
	if r.Value == nil {
		return key, "<DELETE>", nil
	}
	v, err := group.DecodeGroupValue(r.Value)
	if err != nil {
		return "", "", tool.JavaException{Class: "java.lang.IllegalStateException", Msg: err.Error()}
	}
	members := make([]string, len(v.Members))
	for i, m := range v.Members {
		if v.ProtocolType == "consumer" {
			members[i] = m.MemberID + "=" + consumerAssignmentText(m.Assignment)
		} else {
			members[i] = m.MemberID + "=" + kafkaHex(m.Assignment)
		}
	}
	protocol := "null"
	if v.Protocol != "" {
		protocol = tool.JSONString(v.Protocol)
	}
	value := fmt.Sprintf(`{"protocolType":%s,"protocol":%s,"generationId":%d,"assignment":%s}`,
		tool.JSONString(v.ProtocolType), protocol, v.Generation, tool.JSONString("{"+strings.Join(members, ",")+"}"))
	return key, value, nil
}

// consumerAssignmentText is "[t-0, t-1]" (Java's List<TopicPartition>
// toString) with ":<HEX>" when the assignment carries user data. Bytes that
// do not decode as ConsumerProtocol's assignment print as hex.
func consumerAssignmentText(p []byte) string {
	r := p
	fail := func() string { return kafkaHex(p) }
	int16At := func() (int16, bool) {
		if len(r) < 2 {
			return 0, false
		}
		v := int16(binary.BigEndian.Uint16(r))
		r = r[2:]
		return v, true
	}
	int32At := func() (int32, bool) {
		if len(r) < 4 {
			return 0, false
		}
		v := int32(binary.BigEndian.Uint32(r))
		r = r[4:]
		return v, true
	}
	if _, ok := int16At(); !ok {
		return fail()
	}
	topics, ok := int32At()
	if !ok || topics < 0 || int(topics) > len(r)/6 {
		return fail()
	}
	var parts []string
	for i := int32(0); i < topics; i++ {
		n, ok := int16At()
		if !ok || n < 0 || int(n) > len(r) {
			return fail()
		}
		topic := string(r[:n])
		r = r[n:]
		count, ok := int32At()
		if !ok || count < 0 || int(count) > len(r)/4 {
			return fail()
		}
		for j := int32(0); j < count; j++ {
			p, _ := int32At()
			parts = append(parts, fmt.Sprintf("%s-%d", topic, p))
		}
	}
	text := "[" + strings.Join(parts, ", ") + "]"
	if n, ok := int32At(); ok && n > 0 && int(n) <= len(r) {
		text += ":" + kafkaHex(r[:n])
	}
	return text
}

// kafkaHex is GroupMetadataManager.hex: "%X" of the bytes as an unsigned
// big integer (leading zeros dropped), "" for no bytes.
func kafkaHex(p []byte) string {
	if len(p) == 0 {
		return ""
	}
	return strings.ToUpper(new(big.Int).SetBytes(p).Text(16))
}
