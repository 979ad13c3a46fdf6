package record

import (
	"encoding/binary"
	"errors"
	"fmt"
	"io"
)

// NextBatch splits the first record batch v2 off buf.
//
// It checks only the framing: that 12 bytes of baseOffset+batchLength are
// present, that batchLength is within [MinBatchLength, MaxBatchLength], that
// the magic byte is 2 and that the whole batch is present. It does not check
// the CRC or the records (see Batch.Validate).
//
// Errors:
//   - ErrShortBatch when fewer than LogOverhead bytes remain or fewer than
//     LogOverhead+batchLength (a torn write, a partial trailing batch);
//   - ErrCorrupt when batchLength is below MinBatchLength or above
//     MaxBatchLength, or the magic byte (when present) is not 2.
//
// On error b and rest are nil. An empty buf returns ErrShortBatch too; loop
// with `for len(buf) > 0`.
func NextBatch(buf []byte) (b Batch, rest []byte, err error) {
	if len(buf) < LogOverhead {
		return nil, nil, fmt.Errorf("%w: %d bytes left, need %d", ErrShortBatch, len(buf), LogOverhead)
	}
	length := int32(binary.BigEndian.Uint32(buf[offBatchLength:]))
	if length < MinBatchLength || length > MaxBatchLength {
		return nil, nil, corruptf("batch length %d out of range [%d, %d]", length, MinBatchLength, MaxBatchLength)
	}
	if len(buf) > offMagic && int8(buf[offMagic]) != MagicV2 {
		return nil, nil, corruptf("magic %d, want %d", int8(buf[offMagic]), MagicV2)
	}
	size := LogOverhead + int(length)
	if len(buf) < size {
		return nil, nil, fmt.Errorf("%w: batch of %d bytes, %d present", ErrShortBatch, size, len(buf))
	}
	return Batch(buf[:size:size]), buf[size:], nil
}

// BatchHeader is the decoded header of a record batch v2: every field up to
// and including the records count. Storage uses it to scan segments (with
// ReadHeaderAt) without reading the records.
type BatchHeader struct {
	BaseOffset           int64
	BatchLength          int32
	PartitionLeaderEpoch int32
	Magic                int8
	CRC                  uint32
	Attributes           int16
	LastOffsetDelta      int32
	FirstTimestamp       int64
	MaxTimestamp         int64
	ProducerID           int64
	ProducerEpoch        int16
	BaseSequence         int32
	NumRecords           int32
}

// Header decodes the header fields of b (no allocation).
func (b Batch) Header() BatchHeader {
	return BatchHeader{
		BaseOffset:           b.BaseOffset(),
		BatchLength:          b.BatchLength(),
		PartitionLeaderEpoch: b.PartitionLeaderEpoch(),
		Magic:                b.Magic(),
		CRC:                  b.CRC(),
		Attributes:           b.Attributes(),
		LastOffsetDelta:      b.LastOffsetDelta(),
		FirstTimestamp:       b.FirstTimestamp(),
		MaxTimestamp:         b.MaxTimestamp(),
		ProducerID:           b.ProducerID(),
		ProducerEpoch:        b.ProducerEpoch(),
		BaseSequence:         b.BaseSequence(),
		NumRecords:           b.NumRecords(),
	}
}

// Size returns the total size of the batch (LogOverhead+BatchLength).
func (h BatchHeader) Size() int64 { return LogOverhead + int64(h.BatchLength) }

// LastOffset returns BaseOffset + LastOffsetDelta.
func (h BatchHeader) LastOffset() int64 { return h.BaseOffset + int64(h.LastOffsetDelta) }

// NextOffset returns LastOffset + 1.
func (h BatchHeader) NextOffset() int64 { return h.LastOffset() + 1 }

// Compression returns the codec of the records section.
func (h BatchHeader) Compression() Codec { return Codec(h.Attributes & attrCompressionMask) }

// TimestampType returns CreateTime or LogAppendTime.
func (h BatchHeader) TimestampType() TimestampType {
	if h.Attributes&attrTimestampType != 0 {
		return TimestampLogAppendTime
	}
	return TimestampCreateTime
}

// IsTransactional reports the transactional attribute bit.
func (h BatchHeader) IsTransactional() bool { return h.Attributes&attrTransactional != 0 }

// IsControl reports the control attribute bit.
func (h BatchHeader) IsControl() bool { return h.Attributes&attrControl != 0 }

// ReadHeaderAt reads the HeaderSize (61) header bytes of the batch that
// starts at pos in r and decodes them. It checks the framing exactly as
// NextBatch does, except that it cannot know whether the rest of the batch
// is present: callers compare pos+h.Size() with the file size (storage's
// recovery and index rebuild do), then read and Validate the whole batch
// when they need the CRC checked.
//
// Errors: ErrShortBatch when r ends before the 61 header bytes (io.EOF or
// io.ErrUnexpectedEOF from r), ErrCorrupt for a bad length or magic, and
// any other read error from r unchanged (wrapped).
func ReadHeaderAt(r io.ReaderAt, pos int64) (BatchHeader, error) {
	var buf [HeaderSize]byte
	n, err := r.ReadAt(buf[:], pos)
	if n < HeaderSize && err != nil && !errors.Is(err, io.EOF) && !errors.Is(err, io.ErrUnexpectedEOF) {
		return BatchHeader{}, fmt.Errorf("record: read header at %d: %w", pos, err)
	}
	return ParseHeader(buf[:n], pos)
}

// ParseHeader decodes the header of the batch v2 at the start of buf, which
// need not hold the rest of the batch, with the checks of ReadHeaderAt: pos
// is where buf starts in its file, for error messages only. It lets a
// reader that fetched several headers' worth of a segment in one read
// decode them without a read each.
//
// Errors: ErrShortBatch when buf holds fewer than HeaderSize bytes (unless
// the bytes present already show a bad length or magic: ErrCorrupt), and
// ErrCorrupt for a batch length outside [MinBatchLength, MaxBatchLength] or
// a magic other than 2. It does not allocate unless it fails.
func ParseHeader(buf []byte, pos int64) (BatchHeader, error) {
	if len(buf) < HeaderSize {
		// Check what we have: a bad length is corruption even in a tail.
		if len(buf) >= LogOverhead {
			if _, _, ferr := NextBatch(buf); ferr != nil && !errors.Is(ferr, ErrShortBatch) {
				return BatchHeader{}, ferr
			}
		}
		return BatchHeader{}, fmt.Errorf("%w: %d header bytes at position %d", ErrShortBatch, len(buf), pos)
	}
	length := int32(binary.BigEndian.Uint32(buf[offBatchLength:]))
	if length < MinBatchLength || length > MaxBatchLength {
		return BatchHeader{}, corruptf("batch length %d out of range at position %d", length, pos)
	}
	if int8(buf[offMagic]) != MagicV2 {
		return BatchHeader{}, corruptf("magic %d at position %d", int8(buf[offMagic]), pos)
	}
	return Batch(buf[:HeaderSize]).Header(), nil
}
