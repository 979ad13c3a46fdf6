package replay

import (
	"context"
	"errors"
	"fmt"

	"samsa/broker/record"
)

// ErrNoProgress reports a read below the end offset that returned nothing at or past the
// position: without it a load would loop forever on a log that lost data under it.
var ErrNoProgress = errors.New("replay: read made no progress")

// ReadFunc reads whole record batches starting with the one holding offset, at most about
// maxBytes (at least one batch), and returns the log end offset at the time of the read. It
// returns no batches when offset is at or past the end. The caller owns batches.
type ReadFunc func(offset int64, maxBytes int) (batches []byte, end int64, err error)

// BatchFunc applies one batch. from is the offset the replay had reached when the batch was
// read: a batch can start below it (a read returns the whole batch holding from), and a
// coordinator that must not apply a record twice skips records below from. Control batches are
// passed too. An error stops the replay and is returned as is.
type BatchFunc func(b record.Batch, from int64) error

// Partition replays a partition from offset 0 to the end reported by the first read, calling
// apply for each batch whose last offset is at or past the replay's position, in log order.
// Errors: ctx's error when it ends; the read's error wrapped with the offset; a malformed batch
// (record.NextBatch's error); ErrNoProgress; or apply's error.
func Partition(ctx context.Context, read ReadFunc, maxBytes int, apply BatchFunc) error {
	var off int64
	end := int64(-1)
	for {
		if err := ctx.Err(); err != nil {
			return err
		}
		batches, readEnd, err := read(off, maxBytes)
		if err != nil {
			return fmt.Errorf("read at %d: %w", off, err)
		}
		if end < 0 {
			end = readEnd
		}
		if off >= end {
			return nil
		}
		if len(batches) == 0 {
			return fmt.Errorf("%w (offset %d, end %d)", ErrNoProgress, off, end)
		}
		next, err := applyBatches(batches, off, apply)
		if err != nil {
			return err
		}
		if next <= off {
			return fmt.Errorf("%w (offset %d)", ErrNoProgress, off)
		}
		off = next
		if off >= end {
			return nil
		}
	}
}

// applyBatches applies every batch of one read that reaches off and returns the offset after
// the last one applied (off when none was).
func applyBatches(batches []byte, off int64, apply BatchFunc) (int64, error) {
	next := off
	for rest := batches; len(rest) > 0; {
		b, r, err := record.NextBatch(rest)
		if err != nil {
			return 0, err
		}
		rest = r
		if b.LastOffset() < off {
			continue // already applied from an earlier read
		}
		next = b.LastOffset() + 1
		if err := apply(b, off); err != nil {
			return 0, err
		}
	}
	return next, nil
}
