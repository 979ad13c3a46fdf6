package group

import (
	"context"
	"errors"
)

// OffsetLog is the coordinator's view of the __consumer_offsets partitions
// this broker leads (STYLE S1.4). The broker implements it over
// broker/replica; tests implement it over broker/storage.
type OffsetLog interface {
	// Append appends batch (one record batch v2 built with record.Build,
	// base offset 0) to partition as its leader, with acks=all semantics,
	// and blocks until the batch is committed (below the high watermark),
	// ctx ends, or it fails. It returns the batch's assigned base offset.
	// Errors should wrap ErrNotLeader, ErrNotEnoughReplicas, ErrTimeout or
	// ErrRecordTooLarge where they apply; anything else is reported to
	// clients as UNKNOWN_SERVER_ERROR.
	Append(ctx context.Context, partition int32, batch []byte) (int64, error)
	// ReadFrom returns whole record batches of partition starting with the
	// one holding offset (an offset below the log start offset reads from
	// the log start: loading asks for offset 0), at most about maxBytes
	// (but at least one batch),
	// and the offset loading must reach: the log end offset when the read
	// started. An empty Batches with offset >= End means the end. Errors
	// should wrap ErrNotLeader when the partition is not (or no longer)
	// led here. The caller owns Batches.
	ReadFrom(partition int32, offset int64, maxBytes int) (ReadResult, error)
}

// ReadResult is what OffsetLog.ReadFrom returns.
type ReadResult struct {
	Batches []byte // zero or more whole record batches v2
	End     int64  // log end offset at the time of the read
}

// Errors an OffsetLog wraps so the coordinator can answer with Kafka's
// codes (GroupMetadataManager's mapping of append errors).
var (
	// ErrNotLeader: this broker does not lead the partition (→ NOT_COORDINATOR).
	ErrNotLeader = errors.New("group: not leader of the offsets partition")
	// ErrNotEnoughReplicas: too few in-sync replicas (→ COORDINATOR_NOT_AVAILABLE).
	ErrNotEnoughReplicas = errors.New("group: not enough replicas for the offsets partition")
	// ErrTimeout: replication did not finish in offsets.commit.timeout.ms
	// (→ REQUEST_TIMED_OUT).
	ErrTimeout = errors.New("group: offsets append timed out")
	// ErrRecordTooLarge: the batch exceeds the partition's limits
	// (→ INVALID_COMMIT_OFFSET_SIZE for commits, UNKNOWN_SERVER_ERROR for
	// group metadata).
	ErrRecordTooLarge = errors.New("group: offsets record too large")
	// ErrAppended wraps an error that came after the batch reached the
	// leader's log (its replication wait failed): the producer sequence
	// of a transactional offset batch has advanced (group_txn.go).
	ErrAppended = errors.New("group: appended to the leader's log")
)
