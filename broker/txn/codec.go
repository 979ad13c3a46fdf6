package txn

import (
	"errors"
	"fmt"
	"sort"

	"github.com/twmb/franz-go/pkg/kmsg"

	"samsa/kafka"
)

// Key and value versions Kafka 2.8 writes and reads (TransactionLog.scala).
const (
	keyVersion   = 0
	valueVersion = 0
)

// ErrCorrupt wraps every decoding failure of a __transaction_state record.
var ErrCorrupt = errors.New("txn: undecodable __transaction_state record")

// Value is the decoded value of a __transaction_state record (value v0).
// Partitions is nil in state Empty, as Kafka writes it.
type Value struct {
	ProducerID    int64
	ProducerEpoch int16
	TimeoutMs     int32
	State         State
	Partitions    []kafka.TopicPartition
	UpdateMs      int64 // transaction_last_update_timestamp_ms
	StartMs       int64 // transaction_start_timestamp_ms, -1 if none
}

// EncodeKey returns the record key of transactional id id: int16 version 0
// then the id as an int16-length string.
func EncodeKey(id string) []byte {
	k := kmsg.TxnMetadataKey{Version: keyVersion, TransactionalID: id}
	return k.AppendTo(make([]byte, 0, 4+len(id)))
}

// DecodeKey returns the transactional id of a record key. Keys of another
// version are ErrCorrupt (Kafka's readTxnRecordKey throws on them).
func DecodeKey(b []byte) (string, error) {
	var k kmsg.TxnMetadataKey
	if err := k.ReadFrom(b); err != nil {
		return "", fmt.Errorf("%w: key: %w", ErrCorrupt, err)
	}
	if k.Version != keyVersion {
		return "", fmt.Errorf("%w: key version %d", ErrCorrupt, k.Version)
	}
	return k.TransactionalID, nil
}

// EncodeValue returns the v0 value of v, partitions grouped by topic in
// name order (Kafka groups them by topic; the order of a Scala map is
// unspecified, so any order reads back the same).
func EncodeValue(v Value) []byte {
	kv := kmsg.TxnMetadataValue{Version: valueVersion, ProducerID: v.ProducerID, ProducerEpoch: v.ProducerEpoch,
		TimeoutMillis: v.TimeoutMs, State: kmsg.TransactionState(v.State),
		LastUpdateTimestamp: v.UpdateMs, StartTimestamp: v.StartMs}
	if v.State != Empty {
		kv.Topics = groupByTopic(v.Partitions)
	}
	return kv.AppendTo(make([]byte, 0, 64))
}

// groupByTopic returns tps as the value's topic array, never nil.
func groupByTopic(tps []kafka.TopicPartition) []kmsg.TxnMetadataValueTopic {
	idx := map[string]int{}
	out := []kmsg.TxnMetadataValueTopic{}
	sorted := append([]kafka.TopicPartition(nil), tps...)
	sort.Slice(sorted, func(i, j int) bool {
		if sorted[i].Topic != sorted[j].Topic {
			return sorted[i].Topic < sorted[j].Topic
		}
		return sorted[i].Partition < sorted[j].Partition
	})
	for _, tp := range sorted {
		i, ok := idx[tp.Topic]
		if !ok {
			i = len(out)
			idx[tp.Topic] = i
			out = append(out, kmsg.TxnMetadataValueTopic{Topic: tp.Topic, Partitions: []int32{}})
		}
		out[i].Partitions = append(out[i].Partitions, tp.Partition)
	}
	return out
}

// DecodeValue decodes a v0 value. A nil b is a tombstone: (nil, nil).
// Other versions, unknown states, and partitions in state Empty are
// ErrCorrupt, as Kafka's readTxnRecordValue refuses them.
func DecodeValue(b []byte) (*Value, error) {
	if b == nil {
		return nil, nil
	}
	if len(b) < 2 {
		return nil, fmt.Errorf("%w: value of %d bytes", ErrCorrupt, len(b))
	}
	if ver := int16(b[0])<<8 | int16(b[1]); ver != valueVersion {
		return nil, fmt.Errorf("%w: value version %d", ErrCorrupt, ver)
	}
	var kv kmsg.TxnMetadataValue
	if err := kv.ReadFrom(b); err != nil {
		return nil, fmt.Errorf("%w: value: %w", ErrCorrupt, err)
	}
	st := State(kv.State)
	if st < Empty || st > PrepareEpochFence || st == Dead || st == PrepareEpochFence {
		return nil, fmt.Errorf("%w: transaction state %d", ErrCorrupt, kv.State)
	}
	v := &Value{ProducerID: kv.ProducerID, ProducerEpoch: kv.ProducerEpoch, TimeoutMs: kv.TimeoutMillis,
		State: st, UpdateMs: kv.LastUpdateTimestamp, StartMs: kv.StartTimestamp}
	for _, t := range kv.Topics {
		for _, p := range t.Partitions {
			v.Partitions = append(v.Partitions, kafka.TopicPartition{Topic: t.Topic, Partition: p})
		}
	}
	if st == Empty && len(v.Partitions) > 0 {
		return nil, fmt.Errorf("%w: %d partitions in state Empty", ErrCorrupt, len(v.Partitions))
	}
	return v, nil
}
