package record

import (
	"errors"
	"fmt"
)

// Sentinel errors. Every error returned by this package wraps exactly one of
// them (with %w), so callers map them to Kafka error codes with errors.Is.
var (
	// ErrCorrupt means the bytes are not a well-formed batch or message:
	// CRC mismatch, unknown magic, impossible size, undecodable compressed
	// data. Kafka code: CORRUPT_MESSAGE (2).
	ErrCorrupt = errors.New("record: corrupt message")

	// ErrInvalidRecord means the batch is framed correctly (sizes, CRC) but
	// its records break the format rules: record count mismatch, offset
	// deltas not 0..n-1 in order, malformed varints, negative lengths.
	// Kafka code: INVALID_RECORD (87).
	ErrInvalidRecord = errors.New("record: invalid record")

	// ErrTooLarge means a batch or message exceeds the configured maximum
	// size. Kafka code: MESSAGE_TOO_LARGE (10).
	ErrTooLarge = errors.New("record: message too large")

	// ErrShortBatch means the buffer ends inside a batch: fewer than 12
	// bytes remain, or fewer than 12+batchLength. On disk this is a torn
	// write; on the wire a partial trailing batch (Fetch responses may end
	// with one, which consumers ignore).
	ErrShortBatch = errors.New("record: short batch")

	// ErrDecompressedTooLarge means decompressing a records section would
	// produce more bytes than the caller's limit (a decompression bomb, or
	// simply a batch larger than allowed). It wraps ErrCorrupt, so
	// errors.Is(err, ErrCorrupt) also holds.
	ErrDecompressedTooLarge = fmt.Errorf("record: decompressed size exceeds limit: %w", ErrCorrupt)
)

// corruptf returns an error wrapping ErrCorrupt.
func corruptf(format string, args ...any) error {
	return fmt.Errorf("%w: "+format, append([]any{ErrCorrupt}, args...)...)
}

// invalidf returns an error wrapping ErrInvalidRecord.
func invalidf(format string, args ...any) error {
	return fmt.Errorf("%w: "+format, append([]any{ErrInvalidRecord}, args...)...)
}

// ErrUnsupportedCompression means a codec the format version cannot carry:
// zstd in a magic 0 or 1 message, or any codec Kafka 2.8 does not know
// when converting. Kafka code: UNSUPPORTED_COMPRESSION_TYPE (76).
var ErrUnsupportedCompression = errors.New("record: unsupported compression type")
