package record

import "fmt"

// Limits configures Validate.
type Limits struct {
	// MaxBatchBytes is the largest allowed batch size in bytes including
	// LogOverhead (Kafka's message.max.bytes check compares the batch
	// size, LogOverhead included). 0 means no limit besides
	// MaxBatchLength. A larger batch fails with ErrTooLarge.
	MaxBatchBytes int

	// Deep makes Validate decode every record (decompressing as needed)
	// and check the record count and offset deltas. Without it only the
	// framing and CRC are checked, which costs one CRC-32C pass.
	Deep bool

	// MaxDecompressed caps the decompressed records section for Deep
	// validation; 0 means DefaultMaxDecompressed.
	MaxDecompressed int

	// AllowOffsetGaps relaxes the offset rules for batches that did not
	// come from a producer (replication, the log cleaner): offset deltas
	// must only increase strictly and stay within [0, LastOffsetDelta],
	// and NumRecords may be smaller than LastOffsetDelta+1 (compaction
	// removes records but keeps the batch's last offset). Producer
	// batches (false) must have deltas exactly 0..n-1 with
	// LastOffsetDelta == n-1, as Kafka's LogValidator requires.
	AllowOffsetGaps bool
}

// Validate checks b against the limits:
//
//   - size: len(b) equals LogOverhead+BatchLength, BatchLength is at least
//     MinBatchLength, the size is within MaxBatchBytes (ErrTooLarge);
//   - magic is 2 and the CRC-32C matches (ErrCorrupt);
//   - the compression codec is known and NumRecords is not negative
//     (ErrCorrupt / ErrInvalidRecord);
//   - with Deep: every record decodes, the count matches NumRecords, no
//     bytes follow the last record, offset deltas follow the rules of
//     AllowOffsetGaps (ErrInvalidRecord); a records section that does not
//     decompress is ErrCorrupt, one over MaxDecompressed is
//     ErrDecompressedTooLarge.
//
// Producer-policy checks that depend on the request (control batches from
// clients, sequence numbers, timestamps, compacted topics needing keys) are
// the caller's.
func (b Batch) Validate(l Limits) error {
	if len(b) < HeaderSize {
		return corruptf("batch of %d bytes is shorter than the %d-byte header", len(b), HeaderSize)
	}
	if bl := b.BatchLength(); bl < MinBatchLength || int64(len(b)) != LogOverhead+int64(bl) {
		return corruptf("batch length %d does not match %d bytes", bl, len(b))
	}
	if l.MaxBatchBytes > 0 && len(b) > l.MaxBatchBytes {
		return fmt.Errorf("%w: batch of %d bytes exceeds %d", ErrTooLarge, len(b), l.MaxBatchBytes)
	}
	if m := b.Magic(); m != MagicV2 {
		return corruptf("magic %d, want %d", m, MagicV2)
	}
	if stored, computed := b.CRC(), b.ComputeCRC(); stored != computed {
		return corruptf("batch at offset %d: CRC %08x, computed %08x", b.BaseOffset(), stored, computed)
	}
	if c := b.Compression(); c > CodecZstd {
		return corruptf("unknown compression codec %d", c)
	}
	count, last := b.NumRecords(), b.LastOffsetDelta()
	if count < 0 {
		return invalidf("negative record count %d", count)
	}
	if last < 0 {
		return invalidf("negative last offset delta %d", last)
	}
	if !l.AllowOffsetGaps && count != last+1 {
		// Kafka: "Inconsistent batch offset range and record count". An
		// empty producer batch has count 0 and lastOffsetDelta 0: also
		// invalid ("Invalid reported count for record batch").
		return invalidf("record count %d does not match last offset delta %d", count, last)
	}
	if l.AllowOffsetGaps && int64(count) > int64(last)+1 {
		return invalidf("record count %d exceeds offset range %d", count, int64(last)+1)
	}
	if !l.Deep {
		return nil
	}
	return b.validateRecords(l)
}

func (b Batch) validateRecords(l Limits) error {
	var it RecordIter
	if err := b.initIter(&it, l.MaxDecompressed); err != nil {
		return err
	}
	// Fast path: walk the records in place (no Record values, no
	// allocation). Only a rejected batch pays for the decoding walk that
	// names the problem.
	if walkRecords(it.data, it.remaining, b.LastOffsetDelta(), l.AllowOffsetGaps) {
		return nil
	}
	return b.validateRecordsSlow(&it, l)
}

// validateRecordsSlow decodes every record of it to find and describe the
// first violation; it returns nil only if walkRecords was wrong to reject.
func (b Batch) validateRecordsSlow(it *RecordIter, l Limits) error {
	var r Record
	prev := int32(-1)
	last := b.LastOffsetDelta()
	for it.Next(&r) {
		d := r.OffsetDelta
		switch {
		case !l.AllowOffsetGaps && d != prev+1:
			return invalidf("batch at offset %d: record %d has offset delta %d", b.BaseOffset(), it.index-1, d)
		case d <= prev || d > last:
			return invalidf("batch at offset %d: record %d has offset delta %d after %d (last %d)",
				b.BaseOffset(), it.index-1, d, prev, last)
		}
		prev = d
	}
	if err := it.Err(); err != nil {
		return fmt.Errorf("%w (batch at offset %d)", err, b.BaseOffset())
	}
	return invalidf("batch at offset %d: records rejected by the in-place walk", b.BaseOffset())
}
