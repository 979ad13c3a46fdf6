package record

import (
	"encoding/binary"
	"fmt"
)

// BuildHeader holds the batch-level fields Build writes. Fields computed
// from the records (batchLength, magic, CRC, compression bits, count) are
// not part of it.
type BuildHeader struct {
	BaseOffset           int64
	PartitionLeaderEpoch int32
	// FirstTimestamp is the base of the records' TimestampDelta.
	FirstTimestamp int64
	// MaxTimestamp is written as is for LogAppendTime batches (the append
	// time) and for batches without records; for CreateTime batches with
	// records Build computes FirstTimestamp + max(TimestampDelta).
	MaxTimestamp  int64
	TimestampType TimestampType
	Transactional bool
	Control       bool
	ProducerID    int64
	ProducerEpoch int16
	BaseSequence  int32
	// LastOffsetDelta overrides the last offset delta when it is larger
	// than the last record's OffsetDelta: the log cleaner keeps a batch's
	// original last offset after removing records. Required (>= 0) for
	// batches without records.
	LastOffsetDelta int32
}

// NewBuildHeader returns a BuildHeader for a non-idempotent CreateTime
// batch: no producer id, epoch or sequence, no leader epoch yet.
func NewBuildHeader(baseOffset, firstTimestamp int64) BuildHeader {
	return BuildHeader{
		BaseOffset:           baseOffset,
		PartitionLeaderEpoch: NoPartitionLeaderEpoch,
		FirstTimestamp:       firstTimestamp,
		MaxTimestamp:         firstTimestamp,
		ProducerID:           NoProducerID,
		ProducerEpoch:        NoProducerEpoch,
		BaseSequence:         NoSequence,
	}
}

// Build encodes a record batch v2 from records, compressing the records
// section with codec. The records' OffsetDelta values are written as
// given and must be non-negative and strictly increasing (ErrInvalidRecord
// otherwise); callers building a fresh batch number them 0..n-1. A batch
// whose encoding would exceed MaxBatchLength fails with ErrTooLarge, a codec
// other than none, gzip, snappy, lz4 or zstd with ErrUnsupportedCompression.
//
// The returned Batch owns its bytes and has a valid CRC.
func Build(h BuildHeader, records []Record, codec Codec) (Batch, error) {
	if codec < CodecNone || codec > CodecZstd {
		return nil, fmt.Errorf("%w: build: codec %d", ErrUnsupportedCompression, codec)
	}
	lastDelta := h.LastOffsetDelta
	maxTS := h.MaxTimestamp
	prev := int64(-1)
	size := 0
	for i := range records {
		r := &records[i]
		if int64(r.OffsetDelta) <= prev {
			return nil, invalidf("build: record %d has offset delta %d after %d", i, r.OffsetDelta, prev)
		}
		prev = int64(r.OffsetDelta)
		if err := checkRecordLengths(r); err != nil {
			return nil, fmt.Errorf("%w (record index %d)", err, i)
		}
		size += recordSize(r)
		if size > MaxBatchLength {
			return nil, fmt.Errorf("%w: build: records exceed %d bytes", ErrTooLarge, MaxBatchLength)
		}
		if ts := h.FirstTimestamp + r.TimestampDelta; h.TimestampType != TimestampLogAppendTime && (i == 0 || ts > maxTS) {
			maxTS = ts
		}
	}
	if n := len(records); n > 0 && records[n-1].OffsetDelta > lastDelta {
		lastDelta = records[n-1].OffsetDelta
	}
	if lastDelta < 0 {
		return nil, invalidf("build: negative last offset delta %d", lastDelta)
	}

	var buf []byte
	if codec == CodecNone {
		buf = make([]byte, HeaderSize, HeaderSize+size)
		for i := range records {
			buf = appendRecord(buf, &records[i])
		}
	} else {
		raw := make([]byte, 0, size)
		for i := range records {
			raw = appendRecord(raw, &records[i])
		}
		var err error
		if buf, err = compress(codec, make([]byte, HeaderSize, HeaderSize+size/2+64), raw); err != nil {
			return nil, err
		}
	}
	if len(buf)-LogOverhead > MaxBatchLength {
		return nil, fmt.Errorf("%w: build: batch of %d bytes", ErrTooLarge, len(buf))
	}

	attrs := uint16(codec)
	if h.TimestampType == TimestampLogAppendTime {
		attrs |= attrTimestampType
	}
	if h.Transactional {
		attrs |= attrTransactional
	}
	if h.Control {
		attrs |= attrControl
	}
	binary.BigEndian.PutUint64(buf[offBaseOffset:], uint64(h.BaseOffset))
	binary.BigEndian.PutUint32(buf[offBatchLength:], uint32(len(buf)-LogOverhead))
	binary.BigEndian.PutUint32(buf[offLeaderEpoch:], uint32(h.PartitionLeaderEpoch))
	buf[offMagic] = byte(MagicV2)
	binary.BigEndian.PutUint16(buf[offAttributes:], attrs)
	binary.BigEndian.PutUint32(buf[offLastOffsetDelta:], uint32(lastDelta))
	binary.BigEndian.PutUint64(buf[offFirstTimestamp:], uint64(h.FirstTimestamp))
	binary.BigEndian.PutUint64(buf[offMaxTimestamp:], uint64(maxTS))
	binary.BigEndian.PutUint64(buf[offProducerID:], uint64(h.ProducerID))
	binary.BigEndian.PutUint16(buf[offProducerEpoch:], uint16(h.ProducerEpoch))
	binary.BigEndian.PutUint32(buf[offBaseSequence:], uint32(h.BaseSequence))
	binary.BigEndian.PutUint32(buf[offNumRecords:], uint32(len(records)))
	b := Batch(buf)
	b.UpdateCRC()
	return b, nil
}

// checkRecordLengths rejects lengths a varint int32 cannot carry.
func checkRecordLengths(r *Record) error {
	const maxLen = 1<<31 - 1
	if len(r.Key) > maxLen || len(r.Value) > maxLen || len(r.Headers) > maxLen {
		return invalidf("build: field longer than %d bytes", maxLen)
	}
	for _, h := range r.Headers {
		if len(h.Key) > maxLen || len(h.Value) > maxLen {
			return invalidf("build: header longer than %d bytes", maxLen)
		}
	}
	return nil
}
