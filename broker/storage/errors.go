package storage

import (
	"errors"
	"fmt"
)

// Sentinel errors. Callers test them with errors.Is; broker/errors.go maps
// them to Kafka error codes. Validation failures of appended batches wrap the
// record package's sentinels instead (record.ErrCorrupt → CORRUPT_MESSAGE,
// record.ErrInvalidRecord → INVALID_RECORD, record.ErrTooLarge →
// MESSAGE_TOO_LARGE), so there is one source for each.
var (
	// ErrOffsetOutOfRange: a read or truncation asked for an offset outside
	// [LogStartOffset, LogEndOffset] (OFFSET_OUT_OF_RANGE).
	ErrOffsetOutOfRange = errors.New("storage: offset out of range")
	// ErrCorrupt marks data on disk that fails its checks (S5.8). Errors that
	// wrap it carry the file and byte position (see CorruptError).
	ErrCorrupt = errors.New("storage: corrupt data on disk")
	// ErrStorage marks a failed disk operation (KAFKA_STORAGE_ERROR). After
	// one, the log refuses further appends: whatever part of the write
	// reached the file is unknown until recovery.
	ErrStorage = errors.New("storage: disk operation failed")
	// ErrClosed: the log or manager was closed or deleted.
	ErrClosed = errors.New("storage: closed")
	// ErrOffsetsOutOfOrder: a follower append whose offsets do not increase
	// past the log end (Kafka's OffsetsOutOfOrderException /
	// UnexpectedAppendOffsetException; UNKNOWN_SERVER_ERROR on the wire).
	ErrOffsetsOutOfOrder = errors.New("storage: offsets out of order")
	// ErrInvalidTimestamp: a CreateTime batch's timestamp is further than
	// message.timestamp.difference.max.ms from now (INVALID_TIMESTAMP).
	ErrInvalidTimestamp = errors.New("storage: invalid timestamp")
	// ErrRecordBatchTooLarge: an append of more bytes than segment.bytes
	// can hold (RECORD_LIST_TOO_LARGE).
	ErrRecordBatchTooLarge = errors.New("storage: record batch larger than segment.bytes")
)

// CorruptError locates corrupt data on disk. errors.Is(err, ErrCorrupt) holds
// for it.
type CorruptError struct {
	Path string // file
	Pos  int64  // byte position of the first bad byte
	Err  error  // what check failed
}

// Error implements error.
func (e *CorruptError) Error() string {
	return fmt.Sprintf("storage: corrupt data in %s at position %d: %v", e.Path, e.Pos, e.Err)
}

// Unwrap returns ErrCorrupt and the cause.
func (e *CorruptError) Unwrap() []error { return []error{ErrCorrupt, e.Err} }

// ioError is a failed disk operation; it matches ErrStorage and its cause.
type ioError struct {
	op  string
	err error
}

func (e *ioError) Error() string   { return "storage: " + e.op + ": " + e.err.Error() }
func (e *ioError) Unwrap() []error { return []error{ErrStorage, e.err} }

// storageError wraps an I/O error so that it matches ErrStorage.
func storageError(op string, err error) error {
	if err == nil || errors.Is(err, ErrStorage) {
		return err
	}
	return &ioError{op: op, err: err}
}
