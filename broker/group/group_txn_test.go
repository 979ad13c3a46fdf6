package group

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kerr"

	"samsa/internal/testwait"
	"samsa/kafka"
)

func txnCommit(t *testing.T, e *env, pid int64, epoch int16, offset int64) {
	t.Helper()
	codes := e.c.CommitTxnOffsets(context.Background(), TxnCommitRequest{Group: "tg", TransactionalID: "t1",
		ProducerID: pid, ProducerEpoch: epoch, Generation: -1,
		Offsets: []CommitOffset{{TopicPartition: kafka.TopicPartition{Topic: "in", Partition: 0}, Offset: offset, LeaderEpoch: -1}}})
	if len(codes) != 1 || codes[0] != 0 {
		t.Fatalf("TxnOffsetCommit: %v", codes)
	}
}

func fetchIn(t *testing.T, e *env) (int64, int16) {
	t.Helper()
	code, offs, codes := e.c.FetchOffsetsStable(context.Background(), "tg", []kafka.TopicPartition{{Topic: "in", Partition: 0}})
	if code != 0 || len(offs) != 1 {
		t.Fatalf("fetch: %d %v", code, offs)
	}
	return offs[0].Offset, codes[0]
}

// TestGroupTxnOffsetsCommitAndAbort: transactional offsets stay invisible
// (UNSTABLE_OFFSET_COMMIT with require_stable) until the COMMIT marker;
// ABORT drops them; the next transaction of the same epoch appends (its
// batch continues the producer's sequence, so the log accepts it).
func TestGroupTxnOffsetsCommitAndAbort(t *testing.T) {
	e := newEnv(t, testConfig())
	p := e.c.PartitionFor("tg")
	txnCommit(t, e, 42, 0, 10)
	if off, code := fetchIn(t, e); off != -1 || code != kerr.UnstableOffsetCommit.Code {
		t.Fatalf("pending: offset %d code %d", off, code)
	}
	e.c.CompleteTxnOffsets(42, []int32{p}, true)
	testwait.For(t, 10*time.Second, func() error {
		if off, code := fetchIn(t, e); off != 10 || code != 0 {
			return errf("offset %d code %d", off, code)
		}
		return nil
	})
	txnCommit(t, e, 42, 0, 20)
	e.c.CompleteTxnOffsets(42, []int32{p}, false)
	testwait.For(t, 10*time.Second, func() error {
		if off, code := fetchIn(t, e); off != 10 || code != 0 {
			return errf("after abort: offset %d code %d", off, code)
		}
		return nil
	})
}

// TestGroupTxnOffsetsReload: after a reload, offsets of a transaction
// whose COMMIT marker is in the log are committed, those of an aborted one
// are gone, and those still without a marker stay pending.
func TestGroupTxnOffsetsReload(t *testing.T) {
	e := newEnv(t, testConfig())
	p := e.c.PartitionFor("tg")
	marker := func(pid int64, epoch int16, commit bool) {
		t.Helper()
		// Markers come from the partition side (WriteTxnMarkers), which the log accepts as
		// control batches; a client-style append of one is refused.
		if err := e.olog.appendMarker(p, pid, epoch, commit); err != nil {
			t.Fatal(err)
		}
	}
	txnCommit(t, e, 7, 0, 5)
	marker(7, 0, true)
	txnCommit(t, e, 8, 0, 99)
	marker(8, 0, false)
	txnCommit(t, e, 9, 0, 50)
	e.restart()
	if off, code := fetchIn(t, e); off != -1 || code != kerr.UnstableOffsetCommit.Code {
		t.Fatalf("after reload with producer 9 pending: offset %d code %d", off, code)
	}
	code, offs := e.c.FetchOffsets(context.Background(), "tg", []kafka.TopicPartition{{Topic: "in", Partition: 0}})
	if code != 0 || offs[0].Offset != 5 {
		t.Fatalf("committed after reload: %d %v", code, offs)
	}
	e.c.CompleteTxnOffsets(9, []int32{p}, true)
	testwait.For(t, 10*time.Second, func() error {
		if off, code := fetchIn(t, e); off != 50 || code != 0 {
			return errf("offset %d code %d", off, code)
		}
		return nil
	})
	// The same producer's next transaction continues its sequence.
	txnCommit(t, e, 9, 0, 60)
}

func errf(format string, args ...any) error { return fmt.Errorf(format, args...) }

// TestGroupTxnOffsetsChecks: KIP-447's checks of TxnOffsetCommit v3: an
// unknown non-empty member id and a wrong generation are refused.
func TestGroupTxnOffsetsChecks(t *testing.T) {
	e := newEnv(t, testConfig())
	req := TxnCommitRequest{Group: "tg", TransactionalID: "t1", ProducerID: 1, ProducerEpoch: 0, Generation: -1,
		MemberID: "nobody", Offsets: []CommitOffset{{TopicPartition: kafka.TopicPartition{Topic: "in", Partition: 0}, Offset: 1, LeaderEpoch: -1}}}
	if codes := e.c.CommitTxnOffsets(context.Background(), req); codes[0] != kerr.UnknownMemberID.Code {
		t.Fatalf("unknown member: %v", codes)
	}
	req.MemberID, req.Generation = "", 3
	if codes := e.c.CommitTxnOffsets(context.Background(), req); codes[0] != kerr.IllegalGeneration.Code {
		t.Fatalf("wrong generation: %v", codes)
	}
	req.Generation = -1
	if codes := e.c.CommitTxnOffsets(context.Background(), req); codes[0] != 0 {
		t.Fatalf("v0-2 defaults: %v", codes)
	}
}
