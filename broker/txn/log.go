package txn

import (
	"context"
	"errors"
	"time"

	"samsa/broker/record"
)

// Log is the coordinator's view of the __transaction_state partitions
// this broker leads (STYLE S1.4); the broker implements it over
// broker/replica.
type Log interface {
	// Append appends batch (one record batch v2, base offset 0) to
	// partition as its leader, with acks=all's check before the write
	// (the ISR at least min.insync.replicas), and returns the offset
	// after it without waiting for replication. Errors wrap ErrNotLeader,
	// ErrNotEnoughReplicas, ErrUnknownPartition where they apply.
	Append(partition int32, batch []byte) (next int64, err error)
	// WaitReplicated blocks until partition's high watermark reaches
	// next (an offset Append returned), timeout passes or ctx ends.
	// Errors wrap ErrNotLeader, ErrNotEnoughReplicas (the ISR shrank
	// below min.insync.replicas), ErrTimeout where they apply.
	WaitReplicated(ctx context.Context, partition int32, next int64, timeout time.Duration) error
	// ReadFrom returns whole batches of partition from the one holding
	// offset (at most about maxBytes, at least one batch) and the log end
	// offset at the time of the read.
	ReadFrom(partition int32, offset int64, maxBytes int) (ReadResult, error)
}

// ReadResult is what Log.ReadFrom returns.
type ReadResult struct {
	Batches []byte
	End     int64
}

// Errors a Log wraps so the coordinator answers with Kafka's codes.
var (
	ErrNotLeader         = errors.New("txn: not leader of the transaction state partition")
	ErrNotEnoughReplicas = errors.New("txn: not enough replicas for the transaction state partition")
	ErrTimeout           = errors.New("txn: transaction state append timed out")
	ErrUnknownPartition  = errors.New("txn: transaction state partition unknown")
)

// appendReplicated appends batch to partition and waits for its
// replication: acks=all, every write but Complete* (ops.go's write).
func appendReplicated(ctx context.Context, l Log, partition int32, batch []byte, timeout time.Duration) error {
	next, err := l.Append(partition, batch)
	if err != nil {
		return err
	}
	return l.WaitReplicated(ctx, partition, next, timeout)
}

// buildRecord encodes one __transaction_state record (value nil: a
// tombstone) as an uncompressed batch, as Kafka writes them.
func buildRecord(key, value []byte, nowMs int64) ([]byte, error) {
	b, err := record.Build(record.NewBuildHeader(0, nowMs), []record.Record{{Key: key, Value: value}}, record.CodecNone)
	if err != nil {
		return nil, err
	}
	return []byte(b), nil
}
