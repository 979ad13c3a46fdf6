package record

import "github.com/twmb/franz-go/pkg/kbin"

// ControlType is the type field of a control record key (Kafka's
// ControlRecordType). A control record's key is {version int16 = 0, type
// int16}.
type ControlType int16

// Control record types known to Kafka 2.8.
const (
	ControlAbort        ControlType = 0
	ControlCommit       ControlType = 1
	ControlLeaderChange ControlType = 2 // KRaft only
)

// EndTxnMarker is a transaction marker: a control record whose value is
// {version int16 = 0, coordinatorEpoch int32}.
type EndTxnMarker struct {
	Commit           bool
	CoordinatorEpoch int32
}

// BuildEndTxnMarker builds the control batch Kafka appends to end a
// transaction (MemoryRecords.withEndTransactionMarker): transactional,
// control, one record at offset delta 0 with timestamp h.FirstTimestamp,
// no base sequence. h supplies base offset, leader epoch, producer id and
// epoch; its Control, Transactional and BaseSequence are overridden.
func BuildEndTxnMarker(h BuildHeader, m EndTxnMarker) (Batch, error) {
	h.Control, h.Transactional, h.BaseSequence = true, true, NoSequence
	typ := ControlAbort
	if m.Commit {
		typ = ControlCommit
	}
	key := kbin.AppendInt16(kbin.AppendInt16(make([]byte, 0, 4), 0), int16(typ))
	value := kbin.AppendInt32(kbin.AppendInt16(make([]byte, 0, 6), 0), m.CoordinatorEpoch)
	return Build(h, []Record{{Key: key, Value: value}}, CodecNone)
}

// ParseControlKey decodes the key of a control record. A key shorter than
// 4 bytes or with a negative version is ErrInvalidRecord; unknown types
// are returned as they are (Kafka ignores them).
func ParseControlKey(key []byte) (ControlType, error) {
	r := kbin.Reader{Src: key}
	v, typ := r.Int16(), ControlType(r.Int16())
	if !r.Ok() {
		return 0, invalidf("control record key of %d bytes", len(key))
	}
	if v < 0 {
		return 0, invalidf("control record key version %d", v)
	}
	return typ, nil
}

// ParseEndTxnMarker decodes a transaction marker from the key and value of
// a control record. A key that is neither abort nor commit, or a value
// shorter than 6 bytes, is ErrInvalidRecord.
func ParseEndTxnMarker(key, value []byte) (EndTxnMarker, error) {
	typ, err := ParseControlKey(key)
	if err != nil {
		return EndTxnMarker{}, err
	}
	if typ != ControlAbort && typ != ControlCommit {
		return EndTxnMarker{}, invalidf("control type %d is not a transaction marker", typ)
	}
	r := kbin.Reader{Src: value}
	v, epoch := r.Int16(), r.Int32()
	if !r.Ok() {
		return EndTxnMarker{}, invalidf("transaction marker value of %d bytes", len(value))
	}
	if v < 0 {
		return EndTxnMarker{}, invalidf("transaction marker version %d", v)
	}
	return EndTxnMarker{Commit: typ == ControlCommit, CoordinatorEpoch: epoch}, nil
}
