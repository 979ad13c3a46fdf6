package record

import (
	"encoding/binary"
	"fmt"
)

// Layout constants of record batch v2 (Kafka's DefaultRecordBatch).
const (
	// LogOverhead is the size of the baseOffset and batchLength fields that
	// precede the length-counted part of every batch or message (12 bytes).
	LogOverhead = 12
	// HeaderSize is the size of a v2 batch header including LogOverhead
	// (Kafka's RECORD_BATCH_OVERHEAD, 61 bytes). Records start here.
	HeaderSize = 61
	// MinBatchLength is the smallest valid batchLength of a v2 batch
	// (HeaderSize - LogOverhead = 49): a batch with no records.
	MinBatchLength = HeaderSize - LogOverhead
	// MaxBatchLength is the largest batchLength NextBatch accepts before
	// calling the length absurd (1 GiB). Real limits (message.max.bytes,
	// replica.fetch.max.bytes) are checked by Validate with Limits.
	MaxBatchLength = 1 << 30

	// MagicV0, MagicV1 and MagicV2 are the three format versions.
	MagicV0 int8 = 0
	MagicV1 int8 = 1
	MagicV2 int8 = 2

	// NoTimestamp is Kafka's RecordBatch.NO_TIMESTAMP (-1).
	NoTimestamp int64 = -1
	// NoProducerID, NoProducerEpoch and NoSequence are the values of a
	// batch written by a non-idempotent producer.
	NoProducerID    int64 = -1
	NoProducerEpoch int16 = -1
	NoSequence      int32 = -1
	// NoPartitionLeaderEpoch is the leader epoch of a batch not yet
	// stamped by a leader.
	NoPartitionLeaderEpoch int32 = -1
)

// Byte offsets of the v2 header fields inside a Batch.
const (
	offBaseOffset      = 0
	offBatchLength     = 8
	offLeaderEpoch     = 12
	offMagic           = 16
	offCRC             = 17
	offAttributes      = 21 // CRC coverage starts here
	offLastOffsetDelta = 23
	offFirstTimestamp  = 27
	offMaxTimestamp    = 35
	offProducerID      = 43
	offProducerEpoch   = 51
	offBaseSequence    = 53
	offNumRecords      = 57
	offRecords         = 61
)

// Attribute bits of record batch v2.
const (
	attrCompressionMask = 0x07
	attrTimestampType   = 0x08
	attrTransactional   = 0x10
	attrControl         = 0x20
)

// Codec is a compression codec (attribute bits 0..2).
type Codec int8

// The codecs Kafka 2.8 knows.
const (
	CodecNone   Codec = 0
	CodecGzip   Codec = 1
	CodecSnappy Codec = 2
	CodecLZ4    Codec = 3
	CodecZstd   Codec = 4
)

// String returns Kafka's name of the codec (compression.type values).
func (c Codec) String() string {
	switch c {
	case CodecNone:
		return "none"
	case CodecGzip:
		return "gzip"
	case CodecSnappy:
		return "snappy"
	case CodecLZ4:
		return "lz4"
	case CodecZstd:
		return "zstd"
	}
	return fmt.Sprintf("codec(%d)", int8(c))
}

// TimestampType tells whether timestamps were set by the producer or by the
// broker (attribute bit 3 in v2, bit 3 of the message attributes in v1).
type TimestampType int8

// The timestamp types. TimestampNone is used for magic v0, which has none.
const (
	TimestampNone          TimestampType = -1
	TimestampCreateTime    TimestampType = 0
	TimestampLogAppendTime TimestampType = 1
)

// String returns Kafka's name of the timestamp type.
func (t TimestampType) String() string {
	switch t {
	case TimestampCreateTime:
		return "CreateTime"
	case TimestampLogAppendTime:
		return "LogAppendTime"
	}
	return "NoTimestampType"
}

// Batch is a view over the bytes of exactly one record batch v2, from
// baseOffset to the end of its last record (len == LogOverhead+BatchLength).
//
// A Batch obtained from NextBatch or Build is at least HeaderSize bytes long
// and has magic 2, so every accessor is safe; the CRC and the records are
// only checked by Validate. Converting arbitrary bytes with Batch(p) is the
// caller's responsibility: accessors index the slice directly (no copies, no
// allocation) and panic on a slice shorter than HeaderSize.
//
// A Batch is not safe for concurrent mutation; concurrent reads are fine.
type Batch []byte

// BaseOffset returns the offset of the first record.
func (b Batch) BaseOffset() int64 { return int64(binary.BigEndian.Uint64(b[offBaseOffset:])) }

// BatchLength returns the batchLength field: the size of the batch after
// the baseOffset and batchLength fields.
func (b Batch) BatchLength() int32 { return int32(binary.BigEndian.Uint32(b[offBatchLength:])) }

// Size returns the total size of the batch in bytes (LogOverhead+BatchLength).
func (b Batch) Size() int { return LogOverhead + int(b.BatchLength()) }

// PartitionLeaderEpoch returns the leader epoch stamped by the leader that
// appended the batch.
func (b Batch) PartitionLeaderEpoch() int32 {
	return int32(binary.BigEndian.Uint32(b[offLeaderEpoch:]))
}

// Magic returns the magic byte (2 for every valid Batch).
func (b Batch) Magic() int8 { return int8(b[offMagic]) }

// CRC returns the stored CRC-32C.
func (b Batch) CRC() uint32 { return binary.BigEndian.Uint32(b[offCRC:]) }

// Attributes returns the raw attributes field.
func (b Batch) Attributes() int16 { return int16(binary.BigEndian.Uint16(b[offAttributes:])) }

// Compression returns the codec of the records section.
func (b Batch) Compression() Codec { return Codec(b.Attributes() & attrCompressionMask) }

// TimestampType returns CreateTime or LogAppendTime.
func (b Batch) TimestampType() TimestampType {
	if b.Attributes()&attrTimestampType != 0 {
		return TimestampLogAppendTime
	}
	return TimestampCreateTime
}

// IsTransactional reports whether the batch belongs to a transaction.
func (b Batch) IsTransactional() bool { return b.Attributes()&attrTransactional != 0 }

// IsControl reports whether the batch holds a control record (commit/abort
// marker).
func (b Batch) IsControl() bool { return b.Attributes()&attrControl != 0 }

// LastOffsetDelta returns the offset delta of the last record (kept even
// when compaction removed that record).
func (b Batch) LastOffsetDelta() int32 {
	return int32(binary.BigEndian.Uint32(b[offLastOffsetDelta:]))
}

// LastOffset returns BaseOffset + LastOffsetDelta.
func (b Batch) LastOffset() int64 { return b.BaseOffset() + int64(b.LastOffsetDelta()) }

// NextOffset returns LastOffset + 1, the offset that follows the batch.
func (b Batch) NextOffset() int64 { return b.LastOffset() + 1 }

// FirstTimestamp returns the timestamp of the first record (the base for
// record timestamp deltas).
func (b Batch) FirstTimestamp() int64 {
	return int64(binary.BigEndian.Uint64(b[offFirstTimestamp:]))
}

// MaxTimestamp returns the largest record timestamp, or the log append time
// when TimestampType is LogAppendTime.
func (b Batch) MaxTimestamp() int64 { return int64(binary.BigEndian.Uint64(b[offMaxTimestamp:])) }

// ProducerID returns the producer id (-1 when not idempotent).
func (b Batch) ProducerID() int64 { return int64(binary.BigEndian.Uint64(b[offProducerID:])) }

// ProducerEpoch returns the producer epoch (-1 when not idempotent).
func (b Batch) ProducerEpoch() int16 { return int16(binary.BigEndian.Uint16(b[offProducerEpoch:])) }

// BaseSequence returns the sequence number of the first record (-1 when not
// idempotent).
func (b Batch) BaseSequence() int32 { return int32(binary.BigEndian.Uint32(b[offBaseSequence:])) }

// LastSequence returns the sequence number of the last record, wrapping at
// math.MaxInt32 as Kafka does, or NoSequence when BaseSequence is NoSequence.
func (b Batch) LastSequence() int32 {
	base := b.BaseSequence()
	if base == NoSequence {
		return NoSequence
	}
	delta := b.LastOffsetDelta()
	if int64(base)+int64(delta) > 1<<31-1 {
		return int32(int64(base) + int64(delta) - (1 << 31))
	}
	return base + delta
}

// NumRecords returns the records count field.
func (b Batch) NumRecords() int32 { return int32(binary.BigEndian.Uint32(b[offNumRecords:])) }

// RecordsSection returns the bytes after the header: the encoded records,
// compressed when Compression is not CodecNone.
func (b Batch) RecordsSection() []byte { return b[offRecords:] }

// SetBaseOffset overwrites baseOffset in place. The field is outside the
// CRC, so the CRC stays valid.
func (b Batch) SetBaseOffset(o int64) { binary.BigEndian.PutUint64(b[offBaseOffset:], uint64(o)) }

// SetPartitionLeaderEpoch overwrites partitionLeaderEpoch in place. The
// field is outside the CRC, so the CRC stays valid.
func (b Batch) SetPartitionLeaderEpoch(e int32) {
	binary.BigEndian.PutUint32(b[offLeaderEpoch:], uint32(e))
}

// SetLogAppendTime marks the batch as LogAppendTime and sets maxTimestamp to
// ts, then recomputes the CRC, as Kafka's LogValidator does (through
// DefaultRecordBatch.setMaxTimestamp) when the topic uses
// message.timestamp.type=LogAppendTime. The firstTimestamp and the record
// deltas are left alone: consumers use maxTimestamp for every record of a
// LogAppendTime batch. If nothing changes nothing is written.
func (b Batch) SetLogAppendTime(ts int64) { b.SetMaxTimestamp(TimestampLogAppendTime, ts) }

// SetMaxTimestamp sets the timestamp-type bit and maxTimestamp and
// recomputes the CRC, like Kafka's DefaultRecordBatch.setMaxTimestamp. For
// CreateTime topics Kafka's leader overwrites the producer's maxTimestamp
// with the largest record timestamp it computed; for LogAppendTime see
// SetLogAppendTime. When the type and the value are already those, nothing
// is written (the CRC is not recomputed).
func (b Batch) SetMaxTimestamp(t TimestampType, ts int64) {
	if b.TimestampType() == t && b.MaxTimestamp() == ts {
		return
	}
	attrs := uint16(b.Attributes()) &^ attrTimestampType
	if t == TimestampLogAppendTime {
		attrs |= attrTimestampType
	}
	binary.BigEndian.PutUint16(b[offAttributes:], attrs)
	binary.BigEndian.PutUint64(b[offMaxTimestamp:], uint64(ts))
	b.UpdateCRC()
}

// ComputeCRC returns the CRC-32C of the bytes covered by the CRC (attributes
// to the end of the batch). It does not change the batch.
func (b Batch) ComputeCRC() uint32 { return crc32c(b[offAttributes:]) }

// UpdateCRC recomputes the CRC-32C and stores it in the crc field.
func (b Batch) UpdateCRC() { binary.BigEndian.PutUint32(b[offCRC:], b.ComputeCRC()) }

// CRCValid reports whether the stored CRC matches the contents.
func (b Batch) CRCValid() bool { return b.CRC() == b.ComputeCRC() }

// String formats the header fields for logs and tools.
func (b Batch) String() string {
	if len(b) < HeaderSize {
		return fmt.Sprintf("record.Batch(short, %d bytes)", len(b))
	}
	return fmt.Sprintf("baseOffset: %d lastOffset: %d count: %d baseSequence: %d lastSequence: %d "+
		"producerId: %d producerEpoch: %d partitionLeaderEpoch: %d isTransactional: %t isControl: %t "+
		"%s: %d size: %d magic: %d compresscodec: %s crc: %d",
		b.BaseOffset(), b.LastOffset(), b.NumRecords(), b.BaseSequence(), b.LastSequence(),
		b.ProducerID(), b.ProducerEpoch(), b.PartitionLeaderEpoch(), b.IsTransactional(), b.IsControl(),
		b.TimestampType(), b.MaxTimestamp(), b.Size(), b.Magic(), b.Compression(), b.CRC())
}
