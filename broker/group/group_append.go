package group

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/twmb/franz-go/pkg/kerr"
)

// appendOp is one batch the group writes to its offsets partition. The
// group keeps at most one append in flight so its records reach the log
// in the order it decided them.
type appendOp struct {
	batch []byte
	// write, when set, writes the op instead of batch (a transactional
	// offset batch takes its producer sequence at write time).
	write func(ctx context.Context) error
	// deadline is offsets.commit.timeout.ms after the op was queued: time
	// spent waiting behind earlier appends counts against it (Kafka
	// writes every commit at once, so its acks=all waits overlap and each
	// is answered within the timeout of its arrival; a queue that gave
	// each op a fresh timeout would answer the k-th queued commit after k
	// timeouts, while the client's heartbeats wait behind it on the same
	// connection).
	deadline time.Time
	// done runs on the group goroutine with the append's outcome.
	done func(err error)
	// abort runs on any goroutine when the group stopped before done
	// could run; it may only answer waiting callers.
	abort func(code int16)
}

// enqueueAppend queues op and starts it if nothing is in flight.
func (g *group) enqueueAppend(op *appendOp) {
	op.deadline = time.Now().Add(g.c.cfg.OffsetsCommitTimeout)
	g.appendQ = append(g.appendQ, op)
	g.maybeStartAppend()
}

// maybeStartAppend starts the next queued append in its own goroutine
// (owned by the Coordinator's WaitGroup); the outcome comes back through
// controlCh. An op whose deadline passed while it was queued is not
// written: it fails with ErrTimeout (REQUEST_TIMED_OUT), the answer its
// caller would have had from a timed-out replication wait.
func (g *group) maybeStartAppend() {
	if g.appending || len(g.appendQ) == 0 {
		return
	}
	op := g.appendQ[0]
	g.appendQ = g.appendQ[1:]
	g.appending = true
	g.c.goTracked(func() {
		// Real time, not g.c.clock: the deadline bounds real waits in the
		// OffsetLog (replication), as ctx deadlines do everywhere.
		ctx, cancel := context.WithDeadline(g.appendCtx, op.deadline)
		// Only the op's own deadline skips the write. A cancelled appendCtx
		// (the coordinator resigning or shutting down) still hands the batch
		// to the log, as before: the local write of a tombstone the group
		// already applied in memory must not be dropped by a shutdown that
		// races the append goroutine's start (Kafka issues that write inline).
		var err error
		if time.Now().Before(op.deadline) {
			err = op.run(ctx, g)
		} else {
			err = fmt.Errorf("%w: queued behind earlier appends for offsets.commit.timeout.ms", ErrTimeout)
		}
		cancel()
		select {
		case g.controlCh <- func() {
			g.appending = false
			op.done(err)
			g.maybeStartAppend()
		}:
		case <-g.done:
			op.abort(int16(g.exitCode.Load()))
		}
	})
}

// run hands op to the log: its own write if it has one, else its batch.
func (op *appendOp) run(ctx context.Context, g *group) error {
	if op.write != nil {
		return op.write(ctx)
	}
	_, err := g.c.olog.Append(ctx, g.partition, op.batch)
	return err
}

// appendErrorCode maps an OffsetLog.Append error to the code Kafka's
// GroupMetadataManager answers; commit selects the offset-commit mapping
// (too large → INVALID_COMMIT_OFFSET_SIZE) over the group-metadata one
// (→ UNKNOWN_SERVER_ERROR).
func appendErrorCode(err error, commit bool) int16 {
	switch {
	case err == nil:
		return 0
	case errors.Is(err, ErrNotLeader):
		return kerr.NotCoordinator.Code
	case errors.Is(err, ErrNotEnoughReplicas):
		return kerr.CoordinatorNotAvailable.Code
	case errors.Is(err, ErrTimeout), errors.Is(err, context.DeadlineExceeded):
		return kerr.RequestTimedOut.Code
	case errors.Is(err, context.Canceled):
		return kerr.NotCoordinator.Code
	case errors.Is(err, ErrRecordTooLarge) && commit:
		return kerr.InvalidCommitOffsetSize.Code
	default:
		return kerr.UnknownServerError.Code
	}
}

// storeGroupErrorCode maps the error of a group metadata write (Kafka's
// storeGroup): as appendErrorCode, except that a timed-out write answers
// REBALANCE_IN_PROGRESS, so members rejoin instead of retrying a sync.
func storeGroupErrorCode(err error) int16 {
	code := appendErrorCode(err, false)
	if code == kerr.RequestTimedOut.Code {
		return kerr.RebalanceInProgress.Code
	}
	return code
}
